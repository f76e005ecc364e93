#!/bin/bash
# One step and 8 time steps (temporal blocking) against the float4 copy for a spread of
# garvey104 suite kernels at 512³ (shapes star, dense, thumbtack, diamond, nocorners;
# 1D/2D/3D; radius 1 to 4). One benchmarks/temporal.py run, one copy measurement before
# and after; results are written after every kernel. From the project root:
#   OUT=... bash benchmarks/results/temporal/h100-suite/run.sh
set -u
timeout 540 python3 benchmarks/temporal.py "$OUT/suite" --device NVIDIA --steps 8 --quick \
  --temporal-budget 40 --kernels suite:star_3d_xyz_r1 suite:dense_2d_xy_r1 \
  suite:star_3d_xyz_r2 suite:thumbtack_3d_z_r2 suite:nocorners_3d_xyz_r1 \
  suite:diamond_2d_xz_r2 suite:dense_1d_x_r4 suite:star_2d_yz_r3 > "$OUT/suite.log" 2>&1
echo "rc=$?"
tar czf /tmp/tsuite.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/tsuite.tar.gz "$OUT"/
