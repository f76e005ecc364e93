#!/bin/bash
# Issue 49's evidence on the H200, as on the H100 (benchmarks/results/onestep/
# copy-through-template/, "Next call: what a halo along each axis costs"): the copy
# written as a stencil definition (copy3d, radius 0) and with a radius-1 halo along
# one axis only (copy3d_x, _y, _z), beside laplacian4 and heat3d at 512^3, each tuned
# with `gtune run`'s defaults, then every winner and the float4 copy re-measured side
# by side (benchmarks/onestep.py). On the H100 a y or z halo cost a copy 0-2 %, an x
# halo 7 % and heat3d 10 %: which axis takes laplacian4's and heat3d's gap on the H200?
#
# From the project root on the GPU host (about 6 minutes; a run cut by its limit
# resumes from OUT's store when started again with the same OUT):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_halo_axes.sh
# Smoke test on PoCL (32^3):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/halo SMALL=--small bash benchmarks/results/h200-limit/run_halo_axes.sh pthread
#
# Writes $OUT/halo_axes.tar.gz (onestep.md, .json, .png, the log; the store left out)
# beside $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
budget=${BUDGET:-540}
scale=1
start=$(date +%s)
mkdir -p "$OUT"
. benchmarks/step_budget.sh # left N, pack NAME
T=benchmarks/results/onestep/copy-through-template
timeout "$(left "$budget")" python3 benchmarks/onestep.py "$OUT/halo" --device "$dev" ${SMALL:-} \
  --kernels $T/copy3d.stencil.yaml $T/copy3d_x.stencil.yaml $T/copy3d_y.stencil.yaml \
  $T/copy3d_z.stencil.yaml laplacian4 heat3d > "$OUT/halo.log" 2>&1
echo "onestep rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -f "$OUT/halo/onestep.db" # the store stays on the host (megabytes)
pack halo_axes
