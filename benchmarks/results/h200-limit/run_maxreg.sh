#!/bin/bash
# Issue 49, one step: NVIDIA's register cap. The package's best one-step configurations
# of laplacian4, box27 and heat3d at 512^3 (as run_zwalk.sh lists them) built as they
# are and with `-cl-nv-maxrregcount=N` (template_ab.py --variant-option), side by side
# with the float4 copy, for each cap N in CAPS, then ptxas's registers and spills of the
# same configurations built each way (h200_ptx.py --option; on NVIDIA only). CONFIGS
# (KERNEL:N=V,... separated by spaces) gives other configurations (run_maxreg_blocks.sh:
# blocks of more planes at 32 registers). The first question (analysis.md, "What the
# numbers say"): laplacian4's winner needs 106 registers, so an SM holds one work-group
# of 512 and 16 KB in flight, half the copy's; at 64 registers it would hold two. A cap
# that wins becomes a tuned parameter; one that spills loses.
#
# From the project root on the GPU host (about 80 s a cap: the verification of the five
# configurations takes most of it; measured 2026-11-30 with CAPS=64: README.md):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_maxreg.sh
# Smoke test on PoCL (256^3: the x tiles are 128 and 256 wide; PoCL has no register cap,
# so an option it takes stands in; 50 s):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 CAPS=1 \
#     OPTION=-cl-mad-enable bash benchmarks/results/h200-limit/run_maxreg.sh pthread 256
#
# Writes $OUT/ab-maxreg-N/ (template_ab.md, .json), $OUT/nv/{package,maxreg-N}.md
# (.json, .ptx.tar.gz) and logs, packed at the end into $OUT/maxreg.tar.gz beside
# $OUT/rc.txt. STEP: the seconds a cap's A/B may take (times SCALE, within BUDGET).
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-230}
scale=${SCALE:-1} # the steps' limits times this (PoCL's smoke test: 10)
caps=(${CAPS:-64 48 80})
option=${OPTION:--cl-nv-maxrregcount=}
step=${STEP:-150}
start=$(date +%s)
mkdir -p "$OUT"

. benchmarks/step_budget.sh # left N: the seconds a step may take

. benchmarks/results/h200-limit/winners.sh # WINNERS
. benchmarks/results/h200-limit/nv_ptx.sh # nv NAME LIMIT CONFIGS [ARGS...]
if [ -n "${CONFIGS:-}" ]; then read -ra given <<< "$CONFIGS"; else given=("${WINNERS[@]}"); fi
configs=() kernels=()
for c in "${given[@]}"; do
  configs+=(--config "$c")
  [[ " ${kernels[*]} " == *" ${c%%:*} "* ]] || kernels+=("${c%%:*}")
done

for n in "${caps[@]}"; do
  name=ab-maxreg-$n
  opt=$option
  [[ "$option" == *= ]] && opt=$option$n
  timeout "$(left "$step")" python3 benchmarks/template_ab.py "$OUT/$name" --variant-option="$opt" \
    --kernels "${kernels[@]}" --device "$dev" --size "$size" --rounds "$rounds" \
    --copy "${configs[@]}" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/$name/rendered"
  nv "maxreg-$n" 40 - --option="$opt" "${configs[@]}"
done
nv package 40 - "${configs[@]}"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack maxreg # the device tool brings back at most 8 files: all but rc.txt in one
