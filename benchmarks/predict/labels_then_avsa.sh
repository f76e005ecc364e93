#!/usr/bin/env bash
# One device call for issue 46 on a machine of two GPUs (or one: both parts and both
# arms then share GPU 0, label_state.sh's gpu_of): complete-search labels on both
# GPUs (collect_two_gpus.sh, LABEL_SECONDS), then the labels merged into the shipped
# dataset and its card refitted in this checkout (merge_labels.py, refit_card.py), then
# the held-out kernels' arms measured with that model (auto_vs_all.py --holdout, one
# process per GPU, each its share, deadline AVSA_SECONDS). So the model a call labels
# is the one its auto arms pick with.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/predict/labels_then_avsa.sh OUT DEVICE LABEL_SECONDS AVSA_DIR GROUPS_A GROUPS_B [STATE]
# AVSA_DIR: the kernel files of the calls before (AVSA_DIR/kernels/*.json, copied to
# OUT/avsa; an arm retired with `auto_vs_all.py --retire` is measured again). STATE
# (default .gpu-state): STATE/A, STATE/B as for collect_two_gpus.sh. MODEL (default
# nvidia-h200-hybrid): the shipped model (gtune/data/models/MODEL.csv, .model.json).
# AVSA_SECONDS (default 270), ARMS (default auto), HOLDOUT (default 1; 0: the arms pick
# with the model itself, for a check on a device no shipped model fits), KERNELS (default heldout_kernels.txt's
# lines: FILE@SIZE ...). Writes OUT/c/A, OUT/c/B (the labelling
# parts, to carry back as STATE), OUT/model.tar.gz (the merged dataset and the refitted
# card), OUT/avsa.tar.gz (the kernel files and the report) and OUT/logs.tar.gz: seven
# files, within the device tool's eight. Allow LABEL_SECONDS + AVSA_SECONDS + 150 s.
set -uo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1 device=$2 seconds=$3 avsa=$4 groups_a=$5 groups_b=$6 state=${7:-.gpu-state}
here=$(cd "$(dirname "$0")" && pwd)
model=${MODEL:-nvidia-h200-hybrid}
models=gtune/data/models
for f in "$groups_a" "$groups_b" "$avsa/kernels" "$models/$model.csv" "$models/$model.model.json"; do
  [ -e "$f" ] || { echo "labels_then_avsa: $f: not found" >&2; exit 2; }
done
half=$(($(nproc) / 2))
. "$here/label_state.sh" # gpu_of, lock_of: one GPU or two
holdout=$([ "${HOLDOUT:-1}" = 1 ] && echo 1)
mkdir -p "$out/avsa" "$out/logs" && cp -r "$avsa/kernels" "$out/avsa/"
log=$out/logs/rc.txt
: > "$log"
if [ -n "${KERNELS:-}" ]; then
  read -r -a kernels <<< "$KERNELS"
else
  mapfile -t kernels < <(grep -v '^#' "$here/heldout_kernels.txt")
fi

# 1. labels (collect_two_gpus.sh refuses a wrongly named dataset before any GPU time)
timeout $((seconds + 60)) bash "$here/collect_two_gpus.sh" "$out/c" "$device" "$seconds" \
  "$groups_a" "$groups_b" "$state" > "$out/logs/labels.log" 2>&1
echo "labels: exit status $? at $(date -u +%H:%M:%S)" >> "$log"
mv "$out/c/A.log" "$out/c/B.log" "$out/c/rc.txt" "$out/logs/" 2> /dev/null

# 2. the shipped dataset grown by both parts, its card refitted (in this checkout only)
parts=()
for p in A B; do [ -f "$out/c/$p/collect.tar.gz" ] && parts+=("$out/c/$p"); done
if [ ${#parts[@]} -gt 0 ]; then
  python3 "$here/merge_labels.py" "$models/$model.csv" "$models/$model.csv" "${parts[@]}" \
    >> "$out/logs/model.log" 2>&1 &&
    python3 "$here/refit_card.py" "$models/$model.model.json" >> "$out/logs/model.log" 2>&1
  echo "merge and refit: exit status $? at $(date -u +%H:%M:%S)" >> "$log"
fi
tar -czf "$out/model.tar.gz" -C "$models" "$model.csv" "$model.model.json"

# 3. the held-out kernels' arms, with that model (refitted without each kernel's family):
# one process per GPU on its half of the cores; on one GPU one process on all of them, so
# that an arm has the cores it had on two (call 13 ran two on one GPU, 8 cores each, and
# laplacian4's auto arm, built at half the rate, ended at another optimum)
n=$(gpus)
arm() { # GPU
  local i=$1 pin=()
  [ "$n" = 2 ] && command -v taskset > /dev/null && pin=(taskset -c "$((i * half))-$((i * half + half - 1))")
  mkdir -p "$(lock_of "$i")"
  CUDA_VISIBLE_DEVICES=$(gpu_of "$i") GTUNE_LOCK_DIR=$(lock_of "$i") PYTHONUNBUFFERED=1 "${pin[@]}" \
    timeout $((${AVSA_SECONDS:-270} + 40)) python3 "$here/auto_vs_all.py" "$out/avsa" \
    --device "$device" --deadline "${AVSA_SECONDS:-270}" ${holdout:+--holdout} --share "$((i + 1))/$n" \
    --arms "${ARMS:-auto}" --kernels "${kernels[@]}" > "$out/logs/avsa$i.log" 2>&1
  echo "avsa (GPU $(gpu_of "$i")): exit status $? at $(date -u +%H:%M:%S)" >> "$log"
}
pids=()
for ((i = 0; i < n; i++)); do
  arm "$i" &
  pids+=($!)
done
wait "${pids[@]}"
python3 "$here/auto_vs_all.py" "$out/avsa" --report > /dev/null 2>&1
tar -czf "$out/avsa.tar.gz" -C "$out/avsa" . && rm -rf "$out/avsa"
cat "$log"
tar -czf "$out/logs.tar.gz" -C "$out/logs" . && rm -rf "$out/logs"
