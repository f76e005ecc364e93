#!/bin/bash
# auto_vs_all.py on every GPU of the machine at once: one process per GPU
# (CUDA_VISIBLE_DEVICES=i, its own device-lock folder), each a share of the kernels not
# yet done, all writing their kernel files into one OUT; then the report of every kernel
# in OUT. A tuning starts only if it can end within SECONDS (see auto_vs_all.py).
#
#   bash benchmarks/predict/auto_vs_all_gpus.sh OUT NGPUS SECONDS [DEVICE [ARGS...]]
#
# ARGS go to every auto_vs_all.py (e.g. --holdout --kernels FILE@SIZE ...). Each process
# is pinned to its share of the host's cores (taskset), so that one GPU's builds do not
# slow the other's tunings, whose wall times are measured.
#
# On the GPU host (OUT carried in and out, so that calls continue each other):
#   source .gpu-bundle/env.sh .gpu-bundle && mkdir -p $OUT/avsa && \
#   (tar -xzf .gpu-state/avsa.tar.gz -C $OUT/avsa 2>/dev/null; true) && \
#   timeout 580 bash benchmarks/predict/auto_vs_all_gpus.sh $OUT/avsa 2 480; \
#   tar -czf $OUT/avsa.tar.gz -C $OUT/avsa kernels
set -u
out=$1
n=$2
seconds=$3
device=${4:-NVIDIA}
shift $(( $# < 4 ? $# : 4 ))
cores=$(nproc)
per=$(( cores / n ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
pids=()
for i in $(seq 0 $((n - 1))); do
  pin=()
  if command -v taskset >/dev/null && [ "$per" -ge 2 ]; then
    pin=(taskset -c "$((i * per))-$((i * per + per - 1))")
  fi
  CUDA_VISIBLE_DEVICES=$i GTUNE_LOCK_DIR="${TMPDIR:-/tmp}/gtune-lock-gpu$i" PYTHONUNBUFFERED=1 \
    "${pin[@]}" python3 "$here/auto_vs_all.py" "$out" --device "$device" --deadline "$seconds" \
    --share "$((i + 1))/$n" "$@" >"$out/gpu$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
python3 "$here/auto_vs_all.py" "$out" --report >/dev/null
cat "$out/auto_vs_all.md"
exit $rc
