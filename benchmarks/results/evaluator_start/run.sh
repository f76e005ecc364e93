#!/usr/bin/env bash
# `gtune measure` of heat3d at 64³ (one configuration, 3 timed runs) from an empty store,
# as a whole process: gtune after commit 2d57c27 (A: the measuring worker starts while the
# problem is written and the reference runs) against commit a848a47 (B: one after the
# other), by turns with farm-bench. Run from the repository root.
set -euo pipefail
root=$(pwd)
before=$(mktemp -d)
trap 'git worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$before" a848a47 >/dev/null
export POCL_KERNEL_CACHE=0
cmd="$root/.venv/bin/python -m gtune --db DB measure $root/stencils/heat3d.cl --size 64x64x64 --runs 3"
farm-bench -n 10 --warmup 1 --timeout 400 \
  --vs "sh -c 'rm -f /tmp/eb0.db; PYTHONPATH=$before exec ${cmd/DB//tmp/eb0.db} >/dev/null 2>&1'" \
  -- sh -c "rm -f /tmp/eb1.db; PYTHONPATH=$root exec ${cmd/DB//tmp/eb1.db} >/dev/null 2>&1"
