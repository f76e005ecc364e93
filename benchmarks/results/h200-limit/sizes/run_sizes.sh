#!/bin/bash
# Issue 49, one step: does the cube's side change how far box27 and laplacian4 stay
# behind the copy? At 512³ a plane is 1 MiB and a row 2 KiB, powers of two that the
# memory's address mapping may alias; 640³ and 768³ are not. The defaults' winners of
# ../defaults-2026-12-01/r3/ at each side, against the float4 copy of the same side in
# the same rounds (template_ab.py --copy; --variant-set RIM=1 sets what the winners
# have, so both columns are the package's template: two measurements of each).
#
# From the project root on the GPU host (about 3 minutes):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/sizes/run_sizes.sh
# Smoke test on PoCL: SIZES=128 ROUNDS=1 DEV=pthread OUT=/tmp/sz bash .../run_sizes.sh
set -u
mkdir -p "$OUT"
start=$(date +%s)
for n in ${SIZES:-512 640 768}; do
  timeout 200 python3 benchmarks/template_ab.py "$OUT/s$n" --variant-set RIM=1 \
    --kernels heat3d box27 laplacian4 --device "${DEV:-NVIDIA}" --size "$n" \
    --rounds "${ROUNDS:-7}" --copy \
    --config heat3d:WX=32,WY=16,WZ=1,BX=4,VX=4,CX=1,CY=1,CZ=2,RIM=1,RIN=0,BY=1,BZ=2 \
    --config box27:WX=32,WY=2,WZ=2,BX=4,VX=4,CX=1,CY=1,CZ=1,SEP=1,RIM=1,RIN=1,BY=4,BZ=4 \
    --config laplacian4:WX=32,WY=4,WZ=2,BX=4,VX=4,CX=1,CY=1,CZ=2,RIM=1,RIN=0,BY=2,BZ=2 \
    > "$OUT/s$n.log" 2>&1
  echo "s$n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
done
tar -C "$OUT" -czf /tmp/sizes.tar.gz --exclude=rc.txt . && mv /tmp/sizes.tar.gz "$OUT/" # at most 8 files come back
