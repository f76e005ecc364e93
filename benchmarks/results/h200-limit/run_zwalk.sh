#!/bin/bash
# Issue 49: the z-walk candidate (benchmarks/candidates/vec_zwalk.patch: RIN=2, the
# vec technique's interior block walks its BZ planes in a rolled loop, the 2*RZ+1
# planes an output reads queued in registers: y-sums with SEP (box27), centre vectors
# for a z-star (laplacian4, heat3d); RIN=3 the same walk unrolled) and longer blocks in
# z (BZ 8 and 16, beyond the spec's {1, 2, 4}: the package's side of the same
# configurations). Each configuration as the package runs it (RIN 0 or 1) against the
# candidate's template with RIN=2 (template_ab.py --variant --variant-set RIN=2), then
# a few with RIN=3, the float4 copy in the same rounds; then ptxas's registers and
# NVIDIA's PTX of both (h200_ptx.py; configs_zwalk.json: the package's side,
# configs_zwalk_walk.json: the same with RIN=2 and with RIN=3).
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zwalk.sh
# Smoke test on PoCL (128^3: the configurations are 128 wide in x; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 BUDGET=1500 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zwalk.sh pthread 128
#
# Each step has its own time limit, cut to what is left of BUDGET seconds. Writes
# $OUT/ab-zwalk/ (laplacian4, heat3d), $OUT/ab-zwalk-box27/, $OUT/ab-zwalk-unrolled/
# (template_ab.md, .json), $OUT/nv/{package,zwalk}.md (.json, .ptx.tar.gz), logs, packed
# at the end into $OUT/zwalk.tar.gz beside $OUT/rc.txt.
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-230}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 10)
kernels=(${KERNELS:-laplacian4 box27 heat3d})
start=$(date +%s)
mkdir -p "$OUT"

. benchmarks/step_budget.sh # left N: the seconds a step may take

# the package's best (defaults/onestep.md, README's tables) and the walks: BZ 4 to 16
# planes per work-item, which the package's unrolled blocks pay for in registers
# (configs_zwalk.json holds the same list for h200_ptx.py)
configs=(
  --config laplacian4:BX=4,BY=1,BZ=1,CX=1,CY=2,CZ=2,RIM=1,RIN=1,VX=4,WX=32,WY=4,WZ=4
  --config laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,RIM=1,RIN=0,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=1,BZ=4,CX=1,CY=1,CZ=2,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=1,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=1,BZ=16,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=2,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=8,WZ=1
  --config laplacian4:BX=4,BY=1,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=64,WY=8,WZ=1
  --config box27:BX=4,BY=4,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=2
  --config box27:BX=4,BY=4,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=1
  --config box27:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=0,SEP=1,VX=4,WX=32,WY=4,WZ=1
  --config box27:BX=4,BY=4,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=1
  --config box27:BX=4,BY=2,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=4,WZ=1
  --config box27:BX=4,BY=2,BZ=16,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=4,WZ=1
  --config heat3d:BX=4,BY=1,BZ=1,CX=1,CY=1,CZ=4,RIM=1,RIN=1,VX=4,WX=64,WY=8,WZ=1
  --config heat3d:BX=4,BY=2,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=4,WZ=1
)
# the unrolled walk (RIN=3) on the walks whose registers it may raise
configs3=(
  --config laplacian4:BX=4,BY=1,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=1,BZ=16,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  --config laplacian4:BX=4,BY=2,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,VX=4,WX=32,WY=8,WZ=1
  --config box27:BX=4,BY=4,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=2
  --config box27:BX=4,BY=4,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=1
  --config box27:BX=4,BY=2,BZ=8,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=4,WZ=1
)

ab() { # ab NAME LIMIT RIN "KERNEL..." CONFIG...: each configuration of those kernels
  # (and of $KERNELS) against itself with RIN in the candidate's template
  local n=$1 limit=$2 rin=$3 k want=()
  for k in $4; do
    [[ " ${kernels[*]} " == *" $k "* ]] && want+=("$k")
  done
  shift 4
  [ ${#want[@]} -eq 0 ] && return
  timeout "$(left "$limit")" python3 benchmarks/template_ab.py "$OUT/$n" \
    --variant benchmarks/candidates/vec_zwalk.patch --variant-set RIN=$rin \
    --kernels "${want[@]}" --device "$dev" --size "$size" --rounds "$rounds" --copy \
    "$@" > "$OUT/$n.log" 2>&1
  echo "$n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$n/rendered"
}

. benchmarks/results/h200-limit/nv_ptx.sh # nv NAME LIMIT CONFIGS [--template FILE]

# one kernel group per step, so a step cut by its limit loses only its kernels
ab ab-zwalk 60 2 "laplacian4 heat3d" "${configs[@]}"
ab ab-zwalk-box27 80 2 box27 "${configs[@]}"
ab ab-zwalk-unrolled 45 3 "laplacian4 box27" "${configs3[@]}"
nv zwalk 25 configs_zwalk_walk.json --template benchmarks/candidates/vec_zwalk.patch
nv package 20 configs_zwalk.json
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack zwalk # the device tool brings back at most 8 files: all but rc.txt in one
