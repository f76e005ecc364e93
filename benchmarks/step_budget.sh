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
