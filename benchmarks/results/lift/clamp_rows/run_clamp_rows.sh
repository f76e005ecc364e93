#!/bin/bash
# Issue 48: row blocks for the clamp boundary (benchmarks/candidates/clamp_rows.patch,
# with clamp_rows.py's launch of BY rows per work-item). The package's vec winners at
# 8192^2 (benchmarks/results/lift/int_words-h200/stream_vs_vec/summary.json) against
# the same configurations in the candidate's template with BY 2, 4 and 8
# (template_ab.py --variant --variant-set BY=N, through clamp_rows.py ab), the float4
# copy in the same rounds; then NVIDIA's own PTX of blur_u8 at VX 16 and BY 1, 2, 4, 8
# (ptx_int_loads.py --device NVIDIA --bodies, through clamp_rows.py ptx): the
# int-to-float cvt and loads per output the prediction counts
# (benchmarks/results/lift/int_words.md, "Row blocks for the clamp boundary").
#
# From the project root on the GPU host (about 2.5 minutes a row count; BYS picks them,
# default 4 8 2; each A/B has AB_LIMIT, default 160 s: on 2026-11-30 the like A/Bs of
# no_cvt/ spent over 70 s verifying before their first round; NVIDIA's PTX comes first):
#   source .gpu-bundle/env.sh .gpu-bundle && BYS=4 OUT=$OUT bash benchmarks/results/lift/clamp_rows/run_clamp_rows.sh
# Smoke test on PoCL (256^2: the configurations are 256 wide in x; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/clamp_rows_smoke ROUNDS=1 BUDGET=900 SCALE=10 \
#     bash benchmarks/results/lift/clamp_rows/run_clamp_rows.sh pthread 16
#
# Each step has its own time limit, cut to what is left of BUDGET seconds. Writes
# $OUT/defs/ (the lifted definitions), $OUT/ab-by{2,4,8}/ (template_ab.md, .json),
# $OUT/ptx-by{1,2,4,8}.md and the package's ptx-package.md, logs, packed at the end
# into $OUT/clamp_rows.tar.gz beside $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512} # template_ab's: 2D arrays 16 x this square (512: 8192^2)
rounds=${ROUNDS:-5}
budget=${BUDGET:-560}
bys=(${BYS:-4 8 2})
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 10)
start=$(date +%s)
mkdir -p "$OUT/defs"
D=$OUT/defs

. benchmarks/step_budget.sh # left N: the seconds a step may take

. benchmarks/results/lift/int_defs.sh # lift_five: the lifted definitions
lift_five

# the package's vec winners (gtune run --technique vec, 150 configurations, 8192^2)
configs=(
  --config blur_u8:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
  --config gauss_u8_rte:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
  --config smooth_s8:WX=8,WY=4,BX=16,VX=16,CX=2,CY=1,LOCAL=0,STREAM=0,ZC=1,RIM=0,RIN=0
  --config binomial_u16:WX=16,WY=4,BX=8,VX=8,CX=1,CY=1,LOCAL=0,STREAM=0,ZC=1,SEP=0
)

ab() { # ab BY LIMIT: each winner against itself with BY rows in the candidate's template
  local n=ab-by$1
  timeout "$(left "$2")" python3 benchmarks/candidates/clamp_rows.py ab "$OUT/$n" \
    --variant benchmarks/candidates/clamp_rows.patch --variant-set BY=$1 \
    --kernels $D/blur_u8.stencil.yaml $D/gauss_u8_rte.stencil.yaml $D/smooth_s8.stencil.yaml \
    $D/binomial_u16.stencil.yaml --device "$dev" --size "$size" --rounds "$rounds" --copy \
    "${configs[@]}" > "$OUT/$n.log" 2>&1
  echo "$n rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$n/rendered"
}

ptx() { # ptx NAME BY [--template FILE]: NVIDIA's PTX of blur_u8 at VX 16
  local name=$1 by=$2
  shift 2
  case "$dev" in
    *NVIDIA* | *nvidia*) ;;
    *) echo "ptx $name: skipped (no PTX from $dev)" >> "$OUT/rc.txt"; return ;;
  esac
  timeout "$(left 15)" python3 benchmarks/candidates/clamp_rows.py ptx $D/blur_u8.stencil.yaml \
    --device "$dev" --bodies --vx 16 --config WX=8,WY=4,CX=2,BY=$by "$@" \
    > "$OUT/ptx-$name.md" 2>&1
  echo "ptx $name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}

ptx package 1
for by in 2 4 8; do ptx by$by $by --template benchmarks/candidates/clamp_rows.patch; done
for by in "${bys[@]}"; do ab "$by" "${AB_LIMIT:-160}"; done
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack clamp_rows # the device tool brings back at most 8 files: all but rc.txt in one
