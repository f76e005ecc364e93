#!/usr/bin/env bash
# Cold solves with the space cut into one part per core (commit a848a47) against four
# parts per core solved by a pool of one process per core, by turns on one machine:
# the real stencils' whole spaces at 512³ and, for the small spaces most runs solve, at
# 64³. Run from the repository root; writes before-*.json / after-*.json here.
set -euo pipefail
here=benchmarks/results/space/pool
before=$(mktemp -d)
trap 'git worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$before" a848a47 >/dev/null
for r in 1 2; do
  PYTHONPATH="$before" .venv/bin/python benchmarks/space/bench_large.py "$here/before-512-$r.json" --repeat 1
  .venv/bin/python benchmarks/space/bench_large.py "$here/after-512-$r.json" --repeat 1
  PYTHONPATH="$before" .venv/bin/python benchmarks/space/bench_large.py "$here/before-64-$r.json" --size 64 --repeat 3
  .venv/bin/python benchmarks/space/bench_large.py "$here/after-64-$r.json" --size 64 --repeat 3
done
