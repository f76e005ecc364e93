# One H100 call (issue 27): the full-sector candidate against the package's template,
# configuration by configuration (benchmarks/template_ab.py), on the copies with a halo
# along one axis, the radius-0 copy (control) and heat3d, box27 in the streaming
# technique; then the H100 predictor collection continues for the rest of the call.
# Run in the project root on the GPU host:  OUT=... bash benchmarks/results/onestep/full-sectors/run-ab.sh
set -u
source .gpu-bundle/env.sh .gpu-bundle
R=$PWD
D=$R/benchmarks/results/onestep/copy-through-template
E=$R/benchmarks/results/onestep/full-sectors
mkdir -p "$OUT/r"
gunzip -c "$E/stencil.cl.gz" > /tmp/candidate.cl
gunzip -c "$E/main/onestep.db.gz" > /tmp/recorded.db
B=WZ=1,BX=1,VX=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1
TILES="WX=32,WY=4,CX=16,CY=1,ZC=1 WX=32,WY=4,CX=16,CY=1,ZC=128 WX=16,WY=4,CX=32,CY=1,ZC=128 WX=32,WY=4,CX=4,CY=1,ZC=128"
ARGS=()
for k in copy3d copy3d_x copy3d_y heat3d box27; do
  for t in $TILES; do ARGS+=(--config "$k:$B,$t"); done
done
timeout ${T0:-240} python3 benchmarks/template_ab.py "$OUT/r/ab" --variant /tmp/candidate.cl \
  --store /tmp/recorded.db --top 3 --device NVIDIA --kernels "$D/copy3d.stencil.yaml" \
  "$D/copy3d_x.stencil.yaml" "$D/copy3d_y.stencil.yaml" heat3d box27 "${ARGS[@]}" \
  > "$OUT/r/ab.log" 2>&1
echo "ab rc=$?" >> "$OUT/r/rc.txt"
rm -rf "$OUT/r/ab/rendered"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
if [ "${COLLECT_MIN:-0}" != 0 ]; then
  TRAIN_ARGS="--workers-per-device 2 --relabel-changed" timeout ${T1:-330} bash benchmarks/predict/collect.sh \
    benchmarks/results/predict/h100-scale "$OUT" NVIDIA "$COLLECT_MIN"
  echo "collect rc=$?"
fi
