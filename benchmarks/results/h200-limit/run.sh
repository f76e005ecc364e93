#!/bin/bash
# Issue 49, the H200's one-step ceiling: the one device call. The two candidate templates
# (benchmarks/candidates/) against the package's, configuration by configuration, with
# the float4 copy in the same rounds (benchmarks/template_ab.py), on the H200's recorded
# winners: the 4 fastest vec configurations of each kernel in its complete searches
# (../predict/h200-complete/traces.json; configurations from configs.json, written out
# here because the labelling store does not travel) and one block of more rows each
# (a probe: does a candidate move the optimum?). Then ptxas's registers and spills and
# NVIDIA's own PTX of every configuration in each template (benchmarks/h200_ptx.py).
#
# From the project root on the GPU host (about 8 minutes):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run.sh
# Smoke test on PoCL (about a minute):
#   OUT=/tmp/smoke KERNELS=jacobi2d bash benchmarks/results/h200-limit/run.sh pthread 64
#
# Each step has its own time limit, cut to what is left of BUDGET seconds, so a slow
# step loses only itself; the most important comes first. Writes $OUT/ab-CANDIDATE/
# (template_ab.md, .json), $OUT/nv/TEMPLATE.md (.json, .ptx.tar.gz), logs, rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-530}
kernels=(${KERNELS:-heat3d box27 laplacian4 jacobi2d})
cands=benchmarks/candidates
start=$(date +%s)
mkdir -p "$OUT"

left() { # seconds left of the budget, at most $1
  local l=$((budget - ($(date +%s) - start)))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 5 ] && l=5
  echo "$l"
}

configs=(
  # heat3d 512^3: 281.3, 281.5, 282.2, 282.4 us (vec), 288.9 us (probe: BZ 4)
  --config heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=2,WZ=2,ZC=1
  --config heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=4,WZ=2,ZC=1
  --config heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=4,WZ=2,ZC=1
  --config heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=2,WZ=2,ZC=1
  --config heat3d:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=2,WZ=1,ZC=1
  # box27 512^3: 314.5, 315.5, 317.8, 319.0 us (vec), 321.0 us (probe: BY 4, BZ 2)
  --config box27:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,SEP=1,STREAM=0,VX=4,WX=32,WY=2,WZ=1,ZC=1
  --config box27:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,SEP=1,STREAM=0,VX=4,WX=32,WY=4,WZ=1,ZC=1
  --config box27:BX=4,BY=4,BZ=4,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,SEP=1,STREAM=0,VX=4,WX=32,WY=2,WZ=1,ZC=1
  --config box27:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,SEP=1,STREAM=0,VX=4,WX=32,WY=2,WZ=2,ZC=1
  --config box27:BX=4,BY=4,BZ=2,CX=1,CY=1,CZ=1,IMAGE=0,LOCAL=0,RIM=1,SEP=1,STREAM=0,VX=4,WX=32,WY=2,WZ=1,ZC=1
  # laplacian4 512^3: 304.4, 304.5, 306.1, 307.1 us (vec), 313.6 and 333.6 us (probes: BY 2; BZ 4)
  --config laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=16,WZ=1,ZC=1
  --config laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=16,WZ=1,ZC=1
  --config laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=8,WZ=1,ZC=1
  --config laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=8,WZ=1,ZC=1
  --config laplacian4:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=32,WY=16,WZ=1,ZC=1
  --config laplacian4:BX=4,BY=1,BZ=4,CX=1,CY=1,CZ=2,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=8,WZ=1,ZC=1
  # jacobi2d 8192^2: 132.7, 133.4, 133.7, 134.0 us (vec), 134.8 us (probe: BY 4)
  --config jacobi2d:BX=4,BY=2,CX=1,CY=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=8,ZC=1
  --config jacobi2d:BX=4,BY=2,CX=1,CY=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=4,ZC=1
  --config jacobi2d:BX=4,BY=2,CX=1,CY=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=256,WY=2,ZC=1
  --config jacobi2d:BX=4,BY=2,CX=1,CY=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=16,ZC=1
  --config jacobi2d:BX=4,BY=4,CX=1,CY=1,IMAGE=0,LOCAL=0,RIM=1,STREAM=0,VX=4,WX=64,WY=4,ZC=1
)

ab() { # ab CANDIDATE LIMIT: the candidate against the package's template
  local c=$1
  timeout "$(left "$2")" python3 benchmarks/template_ab.py "$OUT/ab-$c" \
    --variant "$cands/$c.patch" --kernels "${kernels[@]}" --device "$dev" --size "$size" \
    --rounds "$rounds" --copy "${configs[@]}" > "$OUT/ab-$c.log" 2>&1
  echo "ab $c rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
  rm -rf "$OUT/ab-$c/rendered"
}

nv() { # nv NAME LIMIT [--template FILE]: ptxas's registers and NVIDIA's PTX of the
  # 21 configurations (rows written as they come: a time limit loses only the rest)
  local name=$1 limit=$2
  shift 2
  case "$dev" in
    *NVIDIA* | *nvidia*) ;;
    *) echo "nv $name: skipped (no PTX from $dev)" >> "$OUT/rc.txt"; return ;;
  esac
  timeout "$(left "$limit")" python3 benchmarks/h200_ptx.py "$OUT/nv/$name.md" \
    --device "$dev" --techniques vec "vec probe" "$@" > "$OUT/nv-$name.log" 2>&1
  echo "nv $name rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
}

ab vec_interior_rolled 230
nv package 45
nv vec_interior_rolled 45 --template "$cands/vec_interior_rolled.patch"
ab vec_interior 200
nv vec_interior 45 --template "$cands/vec_interior.patch"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
