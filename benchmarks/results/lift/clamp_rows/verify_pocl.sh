#!/bin/bash
# clamp_rows.patch bit for bit against the package's template on PoCL (issue 48):
# the nine integer corpus kernels lifted from stencils/plain/ (manifest flags), the
# float clamp and zero definitions of tests/data/definitions/, the lifted float
# blur_clamp; each at BY 2, 4, 8 (3D: BY, BZ 2) against the package's BY=1 code of the
# same configuration, on arrays whose blocks straddle every edge (2D 64x64, 3D 16^3).
#   bash benchmarks/results/lift/clamp_rows/verify_pocl.sh [DEFS_DIR]
set -u
cd "$(dirname "$0")/../../../.."
PY=${PY:-.venv/bin/python}
D=${1:-/tmp/clamp_rows_defs}; mkdir -p "$D"
lift() { k=$1; shift; $PY -m gtune lift stencils/plain/$k.cl --size 32x24 "$@" -o $D/$k.stencil.yaml >/dev/null; }
lift blur_u8 --scalar width=NX --scalar height=NY --default WX=16,WY=8
lift binomial_u16 --scalar w=NX --scalar h=NY --default WX=16,WY=8
lift sharpen_s16 --scalar nx=NX --scalar ny=NY --default WX=16,WY=8
lift smooth_s8 --scalar nx=NX --scalar ny=NY --default WX=16,WY=8
lift smooth_i32 --scalar nx=NX --scalar ny=NY --default WX=16,WY=8
lift gauss_u8_rte --scalar cols=NX --scalar rows=NY --default WX=16,WY=8
lift binomial_shift_u16 --scalar w=NX --scalar h=NY --default WX=16,WY=8
lift prewitt_u8_s16 --scalar w=NX --scalar h=NY --default WX=16,WY=8
lift laplace_u8_f32 --scalar width=NX --scalar height=NY --default WX=16,WY=8
$PY -m gtune lift stencils/plain/blur_clamp.cl --size 32x16 --default WX=16,WY=16 \
  -o $D/blur_clamp.stencil.yaml >/dev/null
C2="WX=2,WY=2,BX=16,VX=16,CX=1,CY=2 WX=4,WY=2,BX=8,VX=8,CX=2,CY=1 WX=4,WY=4,BX=4,VX=4,CX=1,CY=1"
rc=0
run() {  # definition, BY/BZ value set, configurations
  local def=$1 set=$2; shift 2
  local args=()
  for c in "$@"; do args+=(--config "$def:$c"); done
  $PY benchmarks/candidates/clamp_rows.py exact --variant benchmarks/candidates/clamp_rows.patch \
    --variant-set "$set" --kernels "$def" --size "$SIZE" --device pthread "${args[@]}" \
    | tail -1 | sed "s|^|$(basename $def) $set: |"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
}
SIZE=4
for f in $D/*.stencil.yaml tests/data/definitions/jacobi2d_clamp_f64.stencil.yaml \
         tests/data/definitions/thermal2d.stencil.yaml tests/data/definitions/conv2d_zero.stencil.yaml; do
  [ -f "$f" ] || continue
  for by in 2 4 8; do run "$f" "BY=$by" $C2; done
done
SIZE=16
C3="WX=2,WY=2,WZ=1,BX=4,VX=4,CZ=1 WX=1,WY=2,WZ=1,BX=8,VX=8,CZ=2"
for f in tests/data/definitions/star3d_r2_clamp.stencil.yaml tests/data/definitions/thermal3d.stencil.yaml \
         tests/data/definitions/thermal3d_f64.stencil.yaml tests/data/definitions/star3d_zero.stencil.yaml; do
  for s in BY=2 BZ=2 BY=2,BZ=2 BY=4,BZ=4; do run "$f" "$s" $C3; done
done
echo "rc=$rc"
exit $rc
