#!/bin/bash
# Issue 49, one step: the row-base candidate (benchmarks/candidates/vec_row_base.patch,
# RB=1: a vec work-item whose blocks all lie inside runs RIN=1's interior body in a loop
# of its own, no block testing its rows, a block's row base a pointer step from the one
# before; row_base/README.md). The five configurations run_maxreg.sh measured (the
# package's best of laplacian4, box27 and heat3d at 512^3), each with RIN=1 on both
# sides, the package's template against the candidate's with RB=1 (template_ab.py
# --variant --variant-set RB=1), the float4 copy in the same rounds; then the two of
# them the package runs with RIN=0 as it runs them, against the candidate with RIN=1
# RB=1; then ptxas's registers and NVIDIA's PTX of both templates (h200_ptx.py; on
# NVIDIA only). The question: clang's PTX has 26 % fewer integer instructions per output
# for laplacian4's defaults winner (5.94 -> 4.38) and 18 % for heat3d's; does the time
# follow?
#
# From the project root on the GPU host (about 6 minutes; verifying five configurations
# at 512^3 takes about 60 s of each A/B step):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_row_base.sh
# Smoke test on PoCL (256^3: the x tiles are 128 and 256 wide; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 BUDGET=5000 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_row_base.sh pthread 256
#
# Each step has its own time limit, cut to what is left of BUDGET seconds. Writes
# $OUT/ab-row-base/, $OUT/ab-row-base-rin0/ (template_ab.md, .json), $OUT/nv/
# {package,row_base}.md (.json, .ptx.tar.gz) and logs, packed at the end into
# $OUT/row_base.tar.gz beside $OUT/rc.txt.
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-520}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 10)
start=$(date +%s)
mkdir -p "$OUT"

. benchmarks/step_budget.sh # left N: the seconds a step may take

# run_maxreg.sh's five (winners.sh), every one with RIN=1 (the candidate changes only the
# interior path; row_base/configs.json holds the same list for h200_ptx.py), and the two
# the package runs with RIN=0, as it runs them
. benchmarks/results/h200-limit/winners.sh # WINNERS
configs=() configs_rin0=()
for c in "${WINNERS[@]}"; do
  configs+=(--config "${c//RIN=0/RIN=1}")
  [[ $c == *RIN=0* ]] && configs_rin0+=(--config "$c")
done

ab() { # ab NAME LIMIT SET CONFIG...: the package's template against the candidate's
  # with SET (N=V,...), each configuration side by side with the copy
  local n=$1 limit=$2 set=$3
  shift 3
  timeout "$(left "$limit")" python3 benchmarks/template_ab.py "$OUT/$n" \
    --variant benchmarks/candidates/vec_row_base.patch --variant-set "$set" \
    --kernels laplacian4 box27 heat3d --device "$dev" --size "$size" --rounds "$rounds" \
    --copy "$@" > "$OUT/$n.log" 2>&1
  echo "$n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$n/rendered"
}

. benchmarks/results/h200-limit/nv_ptx.sh # nv NAME LIMIT CONFIGS [--template FILE]

ab ab-row-base 240 RB=1 "${configs[@]}"
ab ab-row-base-rin0 150 RIN=1,RB=1 "${configs_rin0[@]}"
nv row_base 30 row_base/configs_rb.json --template benchmarks/candidates/vec_row_base.patch
nv package 30 row_base/configs.json
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack row_base # the device tool brings back at most 8 files: all but rc.txt in one
