#!/usr/bin/env bash
# Issue 49, the 8-step table on nvidia-h200-x2 (carry .gpu-bundle and .gpu-state/next):
#   source .gpu-bundle/env.sh .gpu-bundle && bash .gpu-state/next/call_d.sh > $OUT/call_d.log 2>&1
# GPU 0: heat3d 512^3, GPU 1: jacobi2d 8192^2, each with its own copy kernel, 8 steps,
# every temporal technique tuned with the shipped temporal spec (150 configurations).
set -u
export PYTHONUNBUFFERED=1
run() { # gpu kernel
  CUDA_VISIBLE_DEVICES=$1 GTUNE_LOCK_DIR=/tmp/lock$1 taskset -c $((16 * $1))-$((16 * $1 + 15)) \
    timeout 540 python3 benchmarks/temporal.py $OUT/t$1 --device NVIDIA --steps 8 --budget 20 \
    --temporal-budget 150 --kernels $2 > $OUT/t$1.log 2>&1
  echo "temporal gpu$1 $2 rc $? $(date -u +%T)" >> $OUT/rc.txt
}
mkdir -p /tmp/lock0 /tmp/lock1
run 0 heat3d & run 1 jacobi2d & wait
for i in 0 1; do [ -d $OUT/t$i ] && tar -czf $OUT/t$i.tar.gz -C $OUT t$i && rm -rf $OUT/t$i; done
cat $OUT/rc.txt
