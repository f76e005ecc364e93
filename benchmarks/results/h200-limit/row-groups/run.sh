#!/bin/bash
# Issue 49, one step: box27 and laplacian4 on work-groups as wide as the 512³ row
# (WX 128 with VX 4) against the defaults' vec winners, each configuration verified and
# timed in 5 rounds beside the float4 copy (benchmarks/temporal_configs.py, the
# package's template). From the project root on the GPU host (about 3 minutes):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/row-groups/run.sh
set -u
start=$(date +%s)
mkdir -p "$OUT"
for k in box27 laplacian4; do
  timeout 240 python3 benchmarks/temporal_configs.py "$OUT/$k" \
    "benchmarks/temporal_configs/$k-row-groups.yaml" --device NVIDIA --size 512 --rounds 5 \
    > "$OUT/$k.log" 2>&1
  echo "$k rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$k/kernels"
done
tar -czf "$OUT/row_groups.tar.gz" -C "$OUT" box27 laplacian4 box27.log laplacian4.log
