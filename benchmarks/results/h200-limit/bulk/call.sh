#!/usr/bin/env bash
# Tiles staged by bulk copies against box27's winner (issue 49): one H200 call,
#   run(kind="nvidia-h200", carry=[".gpu-bundle"],
#       command="bash benchmarks/results/h200-limit/bulk/call.sh")
set -uo pipefail
source .gpu-bundle/env.sh .gpu-bundle
mkdir -p "$OUT/bulk"
timeout 420 python3 benchmarks/bulk_probe.py "$OUT/bulk" --device NVIDIA --size 512 \
  --rounds 7 --reps 10 --shape 8x8/2x2 --shape 8x4/2x2 --shape 16x8/2x4 --shape 4x4/2x2 \
  > "$OUT/bulk/log.txt" 2>&1
echo "rc $?" >> "$OUT/bulk/log.txt"
tail -40 "$OUT/bulk/log.txt"
