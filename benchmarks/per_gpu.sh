#!/usr/bin/env bash
# Several one-GPU device scripts in one device call, spread over the machine's GPUs:
# command K runs on GPU K mod G (G: the GPUs nvidia-smi lists, at least 1), the commands
# of one GPU one after the other, the GPUs at once. Each command gets its own OUT
# (WORK/NAME, below), CUDA_VISIBLE_DEVICES, device-lock folder (GTUNE_LOCK_DIR) and,
# where taskset exists, its GPU's share of the cores, so that two A/Bs on two GPUs time
# as each would alone (their builds do not take each other's cores). At the end each
# command's folder is packed into OUT/NAME.tar.gz beside OUT/rc.txt (each command's exit
# status and seconds): the device tool brings back at most 8 files, 2 folders down.
# Usage (project root, GPU bundle sourced):
#   bash benchmarks/per_gpu.sh OUT NAME=COMMAND [NAME=COMMAND ...]
# NAME: letters, digits, '_' or '-'; COMMAND: a bash command line that writes under
# "$OUT" (as the run_*.sh scripts do). Example, on nvidia-h200-x2:
#   bash benchmarks/per_gpu.sh $OUT \
#     "maxreg=bash benchmarks/results/h200-limit/run_maxreg_blocks.sh" \
#     "hoist=bash benchmarks/results/lift/conv_hoist/run_conv_hoist.sh"
# GPUS overrides the count (GPUS=1: all on GPU 0, one after the other). A command's own
# timeout is its business; put an outer `timeout` on the whole call.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1
shift
names=() cmds=()
for arg in "$@"; do
  name=${arg%%=*}
  if [ "$name" = "$arg" ] || ! [[ $name =~ ^[A-Za-z0-9_-]+$ ]]; then
    echo "per_gpu: '$arg': not NAME=COMMAND (NAME of letters, digits, _ and -)" >&2
    exit 2
  fi
  for seen in "${names[@]}"; do
    [ "$seen" = "$name" ] && { echo "per_gpu: $name: named twice" >&2; exit 2; }
  done
  names+=("$name") cmds+=("${arg#*=}")
done
gpus=${GPUS:-$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')}
[ "${gpus:-0}" -ge 1 ] 2> /dev/null || gpus=1
cores=$(nproc)
share=$((cores / gpus > 0 ? cores / gpus : 1))
work=$(mktemp -d)
mkdir -p "$out" && : > "$out/rc.txt"

one() { # INDEX GPU: command INDEX on GPU, in its own folder, its exit status logged
  local i=$1 gpu=$2 name=${names[$1]} pin=() t0 rc
  mkdir -p "$work/$name" "$work/lock$gpu"
  command -v taskset > /dev/null && [ "$gpus" -gt 1 ] &&
    pin=(taskset -c "$((gpu * share))-$((gpu * share + share - 1))")
  t0=$(date +%s)
  CUDA_VISIBLE_DEVICES=$gpu GTUNE_LOCK_DIR=$work/lock$gpu OUT=$work/$name \
    "${pin[@]}" bash -c "${cmds[$i]}" > "$work/$name/per_gpu.log" 2>&1
  rc=$?
  echo "$name (GPU $gpu): exit status $rc after $(($(date +%s) - t0)) s" >> "$out/rc.txt"
}

lane() { # GPU: its commands, one after the other
  local gpu=$1 i
  for ((i = gpu; i < ${#names[@]}; i += gpus)); do one "$i" "$gpu"; done
}

pids=()
for ((g = 0; g < gpus && g < ${#names[@]}; g++)); do
  lane "$g" &
  pids+=($!)
done
wait "${pids[@]}"
for name in "${names[@]}"; do
  tar -czf "$out/$name.tar.gz" -C "$work" "$name"
done
rm -rf "$work"
cat "$out/rc.txt"
