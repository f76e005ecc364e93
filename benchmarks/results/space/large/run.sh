#!/usr/bin/env bash
# Cold solves of the real stencils' whole spaces at 512³ (H100 limits): gtune before the
# packed rows (commit 739354c, one printed integer per parameter) and after, by turns,
# on one machine. Run from the repository root; writes before-N.json / after-N.json here.
set -euo pipefail
here=benchmarks/results/space/large
before=$(mktemp -d)
trap 'git worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$before" 739354c >/dev/null
for r in 1 2; do
  PYTHONPATH="$before" .venv/bin/python benchmarks/space/bench_large.py "$here/before-$r.json" --repeat 1
  .venv/bin/python benchmarks/space/bench_large.py "$here/after-$r.json" --repeat 1
done
