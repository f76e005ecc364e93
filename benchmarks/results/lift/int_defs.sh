# Sourced by the integer-kernel device scripts (no_cvt/run_no_cvt.sh,
# clamp_rows/run_clamp_rows.sh), from the project root, after step_budget.sh and with
# OUT, D (the definitions' folder) and start set.
# lift NAME XS YS: stencils/plain/NAME.cl lifted at 32x24 (its width and height
# scalars XS and YS) into D/NAME.stencil.yaml, as int_words.md's "Next: on the H200"
# lifts them; its status and time in OUT/rc.txt.
lift() {
  timeout "$(left 20)" python3 -m gtune lift stencils/plain/$1.cl --size 32x24 --scalar $2=NX \
    --scalar $3=NY --default WX=16,WY=8 -o $D/$1.stencil.yaml >> "$OUT/lift.log" 2>&1
  echo "lift $1 rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}
