#!/usr/bin/env bash
# Label kernels from complete searches on a machine of two GPUs: two collect_complete.sh
# at once, one per GPU (CUDA_VISIBLE_DEVICES 0 and 1, each its own device-lock folder,
# its own store and dataset, pinned to half of the host's cores with taskset), each on
# its own groups file. A device call continues the one before from STATE.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/predict/collect_two_gpus.sh OUT DEVICE SECONDS GROUPS_A GROUPS_B [STATE]
# GROUPS_A, GROUPS_B: collect_complete.sh's groups files, for GPU 0 and GPU 1 (kernels
# in both are labelled twice: give each its own). STATE (default .gpu-state) may hold
# STATE/A and STATE/B, each either the OUT/A (OUT/B) of the call before, as it came back
# (collect.tar.gz, labels.db.gz.part.*), or a store labels.db.gz and a dataset
# NAME-hybrid.csv: NAME is the device's (`gtune train`'s model_name, nvidia-h200 on the
# H200); `gtune train` reads no other name, and a dataset it does not read relabels
# every kernel of the groups. Writes OUT/A and OUT/B (collect_complete.sh's outputs),
# OUT/A.log, OUT/B.log, OUT/rc.txt. Allow SECONDS + 60 for an outer timeout.
# TRAIN_ARGS goes to `gtune train`; TRAIN_ARGS_A, TRAIN_ARGS_B replace it for that part
# alone. The default, "--workers-per-device 3 --compile-workers 7" on 16 cores: three
# searches at once on that part's GPU, its timed runs taking turns under the device
# lock, so that the builds of one search fill the cores another leaves idle between its
# steps (label_state.sh's train_args: one search at a time where Dask or cryptography
# is missing). BUNDLE_A, BUNDLE_B: GTUNE_BUNDLE for
# that part alone (configurations built as one program; NVIDIA's default 8). Both
# compare build throughput in one call. Example, on nvidia-h200-x2 (.gpu-state carried):
#   timeout 570 bash benchmarks/predict/collect_two_gpus.sh $OUT/c NVIDIA 480 \
#     .gpu-state/groupsA.txt .gpu-state/groupsB.txt .gpu-state
# then carry OUT/c/A and OUT/c/B back as .gpu-state/A and .gpu-state/B.
set -uo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1 device=$2 seconds=$3 groups_a=$4 groups_b=$5 state=${6:-.gpu-state}
here=$(cd "$(dirname "$0")" && pwd)
for g in "$groups_a" "$groups_b"; do
  [ -f "$g" ] || { echo "collect_two_gpus: $g: no such groups file" >&2; exit 2; }
done
cores=$(nproc)
half=$((cores / 2))
mkdir -p "$out" && : > "$out/rc.txt"

# unpack: the store and dataset of one part, from STATE/PART
. "$here/label_state.sh"

part() { # GPU PART GROUPS FIRST_CORE WORK STORE DATASET
  local gpu=$1 name=$2 groups=$3 first=$4 work=$5 store=$6 dataset=$7 pin=() rc bundle bundle_var args
  local lock
  lock=$(lock_of "$gpu") && mkdir -p "$lock"
  args=$(train_args "$name" "$half")
  command -v taskset > /dev/null && pin=(taskset -c "$first-$((first + half - 1))")
  bundle_var=BUNDLE_$name bundle=${!bundle_var:-${GTUNE_BUNDLE:-}}
  CUDA_VISIBLE_DEVICES=$(gpu_of "$gpu") GTUNE_LOCK_DIR="$lock" PYTHONUNBUFFERED=1 \
    DATASET=$dataset TRAIN_ARGS=$args \
    env ${bundle:+GTUNE_BUNDLE=$bundle} "${pin[@]}" bash "$here/collect_complete.sh" "$out/$name" "$device" "$seconds" \
    "$groups" ${store:+"$store"} > "$out/$name.log" 2>&1
  rc=$?
  echo "$name (GPU $(gpu_of "$gpu")): exit status $rc at $(date -u +%H:%M:%S)" >> "$out/rc.txt"
  return $rc
}

unpack_parts "$state" || exit 2
part 0 A "$groups_a" 0 "$work_a" "$store_a" "$dataset_a" &
a=$!
part 1 B "$groups_b" "$half" "$work_b" "$store_b" "$dataset_b" &
b=$!
rc=0
wait $a || rc=$?
wait $b || rc=$?
cat "$out/rc.txt"
exit $rc
