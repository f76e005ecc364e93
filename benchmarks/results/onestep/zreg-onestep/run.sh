# One H100 call (issue 27): one-step streaming of z-star stencils of radius 1 with one
# register per output (the candidate, stencil.cl.gz) against the package's queue of
# three partial sums, heat3d configuration by configuration (benchmarks/template_ab.py):
# the 8 fastest recorded configurations of this session's main-template run and two
# fixed tiles.
# Run in the project root on the GPU host:  OUT=... bash benchmarks/results/onestep/zreg-onestep/run.sh
set -u
source .gpu-bundle/env.sh .gpu-bundle
R=$PWD
Z=$R/benchmarks/results/onestep/zreg-onestep
mkdir -p "$OUT/r"
gunzip -c "$Z/stencil.cl.gz" > /tmp/candidate.cl
gunzip -c "$R/benchmarks/results/onestep/full-sectors/main/onestep.db.gz" > /tmp/recorded.db
B=WZ=1,BX=1,VX=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1
timeout ${T0:-200} python3 benchmarks/template_ab.py "$OUT/r/ab" --variant /tmp/candidate.cl \
  --store /tmp/recorded.db --top 8 --device NVIDIA --kernels heat3d \
  --config "heat3d:$B,WX=32,WY=4,CX=16,CY=1,ZC=128" --config "heat3d:$B,WX=32,WY=2,CX=4,CY=4,ZC=32" \
  > "$OUT/r/ab.log" 2>&1
echo "ab rc=$?" >> "$OUT/r/rc.txt"
rm -rf "$OUT/r/ab/rendered"
cd "$OUT" && tar czf r.tgz r && rm -rf r
