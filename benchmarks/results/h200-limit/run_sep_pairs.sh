#!/bin/bash
# Issue 49: the sep_pairs candidate (benchmarks/candidates/sep_pairs.patch: a separable
# stencil's factors summed with the centre weight 1 and each pair of equal weights at
# +-d added before one multiply-add; clang's PTX: box27's default ends 21-22 % fewer
# instructions per output, the same loads and registers) against the package, then
# `gtune run`'s defaults on box27 with it.
#   1. template_ab.py: the defaults' two box27 ends and the vector-shape A/B's, as the
#      package renders them and with the candidate, ROUNDS alternating rounds with the
#      float4 copy (every configuration verified in both renderings first);
#   2. NVIDIA's PTX counts and ptxas's registers of the same (h200_ptx.py --device);
#   3. the candidate applied to this copy of the tree (the device's; the package in git
#      is not touched) and benchmarks/onestep.py's defaults on box27 (a search from an
#      empty store, the winner re-measured with the copy), as defaults-vector-shape/.
#
# From the project root on the GPU host (about 8 minutes; one GPU):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_sep_pairs.sh
# Smoke test on PoCL (128³, the defaults at 32³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 SMALL=--small \
#     bash benchmarks/results/h200-limit/run_sep_pairs.sh pthread 128
#
# Writes $OUT/ab/ (template_ab.md, .json), $OUT/ptx_*.md, $OUT/defaults/ (onestep.md,
# .json, the store gzipped), logs, packed at the end into $OUT/sep_pairs.tar.gz beside
# $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-7}
budget=${BUDGET:-540}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
patch=benchmarks/candidates/sep_pairs.patch

. benchmarks/step_budget.sh # left N: the seconds a step may take

t="WX=32,WY=2,WZ=2,VX=4,BX=4,RIM=1,RIN=1,SEP=1"
configs=(
  --config "box27:$t,BY=4,BZ=4"
  --config "box27:$t,BY=2,BZ=2,CZ=2"
  --config "box27:$t,BY=4,BZ=2,CX=2"
)
timeout "$(left 150)" python3 benchmarks/template_ab.py "$OUT/ab" --variant "$patch" \
  --kernels box27 --device "$dev" --size "$size" --rounds "$rounds" --copy \
  "${configs[@]}" > "$OUT/ab.log" 2>&1
echo "ab rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/ab/rendered"

on=()
case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
for which in package candidate; do
  template=()
  [ "$which" = candidate ] && template=(--template "$patch")
  timeout "$(left 40)" python3 benchmarks/h200_ptx.py "$OUT/ptx_$which.md" ${on[@]+"${on[@]}"} \
    ${template[@]+"${template[@]}"} "${configs[@]}" > "$OUT/ptx_$which.log" 2>&1
  echo "ptx $which rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
done

# the defaults with the candidate: this tree's template replaced (the device's copy)
tpl=gtune/data/templates/stencil.cl
keep=$(mktemp) && cp "$tpl" "$keep" && python3 benchmarks/candidate.py "$patch" > "$keep.new" &&
  cp "$keep.new" "$tpl"
timeout "$(left 330)" python3 benchmarks/onestep.py "$OUT/defaults" --device "$dev" \
  ${SMALL:-} --kernels box27 > "$OUT/defaults.log" 2>&1
echo "defaults rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
cp "$keep" "$tpl" && rm -f "$keep" "$keep.new" # the package's template back
[ -f "$OUT/defaults/onestep.db" ] && gzip -f "$OUT/defaults/onestep.db"
rm -f "$OUT/defaults"/onestep.db-*
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack sep_pairs # the device tool brings back at most 8 files: all but rc.txt in one
