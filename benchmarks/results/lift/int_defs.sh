# Sourced by the integer-kernel device scripts (no_cvt/run_no_cvt.sh,
# clamp_rows/run_clamp_rows.sh), from the project root, after step_budget.sh and with
# OUT, D (the definitions' folder) and start set.
# lift_five: the five integer kernels the A/Bs take (blur_u8, gauss_u8_rte,
# smooth_s8, binomial_u16, prewitt_u8_s16); WINNERS: their package's vec winners at
# 8192^2 (gtune run --technique vec, 150 configurations), and blur_u8's and prewitt's
# of the int_words A/B, as template_ab.py --config arguments.
# lift NAME XS YS: stencils/plain/NAME.cl lifted at 32x24 (its width and height
# scalars XS and YS) into D/NAME.stencil.yaml, as int_words.md's "Next: on the H200"
# lifts them; its status and time in OUT/rc.txt.
lift() {
  timeout "$(left 20)" python3 -m gtune lift stencils/plain/$1.cl --size 32x24 --scalar $2=NX \
    --scalar $3=NY --default WX=16,WY=8 -o $D/$1.stencil.yaml >> "$OUT/lift.log" 2>&1
  echo "lift $1 rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}
lift_five() {
  lift blur_u8 width height
  lift gauss_u8_rte cols rows
  lift smooth_s8 nx ny
  lift binomial_u16 w h
  lift prewitt_u8_s16 w h
}
WINNERS=(
  --config blur_u8:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
  --config blur_u8:WX=16,WY=8,BX=8,VX=8,CX=4
  --config gauss_u8_rte:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
  --config smooth_s8:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,RIM=0,RIN=0
  --config binomial_u16:WX=16,WY=4,BX=8,VX=8,CX=1,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
  --config prewitt_u8_s16:WX=16,WY=8,BX=8,VX=8,CX=4
)
