#!/bin/bash
# Issue 49, one step: the z-walk of temporal-zreg (ZREG=2 with vectors) at TB 1 as a
# one-step technique (candidate benchmarks/candidates/zreg_onestep.patch, or TEMPLATE=)
# against the defaults' vec winners: the fixed configurations of each file in FILES
# (default: laplacian4 and heat3d, benchmarks/temporal_configs/*-zreg-onestep.yaml),
# each verified against the reference's step, then 5 rounds side by side with the
# float4 copy (temporal_configs.py); then NVIDIA's PTX counts and ptxas's registers
# (ptx_tile.py; clang's elsewhere).
#
# From the project root on the GPU host (about 3 minutes):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_onestep.sh
# Smoke test on PoCL (256³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_onestep.sh pthread 256
#
# Writes $OUT/NAME/ (configs.md, .csv, .json) per file, its log and NAME.ptx.md, packed at the end
# into $OUT/zreg_onestep.tar.gz beside $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-290}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
template=${TEMPLATE:-benchmarks/candidates/zreg_onestep.patch}
files=${FILES:-"laplacian4-zreg-onestep heat3d-zreg-onestep"}
. benchmarks/step_budget.sh # left N: the seconds a step may take

ptx() { # ptx_tile.py's counts of every configuration of a file (its kernel and steps):
  # NVIDIA's compiler with ptxas's registers on the GPU host, else clang's
  local on=()
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 40)" python3 benchmarks/ptx_tile.py --configs "$1" --size "$size" \
    ${on[@]+"${on[@]}"} --template "$template"
}

for f in $files; do
  configs=benchmarks/temporal_configs/$f.yaml
  if [ "$size" -lt 512 ]; then # the smoke test: chunks that fit
    sed -e "s/ZC: 256/ZC: $((size / 2))/" "$configs" > "$OUT/$f.yaml"
    configs=$OUT/$f.yaml
  fi
  timeout "$(left 200)" python3 benchmarks/temporal_configs.py "$OUT/$f" "$configs" \
    --template "$template" --device "$dev" --size "$size" --rounds "$rounds" > "$OUT/$f.log" 2>&1
  echo "$f rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$f/kernels"
  ptx "$configs" > "$OUT/$f.ptx.md" 2>&1
  echo "$f ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
done
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack zreg_onestep # the device tool brings back at most 8 files: all but rc.txt in one
