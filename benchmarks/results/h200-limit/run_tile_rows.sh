#!/bin/bash
# Issue 49: the tile-rows candidate (benchmarks/candidates/tile_rows.patch: TR, the
# temporal-tile kernel's work-items compute TR rows of a level's column at a time, the
# rows they share read once from local memory) against the package on jacobi2d 8192²,
# 8 steps: the recorded winner (temporal-8/: TB 4, block 128x32, work-group 16x16) and
# neighbours, each as the package runs it (TR=1) and with TR (template_ab.py --variant
# --variant-set TR=N), the float4 copy in the same alternating rounds; then the PTX
# counts per point and step (ptx_tile.py: NVIDIA's compiler and ptxas's registers) of both.
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_tile_rows.sh
# Smoke test on PoCL (32 -> 512²; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_tile_rows.sh pthread 32
#
# Writes $OUT/tr4/, $OUT/tr2/, $OUT/tr8/ (template_ab.md, .json), $OUT/ptx.md, logs,
# packed at the end into $OUT/tile_rows.tar.gz beside $OUT/rc.txt.
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512} # template_ab.py: 2D arrays are 16x this (8192²)
rounds=${ROUNDS:-5}
budget=${BUDGET:-230}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
def=$here/jacobi2d-8.stencil.yaml

left() { # seconds left of the budget, at most $1 (times SCALE)
  local l=$((budget - ($(date +%s) - start))) cap=$(($1 * scale))
  [ "$l" -gt "$cap" ] && l=$cap
  [ "$l" -lt 5 ] && l=5
  echo "$l"
}

k=jacobi2d-8
t="STREAM=0,ZC=1,LOCAL=0,VX=1,BX=1,BY=1,RIM=0,RIN=0"
# the winner first, then neighbours within the 48 KiB of local memory (two levels of
# the tile with its halo): other work-groups, taller blocks (TR amortises more rows), TB 8
configs=(
  --config "$k:$t,TB=4,WX=16,WY=16,CX=8,CY=2"
  --config "$k:$t,TB=4,WX=32,WY=8,CX=4,CY=4"
  --config "$k:$t,TB=4,WX=16,WY=16,CX=4,CY=4"
  --config "$k:$t,TB=4,WX=16,WY=16,CX=2,CY=8"
  --config "$k:$t,TB=4,WX=32,WY=8,CX=2,CY=8"
  --config "$k:$t,TB=8,WX=16,WY=16,CX=4,CY=2"
)

ab() { # ab TR LIMIT N: the first N configurations against themselves with TR
  timeout "$(left "$2")" python3 benchmarks/template_ab.py "$OUT/tr$1" \
    --variant benchmarks/candidates/tile_rows.patch --variant-set "TR=$1" \
    --kernels "$def" --device "$dev" --size "$size" --rounds "$rounds" --copy \
    "${configs[@]:0:$((2 * $3))}" > "$OUT/tr$1.log" 2>&1
  echo "tr$1 rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/tr$1/rendered"
}

# TR 4 on all six, TR 8 on the first four (the taller blocks), TR 2 on the winner's two
ab 4 95 6
ab 8 70 4
ab 2 45 2
ptx() { # ptx [TR]: ptx_tile.py's counts of the configurations (with TR=N), from
  # NVIDIA's compiler with ptxas's registers on the GPU host, else clang's
  local c args=() on=()
  for c in "${configs[@]}"; do
    [ "$c" = --config ] || args+=(--config "${c#*:}${1:+,TR=$1}")
  done
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 12)" python3 benchmarks/ptx_tile.py --size $((16 * size)) ${on[@]+"${on[@]}"} \
    ${1:+--template benchmarks/candidates/tile_rows.patch} "${args[@]}"
}
{ ptx; ptx 4; ptx 8; ptx 2; } > "$OUT/ptx.md" 2>&1
echo "ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
# the device tool brings back at most 8 files: everything but rc.txt in one archive
tar -czf "$OUT/tile_rows.tar.gz" -C "$OUT" --exclude=tile_rows.tar.gz --exclude=rc.txt . &&
  find "$OUT" -mindepth 1 -maxdepth 1 ! -name tile_rows.tar.gz ! -name rc.txt -exec rm -rf {} +
