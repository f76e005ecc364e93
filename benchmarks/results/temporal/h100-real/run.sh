#!/bin/bash
# One step and 8 time steps (temporal blocking) against the float4 copy for the real
# stencils that benchmarks/results/temporal/h100-zreg2/ left out: box27 and laplacian4
# (512³) and blur5 (8192², interior boundary). One benchmarks/temporal.py run per kernel,
# each with its own copy measurements; the one-step side is a small search (12
# configurations per technique: global, vec, stream), the multi-step side the temporal
# spec with 60 per temporal technique. From the project root on the GPU host:
#   OUT=... bash benchmarks/results/temporal/h100-real/run.sh
set -u
for k in box27 laplacian4 blur5; do
  timeout 115 python3 benchmarks/temporal.py "$OUT/$k" --device NVIDIA --steps 8 --quick \
    --temporal-budget 60 --kernels "$k" > "$OUT/$k.log" 2>&1
  echo "rc $k=$?"
done
tar czf /tmp/treal.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/treal.tar.gz "$OUT"/
