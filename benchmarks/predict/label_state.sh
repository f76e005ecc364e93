# Sourced by collect_two_gpus.sh and avsa_then_labels.sh: a labelling part's state
# (unpack, unpack_parts) and its `gtune train` arguments (train_args).
# unpack FROM WORK: the store and dataset of one part, from FROM (a call's OUT/c/A as it
# came back: collect.tar.gz, labels.db.gz.part.*; or a store labels.db.gz and a dataset
# NAME-hybrid.csv) into WORK; sets u_store and u_dataset (empty where FROM has none).
# A dataset of another name is refused (status 2): `gtune train` reads only
# NAME-hybrid.csv, and a dataset it does not read relabels every kernel of the groups.
unpack() {
  local from=$1 work=$2 other
  u_store="" u_dataset=""
  [ -d "$from" ] || return 0
  if compgen -G "$from/labels.db.gz.part.*" > /dev/null; then
    cat "$from"/labels.db.gz.part.* > "$work/labels.db.gz" && u_store=$work/labels.db.gz
  elif [ -f "$from/labels.db.gz" ]; then
    u_store=$from/labels.db.gz
  fi
  if [ -f "$from/collect.tar.gz" ]; then
    tar -xzf "$from/collect.tar.gz" -C "$work" --wildcards './*-hybrid.csv' 2> /dev/null
    from=$work
  fi
  other=$(find "$from" -maxdepth 1 -name '*.csv' ! -name '*-hybrid.csv' | head -1)
  if [ -n "$other" ]; then
    echo "$(basename "$0"): $other: gtune train reads only NAME-hybrid.csv; rename it" >&2
    return 2
  fi
  u_dataset=$(find "$from" -maxdepth 1 -name '*-hybrid.csv' | head -1)
}

# unpack_parts STATE: both parts' state (STATE/A, STATE/B) into fresh work folders,
# removed on exit; sets work_a, work_b, store_a, store_b, dataset_a, dataset_b. Returns
# 2 (before any GPU time) where unpack refuses a part.
unpack_parts() {
  work_a=$(mktemp -d) work_b=$(mktemp -d)
  trap 'rm -rf "$work_a" "$work_b"' EXIT
  unpack "$1/A" "$work_a" || return 2
  store_a=$u_store dataset_a=$u_dataset
  unpack "$1/B" "$work_b" || return 2
  store_b=$u_store dataset_b=$u_dataset
}

# train_args PART HALF: `gtune train`'s arguments for one part on HALF cores: TRAIN_ARGS_PART,
# else TRAIN_ARGS, else three searches at once on the part's GPU ("--workers-per-device 3
# --compile-workers (HALF-1)/2"), which labelled 1.7-2.3 times the configurations per
# second of one search at a time on the H200 (h200-complete/README.md, call 11). Three
# searches at once run on a Dask cluster whose TLS credentials need the cryptography
# package: where it or Dask cannot be imported, the part labels one search at a time
# ("--compile-workers HALF-1") and says so on stderr, rather than spend its device time
# on a refusal per group.
train_args() {
  local v=TRAIN_ARGS_$1 half=$2 args
  args=${!v:-${TRAIN_ARGS:---workers-per-device 3 --compile-workers $(((half - 1) / 2 > 1 ? (half - 1) / 2 : 1))}}
  if [[ " $args " == *" --workers-per-device "* ]] \
    && ! python3 -c "import distributed, cryptography" 2> /dev/null; then
    echo "$(basename "$0"): part $1: Dask or cryptography cannot be imported; one search at a time" >&2
    args=$(sed -E 's/--workers-per-device +[0-9]+//; s/--compile-workers +[0-9]+//' <<< "$args")
    args="$args --compile-workers $((half > 1 ? half - 1 : 1))"
  fi
  echo "$args"
}

# gpu_of SLOT, lock_of SLOT: the GPU index and device-lock folder for slot 0 or 1 (part A
# or B, arm 0 or 1). On a machine of two GPUs each slot has its own GPU and lock; on one
# GPU (nvidia-smi lists one, or GPUS=1) both slots share GPU 0 and one lock, so their
# timed runs take turns there while their builds use separate cores.
gpus() {
  local n=${GPUS:-$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')}
  [ "${n:-0}" -ge 2 ] 2> /dev/null && echo 2 || echo 1
}
gpu_of() { [ "$(gpus)" = 2 ] && echo "$1" || echo 0; }
lock_of() { echo "${LOCK_ROOT:-/tmp}/gtune-lock$(gpu_of "$1")"; }
