#!/bin/bash
# Issue 49, one step: box27 and laplacian4 on work-groups that cover longer y and z
# extents (cyclic merges, taller work-groups) against the defaults' vec winners, each
# configuration verified and timed in 5 rounds beside the float4 copy
# (benchmarks/temporal_configs.py, the package's template, ptxas's registers). From the
# project root on the GPU host (about 3 minutes):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/extents/run.sh
set -u
start=$(date +%s)
mkdir -p "$OUT"
for k in ${KERNELS:-laplacian4 box27}; do
  timeout ${EACH_S:-240} python3 benchmarks/temporal_configs.py "$OUT/$k" \
    "benchmarks/temporal_configs/$k-${SET:-extents}.yaml" --device NVIDIA --size 512 \
    --rounds ${ROUNDS:-5} --ptxas > "$OUT/$k.log" 2>&1
  echo "$k rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$k/kernels"
done
tar -czf "$OUT/extents.tar.gz" -C "$OUT" $(cd "$OUT" && ls -d */ *.log rc.txt | tr -d /)
