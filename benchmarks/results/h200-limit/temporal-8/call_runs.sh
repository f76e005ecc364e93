# Two independent `gtune run` searches (fresh stores) of heat3d and jacobi2d with 8 steps,
# each with the copy side by side (benchmarks/onestep.py), within 570 s on one H200:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=590,
#       command="bash benchmarks/results/h200-limit/temporal-8/call_runs.sh")
# RUNS="r3" runs one search of each, into r3/. Writes $OUT/runs.tgz (r1/, r2/: onestep.md, .json, .png, .tuned.json, the log, the store gzipped).
source .gpu-bundle/env.sh .gpu-bundle
D=benchmarks/results/h200-limit
for r in ${RUNS:-r1 r2}; do
  timeout 275 python3 benchmarks/onestep.py "$OUT/$r" --device NVIDIA \
    --kernels $D/heat3d-8.stencil.yaml $D/jacobi2d-8.stencil.yaml > "$OUT/$r.log" 2>&1
  echo "rc $?" >> "$OUT/$r.log"
  mkdir -p "$OUT/$r" && mv "$OUT/$r.log" "$OUT/$r/run.log"
  [ -f "$OUT/$r/onestep.db" ] && gzip -f "$OUT/$r/onestep.db"; rm -f "$OUT/$r"/onestep.db-*
done
tar czf "$OUT/runs.tgz" -C "$OUT" ${RUNS:-r1 r2} && (cd "$OUT" && rm -rf ${RUNS:-r1 r2})
