#!/usr/bin/env bash
# Continue the load predictor's labelling campaign on a GPU host, resumably.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/predict/collect.sh STORE_DIR OUT_DIR DEVICE MINUTES
# STORE_DIR holds labels.db.gz (the result store, committed) and the dataset CSV; the
# store is unpacked, `gtune train` labels kernels until MINUTES have passed (every
# configuration lands in the store first, so nothing is lost at the limit), the
# dataset, model card and log are packed into OUT_DIR/collect.tar.gz and the grown
# store into OUT_DIR/labels.db.gz.part.00, .01, ... (`cat` them into labels.db.gz).
# Sizes: 256^3 and the flat 1024x1024x32 (2D-array stencils at 4096^2 and 8192x1024:
# gtune.training.train.size_2d). Techniques: global, vec and stream; local memory and images never won on
# the H100 (REPORT sections 6, 7: 33-40 % of copy where global reached 90 %).
# The limit makes `gtune train` label the cheapest kernels first (--order cheapest), so
# each call adds rows; the dearest (dense radius 4-5) come last.
# A SIGTERM or Ctrl-C (a `timeout` shorter than MINUTES) stops `gtune train` and packs
# the store as it is. Extra `gtune train` arguments come from TRAIN_ARGS, e.g. TRAIN_ARGS="--workers-per-device 2"
# to label on every GPU the device selector matches, two searches per GPU, and
# "--deepen 400" to search close calls (runner-up within 10 %) deeper once every kernel
# is labelled (docs/predictor.md), rows of earlier calls included.
set -euo pipefail
store_dir=$1 out=$2 device=$3 minutes=$4
# the store directory is one device's dataset: refuse to grow it on another device (the
# device tool may lend another GPU than the one asked for); COLLECT_ANY_DEVICE=1 allows it
name=$(python3 -c "import sys
from gtune.exceptions import GtuneError
from gtune.measure import select_device
from gtune.training.train import model_name
try:
    print(model_name(select_device(sys.argv[1]).name, 'hybrid'))
except GtuneError as exc:
    sys.exit(f'collect.sh: {exc}')" "$device") || exit 2
if [ -z "${COLLECT_ANY_DEVICE:-}" ] && ls "$store_dir"/*-hybrid.csv >/dev/null 2>&1 \
    && [ ! -e "$store_dir/$name.csv" ]; then
  echo "collect.sh: $store_dir holds another device's dataset ($(cd "$store_dir" && ls ./*-hybrid.csv | tr '\n' ' '))," \
    "not $name.csv of the device '$device' selects here; nothing was run" >&2
  exit 2
fi
work=$(mktemp -d)
gunzip -c "$store_dir/labels.db.gz" > "$work/labels.db"
mkdir -p "$work/model"
cp "$store_dir"/*.csv "$work/model/" 2>/dev/null || true
set +e
# `gtune train` in the background, so that a SIGTERM or Ctrl-C here (a `timeout`
# shorter than MINUTES) reaches it at once: it stops with every measured configuration
# in the store, and the store is packed below all the same
python3 -m gtune --db "$work/labels.db" train --suite garvey104 \
  --sizes 256x256x256,1024x1024x32 --budget 100 --techniques global,vec,stream \
  --device "$device" --out "$work/model" --max-minutes "$minutes" ${TRAIN_ARGS:-} \
  > >(tee "$work/model/collect.log") 2>&1 &
train=$!
trap 'kill -TERM "$train" 2>/dev/null; echo "collect.sh: stopped early; packing what was measured" >&2' TERM INT
wait "$train"
status=$?
while kill -0 "$train" 2>/dev/null; do  # interrupted: wait for train to stop
  wait "$train"
  status=$?
done
trap - TERM INT
set -e
echo "train exit status $status" >> "$work/model/collect.log"
gzip -9 "$work/labels.db"
tar -C "$work/model" --exclude=./kernels --exclude=./collect -czf "$out/collect.tar.gz" .
# the store beside the tar, in parts of at most 15 MiB: the device tool brings back no
# file over 16 MiB (the H100 store passed that at 17.6 MB); `cat labels.db.gz.part.*`
# joins them
split -b 15m -d -a 2 "$work/labels.db.gz" "$out/labels.db.gz.part."
