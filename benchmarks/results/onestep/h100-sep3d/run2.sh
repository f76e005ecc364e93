#!/bin/bash
# The second, independent run of gtune run's defaults against the float4 copy (run.sh's
# onestep part). From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-sep3d/run2.sh
set -u
timeout 300 python3 benchmarks/onestep.py "$OUT/second" --device NVIDIA
echo "rc second=$?"
tar czf /tmp/sep2.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/sep2.tar.gz "$OUT"/
