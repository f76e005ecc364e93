# One H100 call: which axis's halo costs the streaming kernel its last 9 %, and whether
# plane loads aligned with the tile (interior columns first, halo columns after) help.
# Run in the project root on the GPU host:  OUT=... bash benchmarks/results/onestep/aligned-loads/run.sh
set -u
source .gpu-bundle/env.sh .gpu-bundle
R=$PWD
D=$R/benchmarks/results/onestep/copy-through-template
A=$R/benchmarks/results/onestep/aligned-loads
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r/gpu.txt" 2>&1
KS="$D/copy3d.stencil.yaml $D/copy3d_x.stencil.yaml $D/copy3d_y.stencil.yaml $D/copy3d_z.stencil.yaml"

# 1. main's template, gtune run's defaults, copy in the same run
timeout ${T1:-300} python3 benchmarks/onestep.py "$OUT/r/main" --device NVIDIA \
  --kernels heat3d box27 $KS > "$OUT/r/main.log" 2>&1
echo "main rc=$?" >> "$OUT/r/rc.txt"

# 2. the aligned-load template: a copy of the tree with only the template replaced
rm -rf /tmp/v && mkdir -p /tmp/v && cp -r gtune benchmarks stencils specs /tmp/v/
gunzip -c "$A/stencil.cl.gz" > /tmp/v/gtune/data/templates/stencil.cl
(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v python3 -c "
from pathlib import Path; from gtune.stencils.real import write_real; write_real(Path('stencils'))")
(cd /tmp/v && PYTHONPATH=/tmp/gtune-site:/tmp/v timeout 150 python3 benchmarks/onestep.py \
  "$OUT/r/aligned" --device NVIDIA --kernels heat3d box27 $D/copy3d_x.stencil.yaml \
  > "$OUT/r/aligned.log" 2>&1; echo "aligned rc=$?" >> "$OUT/r/rc.txt")

# 3. fixed tiles, ZC swept, both templates (each its own store)
sweep() { # tree db
  (cd "$1" && PYTHONPATH=/tmp/gtune-site:$1 python3 -c "
from pathlib import Path; from gtune.stencils.real import write_real; write_real(Path('$1/real'))" &&
  S=${SIZE:-512x512x512} T=STREAM=1,LOCAL=0,IMAGE=0,VX=1,BX=1,WZ=1,CZ=1 &&
  for k in $KS $1/real/heat3d.yaml $1/real/box27.yaml; do
    for c in WX=16,WY=4,CX=32,CY=1 WX=32,WY=4,CX=16,CY=1; do
      PYTHONPATH=/tmp/gtune-site:$1 timeout 60 python3 -m gtune --db "$2" measure "$k" --size $S \
        --device ${DEV:-NVIDIA} --runs 20 --config $T,$c --sweep ZC=${ZCS:-1,32,128} 2>&1 | grep -v "━" | sed "s|^|$(basename $k) $c |"
    done
  done)
}
timeout 100 bash -c "$(declare -f sweep); KS='$KS'; sweep $R $OUT/r/sweep-main.db" > "$OUT/r/sweep-main.log" 2>&1
timeout 100 bash -c "$(declare -f sweep); KS='$KS'; sweep /tmp/v $OUT/r/sweep-aligned.db" > "$OUT/r/sweep-aligned.log" 2>&1
cd "$OUT" && tar czf r.tgz r && rm -rf r
