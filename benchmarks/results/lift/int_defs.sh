# Sourced by the lift device scripts (no_cvt/run_no_cvt.sh, clamp_rows/run_clamp_rows.sh,
# u8_math/run_u8_math.sh, conv_hoist/run_conv_hoist.sh), from the project root, after step_budget.sh and with
# OUT, D (the definitions' folder) and start set.
# lift_five: the five integer kernels the A/Bs take (blur_u8, gauss_u8_rte,
# smooth_s8, binomial_u16, prewitt_u8_s16); WINNERS: their package's vec winners at
# 8192^2 (gtune run --technique vec, 150 configurations), and blur_u8's and prewitt's
# of the int_words A/B, as template_ab.py --config arguments.
# lift_as NAME SOURCE SIZE FLAGS...: stencils/plain/SOURCE lifted at SIZE with FLAGS
# (as stencils/plain/manifest.yaml lifts it) into D/NAME.stencil.yaml; its status and
# time in OUT/rc.txt. (conv_hoist/run_conv_hoist.sh lifts its kernels with it too.)
lift_as() {
  local n=$1 src=$2 at=$3
  shift 3
  timeout "$(left 20)" python3 -m gtune lift stencils/plain/$src --size "$at" "$@" \
    -o $D/$n.stencil.yaml >> "$OUT/lift.log" 2>&1
  echo "lift $n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}
# lift NAME XS YS: stencils/plain/NAME.cl lifted at 32x24 (its width and height
# scalars XS and YS), as int_words.md's "Next: on the H200" lifts them.
lift() {
  lift_as "$1" "$1.cl" 32x24 --scalar "$2=NX" --scalar "$3=NY" --default WX=16,WY=8
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
