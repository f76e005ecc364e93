# temporal-zreg's walk shared by more work-groups than blocks (ZW) on heat3d 512³,
# 8 steps, one H200 call:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=560,
#       command="bash benchmarks/results/h200-limit/temporal-8/shared-walk/call.sh")
# fixed configurations side by side with the copy (temporal_configs.py), then
# `gtune run`'s defaults (onestep.py). Writes $OUT/shared.tgz (configs/, run/).
# Needs the template of commit cfae41c0 (ZW was taken out after these calls).
source .gpu-bundle/env.sh .gpu-bundle
D=benchmarks/results/h200-limit
timeout 170 python3 benchmarks/temporal_configs.py "$OUT/configs" \
  benchmarks/temporal_configs/heat3d-zreg-shared-walk.yaml --device NVIDIA --size 512 \
  --rounds 7 > "$OUT/configs.log" 2>&1
echo "rc $?" >> "$OUT/configs.log"
timeout ${RUN_S:-330} python3 benchmarks/onestep.py "$OUT/run" --device NVIDIA \
  --kernels $D/heat3d-8.stencil.yaml > "$OUT/run.log" 2>&1
echo "rc $?" >> "$OUT/run.log"
mkdir -p "$OUT/configs" "$OUT/run"
mv "$OUT/configs.log" "$OUT/configs/run.log"; mv "$OUT/run.log" "$OUT/run/run.log"
[ -f "$OUT/run/onestep.db" ] && gzip -f "$OUT/run/onestep.db"; rm -f "$OUT/run"/onestep.db-*
tar czf "$OUT/shared.tgz" -C "$OUT" configs run && rm -rf "${OUT:?}/configs" "${OUT:?}/run"
