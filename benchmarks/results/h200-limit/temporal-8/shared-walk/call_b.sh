# The shared walk's second form (only the run's number held across a run's walk),
# registers and times, and the first form's (runs-loop.patch) registers, one H200 call:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=400,
#       command="bash benchmarks/results/h200-limit/temporal-8/shared-walk/call_b.sh")
# Writes $OUT/b.tgz (b/, a/).
# Needs the template of commit cfae41c0 (ZW was taken out after these calls).
source .gpu-bundle/env.sh .gpu-bundle
D=benchmarks/results/h200-limit/temporal-8/shared-walk
C=benchmarks/temporal_configs/heat3d-zreg-shared-walk.yaml
timeout 200 python3 benchmarks/temporal_configs.py "$OUT/b" $C --device NVIDIA --size 512 \
  --rounds 7 --ptxas > "$OUT/b.log" 2>&1; echo "rc $?" >> "$OUT/b.log"
timeout 150 python3 benchmarks/temporal_configs.py "$OUT/a" $C --device NVIDIA --size 512 \
  --rounds 3 --ptxas --template $D/runs-loop.patch > "$OUT/a.log" 2>&1; echo "rc $?" >> "$OUT/a.log"
mkdir -p "$OUT/a" "$OUT/b"; mv "$OUT/a.log" "$OUT/a/run.log"; mv "$OUT/b.log" "$OUT/b/run.log"
tar czf "$OUT/b.tgz" -C "$OUT" a b && rm -rf "${OUT:?}/a" "${OUT:?}/b"
