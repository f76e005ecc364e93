#!/usr/bin/env bash
# Set up gtune on a Debian/Ubuntu machine if needed, then run a command inside its
# virtualenv.  Usage:
#   ./bootstrap.sh gtune run stencils/heat3d.cl     # any command, run in .venv
#   ./bootstrap.sh test [pytest args]                # the test suite, every tier
#   GTUNE_TEST_JOBS=2 ./bootstrap.sh test             # ... in two processes at once
# Installs (as root, when missing) the system packages minizinc, pocl-opencl-icd,
# ocl-icd-libopencl1, clinfo, python3-venv, postgresql (the tests start a throw-away
# PostgreSQL server), and gcc, opencl-headers and ocl-icd-opencl-dev (the C example
# in examples/c_host); creates .venv; installs gtune with its dev extras. Re-running is
# cheap: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${GTUNE_VENV:-.venv}
PY=${PYTHON:-python3}

need=()
command -v minizinc >/dev/null || need+=(minizinc)
command -v fzn-gecode >/dev/null || { [ -n "$(ls /usr/share/minizinc/solvers/gecode.msc 2>/dev/null)" ] || need+=(minizinc); }
[ -n "$(ls /etc/OpenCL/vendors/*.icd 2>/dev/null)" ] || need+=(pocl-opencl-icd)
ldconfig -p 2>/dev/null | grep -q 'libOpenCL.so.1' || need+=(ocl-icd-libopencl1)
command -v clinfo >/dev/null || need+=(clinfo)
command -v cpp >/dev/null || need+=(cpp)  # the C preprocessor reads plain kernels
command -v cc >/dev/null || need+=(gcc)  # the C example of a bundle (examples/c_host)
[ -f /usr/include/CL/cl.h ] || need+=(opencl-headers)
[ -n "$(ls /usr/lib/*/libOpenCL.so /usr/lib/libOpenCL.so 2>/dev/null)" ] || need+=(ocl-icd-opencl-dev)
command -v "$PY" >/dev/null || need+=(python3)
"$PY" -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# Debian keeps initdb and pg_ctl in /usr/lib/postgresql/VERSION/bin, off PATH.
command -v initdb >/dev/null || [ -n "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" ] \
  || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing ${need[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "bootstrap: missing system packages: ${need[*]}" >&2
    echo "bootstrap: install them first, e.g.: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.gtune-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing gtune and its dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[dev]"
  touch "$stamp"
fi

export PATH="$PWD/$VENV/bin:$PATH"
if [ $# -eq 0 ]; then
  echo "bootstrap: ready; run e.g. ./bootstrap.sh gtune devices" >&2
  exit 0
fi
if [ "$1" = test ]; then
  shift
  # The suite starts many Python processes (measure and compile workers, commands run
  # as users run them), each importing gtune; compiled once here, they read bytecode
  # even where PYTHONDONTWRITEBYTECODE keeps Python from writing it.
  "$VENV/bin/python" -m compileall -q gtune examples >/dev/null || true
  jobs=${GTUNE_TEST_JOBS:-1}
  if [ "$jobs" -le 1 ]; then
    exec "$VENV/bin/python" -m pytest --all-tiers "$@"
  fi
  # GTUNE_TEST_JOBS=N: N pytest processes at once, each a share of the test files
  # (--shard, tests/conftest.py) with its own temporary folder and its own device lock
  # (GTUNE_LOCK_DIR): the tests' timings are checks, not measurements, and with one
  # lock for all a share's probe or timed run waited for the others' builds on the CPU
  # device (three test files at once, each its own share: 106.6 s with one lock, 85.2
  # s with one each, 2026-11-30). Their reports follow one another and the exit status
  # is the worst of theirs.
  work=$(mktemp -d "${TMPDIR:-/tmp}/gtune-tests-XXXXXX")
  pids=()
  trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$work"; exit 130' INT TERM
  for k in $(seq 1 "$jobs"); do
    mkdir -p "$work/locks$k"
    GTUNE_LOCK_DIR="$work/locks$k" "$VENV/bin/python" -m pytest --all-tiers --shard "$k/$jobs" \
      --basetemp "$work/tmp$k" "$@" >"$work/$k.log" 2>&1 &
    pids+=($!)
  done
  status=0 empty=0
  for k in $(seq 1 "$jobs"); do
    rc=0
    wait "${pids[k - 1]}" || rc=$?
    echo "== tests: share $k of $jobs (exit status $rc) =="
    cat "$work/$k.log"
    if [ "$rc" = 5 ]; then  # no test in this share (few files named)
      empty=$((empty + 1))
    elif [ "$rc" -gt "$status" ]; then
      status=$rc
    fi
  done
  rm -rf "$work"
  [ "$empty" -lt "$jobs" ] || status=5
  exit "$status"
fi
exec "$@"
