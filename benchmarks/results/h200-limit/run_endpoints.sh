#!/bin/bash
# Issue 49 (and 48): where `gtune run`'s defaults end, run after run. The same search
# of laplacian4 has ended at 0.295 ms and at 0.310-0.312 ms (a VX 2 basin), box27's at
# 295 and 312 us before the rows step, and the lifted blur_clamp's stream search at
# 152.6 and 160.6 us: one-step targets that a search meets in one run and misses in
# the next. This measures that spread and keeps what a replay needs: REPEATS
# independent runs of benchmarks/onestep.py (the defaults, each from an empty store,
# winners re-measured with the copy), each run's store gzipped beside its summary, so
# that a change to the hybrid spec can be replayed offline against every configuration
# the runs measured.
#
# From the project root on one H200 (about 3 minutes a repeat with the two default
# kernels; with two GPUs, one call per GPU through benchmarks/per_gpu.sh):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT REPEATS=2 bash benchmarks/results/h200-limit/run_endpoints.sh
# Smoke test on PoCL (32^3):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/ends REPEATS=1 SMALL=--small bash benchmarks/results/h200-limit/run_endpoints.sh pthread
#
# Writes $OUT/endpoints.tar.gz (per repeat rK/: onestep.md, .json, the log, the store
# as onestep.db.gz) beside $OUT/rc.txt. KERNELS overrides the kernels (names or
# NAME.stencil.yaml paths).
set -u
dev=${1:-NVIDIA}
budget=${BUDGET:-540}
scale=1
start=$(date +%s)
mkdir -p "$OUT"
. benchmarks/step_budget.sh # left N, pack NAME
read -ra kernels <<< "${KERNELS:-laplacian4 box27}"
for ((k = 1; k <= ${REPEATS:-2}; k++)); do
  timeout "$(left "$budget")" python3 benchmarks/onestep.py "$OUT/r$k" --device "$dev" \
    ${SMALL:-} --kernels "${kernels[@]}" > "$OUT/r$k.log" 2>&1
  echo "r$k rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  [ -f "$OUT/r$k/onestep.db" ] && gzip -f "$OUT/r$k/onestep.db"
  rm -f "$OUT/r$k"/onestep.db-*
done
pack endpoints
