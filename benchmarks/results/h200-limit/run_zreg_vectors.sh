#!/bin/bash
# Issue 49: temporal-zreg with vectors (VX = BX = 2, 4 with ZREG=2, each block point of
# a work-item a vector of VX adjacent points, loaded, queued, shared in local memory and
# stored whole; ZS=1: one barrier per plane step) against the scalar walk's recorded
# winners on heat3d 512³, 8 steps: the fixed configurations of a file
# (benchmarks/temporal_configs/heat3d-zreg-vectors*.yaml), each verified against 8
# single steps, then 5 rounds side by side with the float4 copy; then the PTX counts per
# point and step (ptx_tile.py: NVIDIA's compiler and ptxas's registers). The vectors
# and ZS are the template's (2026-12-01); the candidate's other options (ZE, ZY, ZD:
# the rounds -edges, -ahead and -one-barrier) need its patch, TEMPLATE=PATCH (at
# 3a375e3: git show 3a375e3:benchmarks/candidates/zreg_vectors.patch > PATCH).
#
# From the project root on the GPU host (about 4 minutes; under 5):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_vectors.sh
# CONFIGS names another configurations file (heat3d-zreg-vectors-tb4.yaml: the second
# round). Smoke test on PoCL (128³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_vectors.sh pthread 128
#
# Writes $OUT/zv/ (configs.md, .csv, .json), $OUT/ptx.md, logs, packed at the end into
# $OUT/zreg_vectors.tar.gz beside $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-290}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
template=() # TEMPLATE=PATCH: every configuration rendered from that candidate
if [ -n "${TEMPLATE:-}" ]; then template=(--template "$TEMPLATE"); fi
. benchmarks/step_budget.sh # left N: the seconds a step may take

configs=${CONFIGS:-benchmarks/temporal_configs/heat3d-zreg-vectors.yaml}
if [ "$size" -lt 512 ]; then # the smoke test: chunks that fit (ZC 256, 512 -> a quarter, half)
  sed -e "s/ZC: 256/ZC: $((size / 4))/" -e "s/ZC: 512/ZC: $((size / 2))/" "$configs" > "$OUT/configs.yaml"
  configs=$OUT/configs.yaml
fi
timeout "$(left 230)" python3 benchmarks/temporal_configs.py "$OUT/zv" "$configs" ${template[@]+"${template[@]}"} \
  --device "$dev" --size "$size" --rounds "$rounds" > "$OUT/zv.log" 2>&1
echo "zv rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/zv/kernels"

ptx() { # ptx_tile.py's counts of every configuration of the file: NVIDIA's compiler with
  # ptxas's registers on the GPU host, else clang's
  local on=()
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 60)" python3 benchmarks/ptx_tile.py --configs "$configs" --size "$size" \
    --prefix LOCAL=0,RIM=0,RIN=0,WZ=1,CZ=1 ${on[@]+"${on[@]}"} ${template[@]+"${template[@]}"}
}
ptx > "$OUT/ptx.md" 2>&1
echo "ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack zreg_vectors # the device tool brings back at most 8 files: all but rc.txt in one
