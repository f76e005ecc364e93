#!/bin/bash
# Issue 48: whole rim vectors for the clamp boundary on one GPU (the candidate
# clamp_rim, the package's code since: RIM, RIN, BY and SEP offered to clamp kernels;
# clamp_rim.py ab renders both sides from the package's template). The lifted blur_clamp
# (5x5 binomial, clamp, 8192^2): the package's H200 winner before the change (2D
# streaming, VX 16, SEP 1: ../h200-all/lift_corpus.json's lifted_config, 160.6 us there)
# and a vec configuration at RIM 0 (edge vectors lane by lane, no SEP, no row blocks)
# against vec + RIM=1 configurations (SEP 1 with BY 4, the shapes near the interior
# blur5's H200 best, 142.3 us; RIN 1, VX 8, and SEP 0 / BY 1 to see what each adds),
# all verified on the device against the numpy reference first, then five alternating
# rounds with the float4 copy (clamp_rim.py ab).
#
# From the project root on the GPU host (about 2-3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/lift/clamp_rim/run_clamp_rim.sh
# Smoke test on PoCL (1024^2: the configurations are up to 1024 wide in x; the venv's
# python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/clamp_rim_smoke DEVICE=pthread SIZE=64 ROUNDS=1 \
#     BUDGET=900 SCALE=4 bash benchmarks/results/lift/clamp_rim/run_clamp_rim.sh
#
# Each step has its own time limit, cut to what is left of BUDGET seconds (the A/B's
# 200 s: 9 configurations verified at 8192^2). Writes $OUT/rc.txt (each step's exit
# status and time), $OUT/clamp_rim.log (the A/B's output, outside the archive) and
# $OUT/clamp_rim.tar.gz (defs/, ab/clamp_rim_ab.{md,json}, logs).
set -u
dev=${DEVICE:-${1:-NVIDIA}}
size=${SIZE:-512} # 2D arrays 16 x this square (512: 8192^2)
rounds=${ROUNDS:-5}
budget=${BUDGET:-240}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 4)
start=$(date +%s)
mkdir -p "$OUT/defs"
D=$OUT/defs
LOG=$(mktemp "${TMPDIR:-/tmp}/clamp_rim.XXXXXX") # becomes $OUT/clamp_rim.log after packing

. benchmarks/step_budget.sh # left N: the seconds a step may take; pack NAME

. benchmarks/results/lift/int_defs.sh # lift_as NAME SOURCE SIZE FLAGS...
lift_as blur_clamp blur_clamp.cl 32x16 --default WX=16,WY=16 --device "$dev"

# the package's H200 winner before the change, and vec at the RIM=1 shape (RIM 0)
WINNER=WX=64,WY=4,BX=16,VX=16,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=64,SEP=1
SHAPE=WX=128,WY=4,BX=4,VX=4,CX=2,CY=1
package=(--package $WINNER --package $SHAPE,SEP=0)
# vec with RIM 1 (the candidate's side; the package's code since)
candidate=(
  --candidate WX=128,WY=1,BX=4,VX=4,CX=2,CY=1,RIM=1,SEP=1,BY=4,RIN=0
  --candidate $SHAPE,RIM=1,SEP=1,BY=4,RIN=0
  --candidate $SHAPE,RIM=1,SEP=1,BY=4,RIN=1
  --candidate WX=64,WY=8,BX=4,VX=4,CX=1,CY=1,RIM=1,SEP=1,BY=4,RIN=0
  --candidate WX=64,WY=4,BX=8,VX=8,CX=1,CY=1,RIM=1,SEP=1,BY=4,RIN=0
  --candidate $SHAPE,RIM=1,SEP=0,BY=4,RIN=0
  --candidate $SHAPE,RIM=1,SEP=0,BY=1,RIN=0
)

timeout "$(left 200)" python3 benchmarks/candidates/clamp_rim.py ab "$OUT/ab" \
  --kernel $D/blur_clamp.stencil.yaml --device "$dev" --size "$size" --rounds "$rounds" \
  --copy "${package[@]}" "${candidate[@]}" > "$OUT/ab.log" 2>&1
echo "ab rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/ab/rendered"
{ echo "== ab"; tail -c 20000 "$OUT/ab.log"; } >> "$LOG"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
# the device tool brings back at most 8 files: rc.txt, the log, and one archive
pack clamp_rim
mv "$LOG" "$OUT/clamp_rim.log"
