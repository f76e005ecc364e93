#!/bin/bash
# Issue 48: the 8-bit sums in integers, two lanes a word (benchmarks/candidates/
# u8_swar.patch), against the package's template on one GPU. The package's vec winners
# at 8192^2 (run_no_cvt.sh's six configurations of the five lifted kernels, and
# prewitt_u8_s16 at VX 16 too) in both templates, five alternating rounds with the float4 copy (benchmarks/template_ab.py),
# then NVIDIA's own PTX of gauss_u8_rte at VX 16 and prewitt_u8_s16 at VX 8 in both
# (ptx_int_loads.py --bodies: instructions, loads and int-to-float cvt per output).
# blur_u8 and binomial_u16 keep the package's code in the candidate (weights 1/9,
# 16-bit lanes): their rows are the A/B's control (ratio 1 expected).
#
# From the project root on the GPU host (about 5 minutes; under 8):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/lift/u8_math/run_u8_math.sh
# Smoke test on PoCL (256^2; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/u8_math_smoke DEVICE=pthread SIZE=16 ROUNDS=1 \
#     BUDGET=900 SCALE=3 bash benchmarks/results/lift/u8_math/run_u8_math.sh
#
# Each step has its own time limit, cut to what is left of BUDGET seconds; the A/B's is
# 240 s (run_no_cvt.sh's verification of 6 configurations x 2 templates at 8192^2 took
# more than 70 s on 2026-11-30; this one verifies 7). Writes three files: $OUT/rc.txt
# (each step's exit status and time), $OUT/u8_math.log (the A/B's and the PTX steps'
# output, outside the archive) and $OUT/u8_math.tar.gz (defs/, ab-u8_swar/
# template_ab.{md,json}, ptx-*.md, logs).
set -u
dev=${DEVICE:-${1:-NVIDIA}}
size=${SIZE:-512} # template_ab's: 2D arrays 16 x this square (512: 8192^2)
rounds=${ROUNDS:-5}
budget=${BUDGET:-420}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 3)
start=$(date +%s)
mkdir -p "$OUT/defs"
D=$OUT/defs
PATCH=benchmarks/candidates/u8_swar.patch
LOG=$(mktemp "${TMPDIR:-/tmp}/u8_math.XXXXXX") # becomes $OUT/u8_math.log after packing

. benchmarks/step_budget.sh # left N: the seconds a step may take; pack NAME

. benchmarks/results/lift/int_defs.sh # lift_five, WINNERS
lift_five
configs=("${WINNERS[@]}" --config prewitt_u8_s16:WX=8,WY=4,BX=16,VX=16,CX=2)

timeout "$(left 240)" python3 benchmarks/template_ab.py "$OUT/ab-u8_swar" --variant "$PATCH" \
  --kernels $D/blur_u8.stencil.yaml $D/gauss_u8_rte.stencil.yaml $D/smooth_s8.stencil.yaml \
  $D/binomial_u16.stencil.yaml $D/prewitt_u8_s16.stencil.yaml --device "$dev" \
  --size "$size" --rounds "$rounds" --copy "${configs[@]}" > "$OUT/ab-u8_swar.log" 2>&1
echo "ab-u8_swar rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/ab-u8_swar/rendered"
{ echo "== ab-u8_swar"; tail -c 20000 "$OUT/ab-u8_swar.log"; } >> "$LOG"

ptx() { # ptx NAME KERNEL VX CONFIG [--template=FILE]: NVIDIA's PTX of one kernel
  local name=$1 kernel=$2 vx=$3 cfg=$4
  shift 4
  case "$dev" in
    *NVIDIA* | *nvidia*) ;;
    *) echo "ptx $name: skipped (no PTX from $dev)" >> "$OUT/rc.txt"; return ;;
  esac
  timeout "$(left 20)" python3 benchmarks/ptx_int_loads.py $D/$kernel.stencil.yaml \
    --device "$dev" --bodies --vx "$vx" --config "$cfg" "$@" > "$OUT/ptx-$name.md" 2>&1
  echo "ptx $name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  { echo "== ptx $name"; cat "$OUT/ptx-$name.md"; } >> "$LOG"
}
ptx gauss-package gauss_u8_rte 16 WX=8,WY=4,CX=2
ptx gauss-u8_swar gauss_u8_rte 16 WX=8,WY=4,CX=2 --template=$PATCH
ptx prewitt-package prewitt_u8_s16 8 WX=16,WY=8,CX=4
ptx prewitt-u8_swar prewitt_u8_s16 8 WX=16,WY=8,CX=4 --template=$PATCH
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
# the device tool brings back at most 8 files: rc.txt, the log, and one archive
pack u8_math
mv "$LOG" "$OUT/u8_math.log"
