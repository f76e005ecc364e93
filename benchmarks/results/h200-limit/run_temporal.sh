#!/usr/bin/env bash
# 8 steps of heat3d 512³ and jacobi2d 8192² against the copy with the widened temporal
# spec (README.md in temporal-8/), within 540 s. Two GPUs (nvidia-h200-x2): heat3d on
# GPU 0 (cores 0-15), then the fixed deep-TB configurations of heat3d's temporal-zreg
# (benchmarks/temporal_configs/heat3d-zreg-deep.yaml); jacobi2d on GPU 1 (cores 16-31),
# at the same time. One GPU: the same one after another (the configurations only if
# time is left). Writes 4 files under $OUT: t0.tar.gz, t1.tar.gz, c0.tar.gz (each with
# its log) and run.log (each part's exit status).
#   run(kind="nvidia-h200-x2", carry=[".gpu-bundle"], timeout_s=570, command="source
#     .gpu-bundle/env.sh .gpu-bundle && bash benchmarks/results/h200-limit/run_temporal.sh")
# On PoCL (a check of the script, small sizes):
#   OUT=/tmp/o DEVICE=pthread SIZE=32 SIZE2D=256 bash benchmarks/results/h200-limit/run_temporal.sh
# DEEP=0 leaves out the fixed configurations (heat3d's measured in call 12:
# temporal-8/README.md). KERNELS=jacobi2d runs jacobi2d alone, then its temporal tiles
# with TR 1-8 fixed (temporal_configs/jacobi2d-tile-rows.yaml), within 400 s on one GPU
# (t1.tar.gz, c1.tar.gz, run.log):
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=400, command="source
#     .gpu-bundle/env.sh .gpu-bundle && KERNELS=jacobi2d bash benchmarks/results/h200-limit/run_temporal.sh")
set -u
: "${OUT:?set OUT}"
DEVICE=${DEVICE:-NVIDIA}
SIZE=${SIZE:-512}
SIZE2D=${SIZE2D:-8192}
PY=${PY:-python3}
DEEP=${DEEP:-1}
KERNELS=${KERNELS:-heat3d jacobi2d}
[ -x .venv/bin/python ] && [ "$DEVICE" != NVIDIA ] && PY=.venv/bin/python
if [ -z "${GPUS:-}" ]; then
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "${GPUS:-0}" -ge 1 ] 2>/dev/null || GPUS=1
fi
export PYTHONUNBUFFERED=1
START=$(date +%s)
left() { echo $((535 - ($(date +%s) - START))); }
log() { echo "$(date -u +%T) $*" | tee -a "$OUT/run.log"; }
mkdir -p "$OUT"

launch() { # gpu command...: on two GPUs pinned to that GPU and its 16 cores
  local g=$1
  shift
  mkdir -p "/tmp/gtune-lock$g"
  if [ "$GPUS" -ge 2 ]; then
    CUDA_VISIBLE_DEVICES=$g GTUNE_LOCK_DIR=/tmp/gtune-lock$g \
      taskset -c $((16 * g))-$((16 * g + 15)) "$@"
  else
    GTUNE_LOCK_DIR=/tmp/gtune-lock$g "$@"
  fi
}

temporal() { # gpu kernel seconds
  mkdir -p "$OUT/t$1"
  launch "$1" timeout "$3" "$PY" benchmarks/temporal.py "$OUT/t$1" --device "$DEVICE" \
    --size "$SIZE" --size2d "$SIZE2D" --steps 8 --budget 20 --temporal-budget 150 \
    --kernels "$2" > "$OUT/t$1.log" 2>&1
  log "temporal $2 gpu$1 rc $?"
  mv "$OUT/t$1.log" "$OUT/t$1/run.log"
}

fixed() { # gpu seconds name size: fixed configurations (benchmarks/temporal_configs/)
  mkdir -p "$OUT/c$1"
  launch "$1" timeout "$2" "$PY" benchmarks/temporal_configs.py "$OUT/c$1" \
    "benchmarks/temporal_configs/$3.yaml" --device "$DEVICE" --size "$4" \
    --rounds 3 > "$OUT/c$1.log" 2>&1
  log "configs $3 gpu$1 rc $?"
  mv "$OUT/c$1.log" "$OUT/c$1/run.log"
}
deep() { # gpu seconds: heat3d's fixed deep-TB temporal-zreg configurations
  fixed "$1" "$2" heat3d-zreg-deep "$SIZE"
}

log "gpus $GPUS device $DEVICE sizes $SIZE / $SIZE2D kernels $KERNELS deep $DEEP"
if [ "$KERNELS" = jacobi2d ]; then # the search, then TR through the package, fixed
  temporal 1 jacobi2d 300
  [ "$DEEP" = 1 ] && [ "$(left)" -gt 60 ] && fixed 1 $(($(left) - 10)) jacobi2d-tile-rows "$SIZE2D"
elif [ "$KERNELS" = heat3d ]; then # the search alone, then the deep-TB configurations
  temporal 0 heat3d 330
  [ "$DEEP" = 1 ] && [ "$(left)" -gt 90 ] && deep 0 $(($(left) - 10))
elif [ "$GPUS" -ge 2 ]; then
  (temporal 0 heat3d 330; [ "$DEEP" = 1 ] && deep 0 $(($(left) - 10))) &
  temporal 1 jacobi2d 300 &
  wait
else
  temporal 0 heat3d 300
  temporal 1 jacobi2d $(($(left) - 60 > 200 ? 200 : $(left) - 60))
  [ "$DEEP" = 1 ] && [ "$(left)" -gt 90 ] && deep 0 $(($(left) - 10))
fi
for d in t0 t1 c0 c1; do
  [ -d "$OUT/$d" ] && tar -czf "$OUT/$d.tar.gz" -C "$OUT" "$d" && rm -rf "${OUT:?}/$d"
done
log "done in $(($(date +%s) - START)) s"
