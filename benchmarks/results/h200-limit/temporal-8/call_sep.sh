# The temporal tiles' row sums (SEP) on blur5 8192², 8 steps, one H200 call:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=400,
#       command="bash benchmarks/results/h200-limit/temporal-8/call_sep.sh")
# fixed configurations side by side with the copy (temporal_configs.py), then
# `gtune run`'s defaults (onestep.py). Writes $OUT/sep.tgz (configs/, run/).
source .gpu-bundle/env.sh .gpu-bundle
timeout 150 python3 benchmarks/temporal_configs.py "$OUT/configs" \
  benchmarks/temporal_configs/blur5-sep.yaml --device NVIDIA --size 8192 --rounds 5 \
  > "$OUT/configs.log" 2>&1
echo "rc $?" >> "$OUT/configs.log"
timeout 200 python3 benchmarks/onestep.py "$OUT/run" --device NVIDIA \
  --kernels benchmarks/results/h200-limit/blur5-8.stencil.yaml > "$OUT/run.log" 2>&1
echo "rc $?" >> "$OUT/run.log"
mkdir -p "$OUT/configs" "$OUT/run"
mv "$OUT/configs.log" "$OUT/configs/run.log"; mv "$OUT/run.log" "$OUT/run/run.log"
[ -f "$OUT/run/onestep.db" ] && gzip -f "$OUT/run/onestep.db"; rm -f "$OUT/run"/onestep.db-*
tar czf "$OUT/sep.tgz" -C "$OUT" configs run && rm -rf "${OUT:?}/configs" "${OUT:?}/run"
