#!/usr/bin/env bash
# temporal-zreg's halo dealt as a snake (HS 1) against frame by frame, heat3d 8 steps:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"],
#       command="bash benchmarks/results/h200-limit/temporal-8/halo-snake/call.sh")
set -uo pipefail
source .gpu-bundle/env.sh .gpu-bundle
timeout 420 python3 benchmarks/temporal_configs.py "$OUT/snake" \
  benchmarks/temporal_configs/heat3d-zreg-halo-snake.yaml --device NVIDIA \
  --template benchmarks/candidates/zreg_halo_snake.patch --rounds 7 --ptxas \
  > "$OUT/snake.log" 2>&1
echo "rc $?" >> "$OUT/snake.log"
tail -25 "$OUT/snake.log"
