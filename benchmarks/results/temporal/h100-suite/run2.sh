#!/bin/bash
# The rest of the spread (run.sh's list ended at its 540 s after five kernels): the
# same measurements for diamond_2d_xz_r2, dense_1d_x_r4, star_2d_yz_r3, dense_3d_xyz_r1.
#   OUT=... bash benchmarks/results/temporal/h100-suite/run2.sh
set -u
timeout 540 python3 benchmarks/temporal.py "$OUT/suite2" --device NVIDIA --steps 8 --quick \
  --temporal-budget 40 --kernels suite:diamond_2d_xz_r2 suite:dense_1d_x_r4 \
  suite:star_2d_yz_r3 suite:dense_3d_xyz_r1 > "$OUT/suite2.log" 2>&1
echo "rc=$?"
tar czf /tmp/tsuite.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/tsuite.tar.gz "$OUT"/
