#!/bin/bash
# One step against copy with gtune run's defaults: the template with BY/BZ, the hybrid
# spec's rim step tuning RIM, BY and BZ, and the H100 card refitted on the relabelled
# radius-1 kernels (benchmarks/results/predict/h100-scale/). From the project root on
# the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-blocks/run.sh
set -u
timeout 450 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA
echo "rc=$?"
