# One H100 call (issue 27): the streaming kernel with plane p+2's loads issued at step p
# (stencil.cl here) against the package's template.
#  1. template_ab.py: the 8 fastest recorded configurations of heat3d and box27
#     (recorded.db: the main template's onestep.py run of this session), side by side;
#  2. onestep.py with the candidate: gtune run's defaults, its own search.
# Run in the project root on the GPU host:  OUT=... bash benchmarks/results/onestep/prefetch2/run.sh
set -u
source .gpu-bundle/env.sh .gpu-bundle
R=$PWD
E=$R/benchmarks/results/onestep/prefetch2
mkdir -p "$OUT/r"
gunzip -c "$E/recorded.db.gz" > /tmp/recorded.db
gunzip -c "$E/stencil.cl.gz" > /tmp/candidate.cl
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r/gpu.txt" 2>&1
timeout ${T0:-200} python3 benchmarks/template_ab.py "$OUT/r/ab" --variant /tmp/candidate.cl \
  --store /tmp/recorded.db --kernels heat3d box27 --top 8 --device NVIDIA > "$OUT/r/ab.log" 2>&1
echo "ab rc=$?" >> "$OUT/r/rc.txt"
rm -rf "$OUT/r/ab/rendered"
rm -rf /tmp/v && mkdir -p /tmp/v && cp -r gtune benchmarks stencils specs /tmp/v/
gunzip -c "$E/stencil.cl.gz" > /tmp/v/gtune/data/templates/stencil.cl
(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v python3 -c "
from pathlib import Path; from gtune.stencils.real import write_real; write_real(Path('stencils'))")
(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v timeout ${T1:-200} python3 benchmarks/onestep.py \
  "$OUT/r/pd2" --device NVIDIA --kernels heat3d box27 > "$OUT/r/pd2.log" 2>&1; echo "pd2 rc=$?" >> "$OUT/r/rc.txt")
cd "$OUT" && tar czf r.tgz r && rm -rf r
