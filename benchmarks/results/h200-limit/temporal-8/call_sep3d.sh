# 3D temporal tiles' row sums (SEP) on box27 512³, 8 steps, one H200 call:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=560,
#       command="bash benchmarks/results/h200-limit/temporal-8/call_sep3d.sh")
# fixed configurations side by side with the copy (temporal_configs.py), then
# `gtune run`'s defaults (onestep.py). Writes $OUT/sep3d.tgz (configs/, run/).
source .gpu-bundle/env.sh .gpu-bundle
timeout 140 python3 benchmarks/temporal_configs.py "$OUT/configs" \
  benchmarks/temporal_configs/box27-sep-3d.yaml --device NVIDIA --size 512 --rounds 5 \
  > "$OUT/configs.log" 2>&1
echo "rc $?" >> "$OUT/configs.log"
timeout 360 python3 benchmarks/onestep.py "$OUT/run" --device NVIDIA \
  --kernels benchmarks/results/h200-limit/box27-8.stencil.yaml > "$OUT/run.log" 2>&1
echo "rc $?" >> "$OUT/run.log"
mkdir -p "$OUT/configs" "$OUT/run"
mv "$OUT/configs.log" "$OUT/configs/run.log"; mv "$OUT/run.log" "$OUT/run/run.log"
[ -f "$OUT/run/onestep.db" ] && gzip -f "$OUT/run/onestep.db"; rm -f "$OUT/run"/onestep.db-*
tar czf "$OUT/sep3d.tgz" -C "$OUT" configs run && rm -rf "${OUT:?}/configs" "${OUT:?}/run"
