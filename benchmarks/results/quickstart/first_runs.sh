#!/usr/bin/env bash
# The quickstart's tuning command as a newcomer's first run: a fresh result store and
# fresh caches (gtune's space cache, PoCL's kernel cache, models, matplotlib) each time,
# so nothing measured or compiled before is reused.
#   benchmarks/results/quickstart/first_runs.sh OUT N [AGAIN]
# runs it N times, each in OUT/runI/ (run1.json, run1.out); AGAIN=1 runs the same command
# once more on each store (a second run: the store and caches of the first).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=$(realpath -m "$1"); n=${2:-3}; again=${3:-0}
GTUNE=${GTUNE:-.venv/bin/gtune}
for i in $(seq 1 "$n"); do
  d="$out/run$i"; mkdir -p "$d/pocl"
  for k in 1 $([ "$again" = 1 ] && echo 2); do
    uptime > "$d/load$k.txt"
    start=$(date +%s%N)
    GTUNE_CACHE="$d/gcache" POCL_CACHE_DIR="$d/pocl" XDG_DATA_HOME="$d/data" \
      XDG_CACHE_HOME="$d/cache" MPLCONFIGDIR="$d/mpl" \
      $GTUNE --db "$d/store.db" run stencils/heat3d.cl --size 64x64x64 \
      --json "$d/run$k.json" > "$d/run$k.out" 2>&1
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "run$i.$k: $((ms / 1000)).$(printf %03d $((ms % 1000))) s wall (process)" | tee -a "$out/walls.txt"
  done
done
