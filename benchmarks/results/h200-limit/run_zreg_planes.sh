#!/bin/bash
# Issue 49: the zreg-planes candidate (benchmarks/candidates/zreg_planes.patch: ZP,
# heat3d's temporal-zreg with ZREG=2 reads and writes a work-item's block points through
# one pointer per plane, constant offsets of its first point, and tests a plane's place
# in the array once per plane, not once per point) against the package on heat3d 512³,
# 8 steps: the H200's recorded TB 2 winners (temporal-8/: 145.7-151.2 % of copy),
# taller columns and TB 4's best, each as the package runs it and with ZP=1
# (template_ab.py --variant --variant-set ZP=1), the float4 copy in the same alternating
# rounds; then the PTX counts per point and step (ptx_tile.py: NVIDIA's compiler and
# ptxas's registers). clang's PTX at the winners' shapes: integer instructions per
# point and step 6.28 -> 3.65 (work-group 64x8, CY 4), 8.04 -> 3.65 (32x16, CX 2 CY 2);
# all 29.55 -> 26.65 and 31.30 -> 26.65.
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_planes.sh
# Smoke test on PoCL (32³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_planes.sh pthread 32
#
# Writes $OUT/zp/ (template_ab.md, .json), $OUT/ptx.md, logs, packed at the end into
# $OUT/zreg_planes.tar.gz beside $OUT/rc.txt.
set -u
CANDIDATE=zreg_planes PARAM=ZP exec bash "$(dirname "$0")/run_zreg_rows.sh" "$@"
