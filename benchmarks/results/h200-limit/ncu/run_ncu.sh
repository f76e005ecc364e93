#!/usr/bin/env bash
# Nsight Compute's counters for the H200's winners (issue 49), through their PTX
# (benchmarks/ncu_ptx.py): check (OpenCL against CUDA, bit for bit), profile, summary.
#   OUT=DIR bash benchmarks/results/h200-limit/ncu/run_ncu.sh [extra --config ...]
# VARIANTS="l2-256 st-cs": PTX rewrites timed beside each kernel in the check;
# PROFILE=0: the check alone. ONLY=1: only the --config arguments given (and the copy).
# TEMPLATE=benchmarks/candidates/X.patch: every kernel rendered from that candidate.
# Brings back $OUT/ncu.tar.gz and $OUT/rc.txt.
set -u
OUT=${OUT:?OUT=DIR}
NCU=${NCU:-/usr/local/cuda/bin/ncu}
SIZE=${SIZE:-512}
D=$(mktemp -d)/ncu
mkdir -p "$D"
T=benchmarks/results/onestep/copy-through-template
H8=benchmarks/results/h200-limit/heat3d-8.stencil.yaml
CFG=(
  --config "$T/copy3d.stencil.yaml:WX=64,WY=4,WZ=2,BX=4,VX=4,CY=2,CZ=2,RIM=1"
  --config "$T/copy3d_x.stencil.yaml:WX=64,WY=4,WZ=2,BX=4,VX=4,CY=2,CZ=2,RIM=1"
  --config "heat3d:WX=64,WY=4,WZ=2,BX=4,VX=4,CY=2,CZ=2,RIM=1"
  --config "box27:WX=32,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1,RIM=1,RIN=1"
  --config "box27:WX=64,WY=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,SEP=1,RIM=1,RIN=1"
  --config "laplacian4:WX=32,WY=4,WZ=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,RIM=1"
  --config "$H8:STREAM=1,ZREG=2,ZU=1,TB=2,WX=64,WY=8,CX=1,CY=4,ZC=256"
  --config "$H8:STREAM=1,ZREG=2,ZU=1,TB=4,WX=64,WY=8,CX=1,CY=4,ZC=32"
  "$@"
)
if [ "${ONLY:-0}" = 1 ]; then CFG=("$@"); fi  # ONLY=1: the configurations given alone
rc=""
V=()
for v in ${VARIANTS:-}; do V+=(--ptx-variant "$v"); done
# TEMPLATE=benchmarks/candidates/X.patch: the kernels rendered from a candidate template
if [ -n "${TEMPLATE:-}" ]; then CFG+=(--template "$TEMPLATE"); fi
timeout "${CHECK_S:-200}" python3 benchmarks/ncu_ptx.py "$D" --size "$SIZE" --copy "${CFG[@]}" \
  "${V[@]}" --reps "${REPS:-9}" >"$D/check.log" 2>&1
rc="check=$?"
if [ "${PROFILE:-1}" = 0 ]; then
  echo "$rc" >"$OUT/rc.txt"
  tar czf "$OUT/ncu.tar.gz" -C "$(dirname "$D")" ncu
  cat "$OUT/rc.txt" "$D/check.md"
  exit 0
fi
# NCU_SET: what ncu collects (default: the full set)
timeout "${PROFILE_S:-300}" "$NCU" --clock-control none ${NCU_SET:---set full} --target-processes all \
  --export "$D/prof" -f python3 benchmarks/ncu_ptx.py "$D" --mode profile --size "$SIZE" \
  --copy "${CFG[@]}" >"$D/ncu.log" 2>&1
rc="$rc profile=$?"
"$NCU" --import "$D/prof.ncu-rep" --page raw --csv >"$D/raw.csv" 2>>"$D/ncu.log"
rc="$rc import=$?"
"$NCU" --import "$D/prof.ncu-rep" --page details --csv >"$D/details.csv" 2>>"$D/ncu.log"
python3 benchmarks/ncu_ptx.py "$D" --summary "$D/raw.csv" >>"$D/ncu.log" 2>&1
rc="$rc summary=$?"
echo "$rc" >"$OUT/rc.txt"
tar czf "$OUT/ncu.tar.gz" -C "$(dirname "$D")" ncu
cat "$OUT/rc.txt"
