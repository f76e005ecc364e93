#!/usr/bin/env bash
# Label kernels for the load predictor from complete searches (every technique searched
# to the end of the hybrid spec: no budget), resumably, on a GPU host.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/predict/collect_complete.sh OUT DEVICE SECONDS [GROUPS_FILE] [STORE]
# GROUPS_FILE (default benchmarks/predict/complete_groups.txt): lines "SIZE FILE...";
# each group is labelled at its size (`gtune train --kernel-files ... --sizes SIZE`,
# cheapest kernels first; "suite:PATTERN" instead of files: the garvey104 suite's kernels
# matching PATTERN), in order: a group may take what is left of SECONDS but RESERVE s
# (default 30) for each group after it (kernels labelled already cost nothing); RESERVE=0
# gives each group all that is left, so a later group runs only once the ones before
# have labelled all their kernels (the most rows when the groups go cheapest first; a
# slice of 30 s labels nothing and costs `gtune train`'s start and fit). STORE: a result
# store (labels.db or labels.db.gz) of an earlier call to continue from; searched
# configurations are
# served from it, kernels whose row is in OUT's dataset are not searched again.
# Writes OUT/labels.db.gz (split into parts of 15 MiB: the device tool brings back no
# larger file) and OUT/collect.tar.gz (dataset CSV, model card, log). Every configuration
# lands in the store first: a time limit loses only the search under way. `gtune train`
# ends its last search, fits and packs after SECONDS: allow 60 s more for an outer timeout
# (more for 3D kernels at 512^3, whose search under way ran 200 s past a 134 s share on
# an H200). An outer timeout's SIGTERM (or SIGINT, SIGHUP) stops `gtune train`, which
# keeps what it measured, and still packs the store and the dataset into OUT.
set -uo pipefail
out=$1 device=$2 seconds=$3
groups=${4:-benchmarks/predict/complete_groups.txt}
store=${5:-}
work=$(mktemp -d)
mkdir -p "$work/model" "$out"
case "$store" in
  *.gz) gunzip -c "$store" > "$work/labels.db" ;;
  "") ;;
  *) cp "$store" "$work/labels.db" ;;
esac
[ -n "${DATASET:-}" ] && cp "$DATASET" "$work/model/"
status=0
logged=1  # 0 while train.log is not yet in collect.log

pack() {
  if [ -f "$work/labels.db" ]; then
    # the store's write-ahead log into the file, should a stopped writer have left one
    python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()' \
      "$work/labels.db" || true
    gzip -6 "$work/labels.db"
  fi
  tar -C "$work/model" --exclude=./kernels -czf "$out/collect.tar.gz" .
  [ -f "$work/labels.db.gz" ] && split -b 15m -d -a 2 "$work/labels.db.gz" "$out/labels.db.gz.part."
}

stopped() {
  trap - TERM INT HUP
  [ "$logged" = 0 ] && [ -f "$work/train.log" ] && cat "$work/train.log" >> "$work/model/collect.log"
  echo "collect_complete: stopped by $1; packing what was measured" | tee -a "$work/model/collect.log" >&2
  pack
  exit 124
}
trap 'stopped SIGTERM' TERM
trap 'stopped SIGINT' INT
trap 'stopped SIGHUP' HUP
start=$(date +%s)
mapfile -t lines < <(grep -v '^\s*#' "$groups" | grep -v '^\s*$')
n=${#lines[@]}
for i in "${!lines[@]}"; do
  read -r size files <<< "${lines[$i]}"
  left=$(( seconds - ($(date +%s) - start) ))
  share=$(( left - ${RESERVE:-30} * (n - i - 1) ))
  [ "$share" -lt 30 ] && { echo "collect_complete: no time left for $size" | tee -a "$work/model/collect.log"; continue; }
  echo "== $size: $share s ($(date -u +%H:%M:%S))" | tee -a "$work/model/collect.log"
  case "$files" in
    suite:*) what=(--suite garvey104 --no-real --kernels "${files#suite:}")
      # rows at another size than the suite's 256^3 are named KERNEL@SIZE
      [ "$size" != 256x256x256 ] && what+=(--size-in-name) ;;
    *) read -r -a what <<< "--kernel-files $files" ;;
  esac
  logged=0
  python3 -m gtune --db "$work/labels.db" train "${what[@]}" --sizes "$size" \
    --techniques global,vec,stream --device "$device" --out "$work/model" \
    --max-minutes "$(python3 -c "print($share / 60)")" --order cheapest ${TRAIN_ARGS:-} \
    > "$work/train.log" 2>&1
  rc=$?
  cat "$work/train.log" >> "$work/model/collect.log"
  logged=1
  echo "train exit status $rc" >> "$work/model/collect.log"
  # 2 before any configuration was measured: `gtune train` refused its input or set-up
  # (the log says why), which the next groups would meet again: stop, rather than spend
  # the call on a refusal per group. (2 after measuring: its share ended before a
  # kernel had every technique searched; the next group has its own share.)
  if [ "$rc" = 2 ] && ! grep -q "configurations measured" "$work/train.log"; then
    echo "collect_complete: gtune train refused the $size group (exit status 2, collect.log says why); the groups after it are not started" \
      | tee -a "$work/model/collect.log" >&2
    status=2
    break
  fi
done
trap - TERM INT HUP
pack
exit "${status:-0}"
