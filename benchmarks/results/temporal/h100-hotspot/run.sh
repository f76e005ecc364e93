#!/bin/bash
# One step and 8 time steps (temporal blocking) against the float4 copy for the real
# hotspot stencil (8192², two input fields: temp, stepped, and power, fixed), the last
# real stencil the temporal results lacked. As h100-real2/: a 12-configuration one-step
# search per technique, the temporal spec with 60 per temporal technique. From the
# project root on the GPU host:
#   OUT=... bash benchmarks/results/temporal/h100-hotspot/run.sh
set -u
timeout 230 python3 benchmarks/temporal.py "$OUT/hotspot" --device NVIDIA --steps 8 --quick \
  --temporal-budget 60 --kernels hotspot > "$OUT/hotspot.log" 2>&1
echo "rc=$?"
tar czf /tmp/hot.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/hot.tar.gz "$OUT"/
