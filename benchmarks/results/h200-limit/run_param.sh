#!/bin/bash
# Issue 49: the vec technique's interior path as a template parameter (RIN, the
# interior path of benchmarks/candidates/vec_interior_rolled.patch behind RIN=1). The
# H200's recorded winners (the 21 configurations of run.sh: per kernel the 4 fastest vec
# configurations and one or two probes with more rows per work-item, all RIM=1) with
# RIN=0 against the same configuration with RIN=1, one template, configuration by
# configuration, the float4 copy in the same rounds (benchmarks/template_ab.py
# --variant-set RIN=1). Twice: the package side of the two calls (RIN=0 both times) is
# the run-to-run noise, as in run.sh's two A/B steps.
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_param.sh
# Smoke test on PoCL:
#   OUT=/tmp/smoke KERNELS=jacobi2d bash benchmarks/results/h200-limit/run_param.sh pthread 64
#
# Each step has its own time limit, cut to what is left of BUDGET seconds. Writes
# $OUT/ab-rin/ and $OUT/ab-rin-again/ (template_ab.md, .json), logs, rc.txt.
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-225}
kernels=(${KERNELS:-heat3d box27 laplacian4 jacobi2d})
start=$(date +%s)
mkdir -p "$OUT"

left() { # seconds left of the budget, at most $1
  local l=$((budget - ($(date +%s) - start)))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 5 ] && l=5
  echo "$l"
}

# run.sh's 21 configurations (its "configs=(" block, one --config per line), so the two
# scripts measure the same winners
mapfile -t lines < <(sed -n '/^configs=(/,/^)/p' "$here/run.sh" | grep -- '--config ')
configs=()
for l in "${lines[@]}"; do
  read -r flag cfg <<< "$l"
  configs+=("$flag" "$cfg")
done

ab() { # ab NAME LIMIT: each configuration with RIN=0 against RIN=1
  local n=$1
  timeout "$(left "$2")" python3 benchmarks/template_ab.py "$OUT/$n" --variant-set RIN=1 \
    --kernels "${kernels[@]}" --device "$dev" --size "$size" --rounds "$rounds" --copy \
    "${configs[@]}" > "$OUT/$n.log" 2>&1
  echo "$n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$n/rendered"
}

ab ab-rin 115
ab ab-rin-again 110
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
