#!/bin/bash
# One step against copy with gtune run's defaults once the hybrid spec's rim step tunes
# the vector width with RIM, BY and BZ: the four real stencils against the float4 copy,
# twice (two independent runs: searches and re-measurements). From the project root on
# the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-vxrim/run.sh
set -u
timeout 275 python3 benchmarks/onestep.py "$OUT/first" --device NVIDIA
echo "rc first=$?"
timeout 275 python3 benchmarks/onestep.py "$OUT/second" --device NVIDIA
echo "rc second=$?"
# at most 8 files come back from the GPU host: one archive
tar czf /tmp/vxrim.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/vxrim.tar.gz "$OUT"/
