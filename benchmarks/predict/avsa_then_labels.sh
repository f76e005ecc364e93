#!/usr/bin/env bash
# One device call on a machine of two GPUs for issue 46: on each GPU, its share of the
# held-out kernels' auto-against-all arms still to measure (auto_vs_all.py --share i/2),
# then complete-search labels for the rest of the call (collect_complete.sh on that GPU's
# groups file), so that neither GPU waits for the other.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/predict/avsa_then_labels.sh OUT DEVICE SECONDS AVSA_DIR GROUPS_A GROUPS_B [STATE]
# AVSA_DIR: the kernel files of the calls before (AVSA_DIR/kernels/*.json, copied to
# OUT/avsa; a kernel whose arms are all re-measured is skipped). AVSA_SECONDS (default
# 240): the auto-against-all deadline of each GPU. STATE (default .gpu-state): STATE/A and
# STATE/B as for collect_two_gpus.sh (a call's OUT/c/A, OUT/c/B brought back). Writes
# OUT/avsa.tar.gz (the kernel files and the report), OUT/c/A, OUT/c/B (collect_complete's
# outputs) and OUT/logs.tar.gz (A.log, B.log, avsa0.log, avsa1.log, rc.txt): six files, within
# the device tool's eight. Every part has its own limit inside SECONDS; allow SECONDS + 60
# for an outer timeout. TRAIN_ARGS, TRAIN_ARGS_A, TRAIN_ARGS_B: as for collect_two_gpus.sh.
set -uo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1 device=$2 seconds=$3 avsa=$4 groups_a=$5 groups_b=$6 state=${7:-.gpu-state}
here=$(cd "$(dirname "$0")" && pwd)
for f in "$groups_a" "$groups_b" "$avsa/kernels"; do
  [ -e "$f" ] || { echo "avsa_then_labels: $f: not found" >&2; exit 2; }
done
start=$(date +%s)
half=$(($(nproc) / 2))
mkdir -p "$out/avsa" "$out/c" && cp -r "$avsa/kernels" "$out/avsa/" && : > "$out/rc.txt"
mapfile -t kernels < <(grep -v '^#' "$here/heldout_kernels.txt")


# each labelling part continues STATE/PART (its store and dataset), checked before any
# GPU time is spent
. "$here/label_state.sh"
unpack_parts "$state" || exit 2

gpu() { # GPU PART GROUPS WORK STORE DATASET
  local i=$1 name=$2 groups=$3 work=$4 store=$5 dataset=$6 pin=() left
  command -v taskset > /dev/null && pin=(taskset -c "$((i * half))-$((i * half + half - 1))")
  export CUDA_VISIBLE_DEVICES=$i GTUNE_LOCK_DIR=$work/lock PYTHONUNBUFFERED=1
  mkdir -p "$GTUNE_LOCK_DIR"
  "${pin[@]}" timeout $((${AVSA_SECONDS:-240} + 40)) python3 "$here/auto_vs_all.py" "$out/avsa" \
    --device "$device" --deadline "${AVSA_SECONDS:-240}" --holdout --share "$((i + 1))/2" \
    --kernels "${kernels[@]}" > "$out/avsa$i.log" 2>&1
  echo "avsa (GPU $i): exit status $? at $(date -u +%H:%M:%S)" >> "$out/rc.txt"
  left=$((seconds - ($(date +%s) - start) - 60))
  DATASET=$dataset TRAIN_ARGS="$(train_args "$name" "$half")" \
    "${pin[@]}" bash "$here/collect_complete.sh" "$out/c/$name" "$device" "$left" "$groups" \
    ${store:+"$store"} > "$out/$name.log" 2>&1
  echo "labels $name (GPU $i): exit status $? at $(date -u +%H:%M:%S)" >> "$out/rc.txt"
}

gpu 0 A "$groups_a" "$work_a" "$store_a" "$dataset_a" &
a=$!
gpu 1 B "$groups_b" "$work_b" "$store_b" "$dataset_b" &
b=$!
wait $a $b
python3 "$here/auto_vs_all.py" "$out/avsa" --report > /dev/null 2>&1
tar -czf "$out/avsa.tar.gz" -C "$out/avsa" . && rm -rf "$out/avsa"
cat "$out/rc.txt"
(cd "$out" && tar -czf logs.tar.gz A.log B.log avsa0.log avsa1.log rc.txt && rm -f A.log B.log avsa0.log avsa1.log rc.txt)
