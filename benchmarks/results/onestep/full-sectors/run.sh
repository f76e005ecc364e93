# One H100 call (issue 27): do the x-edge points, whose 32-byte sectors the interior
# boundary leaves written in part, cost the one-step kernels their last per cent?
#  - main's template: heat3d, box27, the copies, and clamp variants (which write every point);
#  - the full-sector template (stencil.cl here): the edge points written again with their
#    own values, in a copy of the tree with only the template replaced (and the real
#    stencils re-rendered from it).
# Run in the project root on the GPU host:  OUT=... bash benchmarks/results/onestep/full-sectors/run.sh
set -u
source .gpu-bundle/env.sh .gpu-bundle
R=$PWD
D=$R/benchmarks/results/onestep/copy-through-template
E=$R/benchmarks/results/onestep/full-sectors
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r/gpu.txt" 2>&1
rm -rf /tmp/v && mkdir -p /tmp/v && cp -r gtune benchmarks stencils specs /tmp/v/
gunzip -c "$E/stencil.cl.gz" > /tmp/v/gtune/data/templates/stencil.cl
(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v python3 -c "
from pathlib import Path; from gtune.stencils.real import write_real; write_real(Path('stencils'))")

(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v timeout ${T1:-230} python3 benchmarks/onestep.py \
  "$OUT/r/full" --device NVIDIA --kernels heat3d box27 laplacian4 jacobi2d $D/copy3d_x.stencil.yaml \
  > "$OUT/r/full.log" 2>&1; echo "full rc=$?" >> "$OUT/r/rc.txt")

[ "${T2:-270}" = 0 ] || timeout ${T2:-270} python3 benchmarks/onestep.py "$OUT/r/main" --device NVIDIA \
  --kernels heat3d box27 $D/copy3d.stencil.yaml $D/copy3d_x.stencil.yaml \
  $D/copy3d_x_clamp.stencil.yaml $D/heat3d_clamp.stencil.yaml > "$OUT/r/main.log" 2>&1
echo "main rc=$?" >> "$OUT/r/rc.txt"
cd "$OUT" && tar czf r.tgz r && rm -rf r
