# Sourced by the device-call scripts that run several steps under one time budget
# (benchmarks/results/*/run_*.sh, from the project root): set `budget` (seconds),
# `scale` (each step's limit times this: PoCL's smoke tests take 10) and
# `start=$(date +%s)` first.
# left N: the seconds left of the budget, at most N times scale, and never fewer than 5
# (a step given no time at all would not even write why it stopped).
left() {
  local l=$((budget - ($(date +%s) - start))) cap=$(($1 * scale))
  [ "$l" -gt "$cap" ] && l=$cap
  [ "$l" -lt 5 ] && l=5
  echo "$l"
}

# pack NAME: everything in OUT but rc.txt into OUT/NAME.tar.gz, the rest removed (the
# device tool brings back at most 8 files). The archive is written outside OUT first:
# written inside, tar sees its own folder change ("file changed as we read it"), exits
# 1, and the clean-up after it never ran (2026-11-30).
pack() {
  local archive
  archive=$(mktemp "${TMPDIR:-/tmp}/pack.XXXXXX") &&
    tar -czf "$archive" -C "$OUT" --exclude=rc.txt . &&
    find "$OUT" -mindepth 1 -maxdepth 1 ! -name rc.txt -exec rm -rf {} + &&
    mv "$archive" "$OUT/$1.tar.gz"
}
