#!/bin/bash
# Issue 48: the weights of a run-time weights array read once a work-item (the package's
# template since this A/B kept it) against the template from before that hoist, on one
# GPU. The template before it ($BEFORE: commit 6859453's stencil.cl, written here from
# git when BEFORE is not set; a host without the repository's history is given the file)
# is the variant, so each ratio is before / package, the inverse of the run recorded in
# h200/ (made when the hoist was the candidate benchmarks/candidates/wq_hoist.patch).
# clang's PTX of the template before reloads the 25 weights of the two array-weighted
# 5x5 convolutions for each row of outputs (convolution: 6.25 ld.const an output at its
# winner) or each streamed row (conv_padded_mask: 3.22); the hoist loads them once
# (3.12 and 0.02), every other instruction the same (../h200-all/conv_ptx.md). The
# package's H200 winners at 8192^2 (../h200-all/lift_corpus.json) of convolution and
# conv_padded_mask, with tile_local and jacobi2d as controls (numbers and a scalar as
# coefficients: the hoist leaves their PTX as it was, ratio 1 expected), five
# alternating rounds with the float4 copy (benchmarks/template_ab.py); then NVIDIA's own
# PTX of the two convolutions in both templates (ptx_breakdown.py --device: opcodes per
# output, ld.const among them, and ptxas's registers): whether NVIDIA's compiler already
# hoists what clang reloads in the template before.
#
# From the project root on the GPU host (about 4 minutes; under 8):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/lift/conv_hoist/run_conv_hoist.sh
# Smoke test on PoCL (512^2; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/conv_hoist_smoke DEVICE=pthread SIZE=32 ROUNDS=1 \
#     BUDGET=900 SCALE=3 bash benchmarks/results/lift/conv_hoist/run_conv_hoist.sh
#
# Each step has its own time limit, cut to what is left of BUDGET seconds (the A/B's
# 240 s: 4 configurations x 2 templates verified at 8192^2). Writes three files:
# $OUT/rc.txt (each step's exit status and time), $OUT/conv_hoist.log (the A/B's and the
# PTX steps' output, outside the archive) and $OUT/conv_hoist.tar.gz (defs/,
# ab-wq_hoist/template_ab.{md,json}, ptx-*.md, logs).
set -u
dev=${DEVICE:-${1:-NVIDIA}}
size=${SIZE:-512} # template_ab's: 2D arrays 16 x this square (512: 8192^2)
rounds=${ROUNDS:-5}
budget=${BUDGET:-420}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 3)
start=$(date +%s)
mkdir -p "$OUT/defs"
D=$OUT/defs
made_before=
if [ -z "${BEFORE:-}" ]; then
  made_before=1
  BEFORE=$(mktemp --suffix=.cl "${TMPDIR:-/tmp}/before_hoist.XXXXXX")
  git show 6859453:gtune/data/templates/stencil.cl > "$BEFORE" || {
    echo "run_conv_hoist: no template from before the hoist (set BEFORE to a file of" \
      "git show 6859453:gtune/data/templates/stencil.cl)" >&2
    exit 2
  }
fi
LOG=$(mktemp "${TMPDIR:-/tmp}/conv_hoist.XXXXXX") # becomes $OUT/conv_hoist.log after packing

. benchmarks/step_budget.sh # left N: the seconds a step may take; pack NAME

. benchmarks/results/lift/int_defs.sh # lift_as NAME SOURCE SIZE FLAGS...
lift_as convolution convolution.cl 32x32 --array input=NX+4,NY+4 --array filter=25 \
  --scalar width=NX --scalar height=NY --default WX=16,WY=16 --device "$dev"
lift_as conv_padded_mask conv_padded_mask.cl 32x24 --array padded=NX+4,NY+4 \
  --array mask=25 --scalar W=NX --scalar H=NY --default WX=16,WY=8 --device "$dev"
lift_as tile_local tile_local.cl 48x32 --default WX=16,WY=16 --scalar gain=1.5 --device "$dev"
lift_as jacobi2d jacobi2d.cl 32x32 --scalar n=NX --define DATA_TYPE=float \
  --default WX=32,WY=8 --device "$dev"

CONV=WX=32,WY=4,BX=4,VX=4,CX=1,CY=2,LOCAL=0,STREAM=0,ZC=1
MASK=WX=32,WY=8,BX=4,VX=1,CX=2,CY=1,LOCAL=0,STREAM=1,ZC=128
configs=(
  --config convolution:$CONV
  --config conv_padded_mask:$MASK
  --config tile_local:WX=32,WY=2,BX=4,VX=2,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=128
  --config jacobi2d:WX=128,WY=2,BX=4,VX=4,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,RIM=1,RIN=0,BY=4
)

timeout "$(left 240)" python3 benchmarks/template_ab.py "$OUT/ab-wq_hoist" --variant "$BEFORE" \
  --kernels $D/convolution.stencil.yaml $D/conv_padded_mask.stencil.yaml \
  $D/tile_local.stencil.yaml $D/jacobi2d.stencil.yaml --device "$dev" \
  --size "$size" --rounds "$rounds" --copy "${configs[@]}" > "$OUT/ab-wq_hoist.log" 2>&1
echo "ab-wq_hoist rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/ab-wq_hoist/rendered"
{ echo "== ab-wq_hoist"; tail -c 20000 "$OUT/ab-wq_hoist.log"; } >> "$LOG"

ptx() { # ptx NAME KERNEL CONFIG [--template=FILE]: NVIDIA's PTX of one kernel, by opcode
  local name=$1 kernel=$2 cfg=$3
  shift 3
  case "$dev" in
    *NVIDIA* | *nvidia*) ;;
    *) echo "ptx $name: skipped (no PTX from $dev)" >> "$OUT/rc.txt"; return ;;
  esac
  timeout "$(left 30)" python3 benchmarks/ptx_breakdown.py $D/$kernel.stencil.yaml \
    --device "$dev" --config "$cfg" --top 40 "$@" > "$OUT/ptx-$name.md" 2>&1
  echo "ptx $name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  { echo "== ptx $name"; cat "$OUT/ptx-$name.md"; } >> "$LOG"
}
ptx convolution-package convolution $CONV
ptx convolution-before convolution $CONV --template="$BEFORE"
ptx conv_padded_mask-package conv_padded_mask $MASK
ptx conv_padded_mask-before conv_padded_mask $MASK --template="$BEFORE"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
# the device tool brings back at most 8 files: rc.txt, the log, and one archive
pack conv_hoist
mv "$LOG" "$OUT/conv_hoist.log"
if [ -n "$made_before" ]; then rm -f "$BEFORE"; fi
