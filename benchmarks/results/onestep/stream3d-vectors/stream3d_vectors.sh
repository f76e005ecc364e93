#!/usr/bin/env bash
# 3D streaming with vector loads of its planes' rows and vector stores (VX > 1) against
# value by value (VX 1), for heat3d and box27 at 512^3 on one device: each
# configuration measured with `gtune measure` (verified, 20 timed runs), ROUNDS
# alternating rounds; prints one JSON line per measurement.
# Usage (main with stream3d-vectors.diff applied: git apply ...):
#   bash benchmarks/results/onestep/stream3d-vectors/stream3d_vectors.sh DEVICE ROUNDS > out.jsonl
set -euo pipefail
device=$1 rounds=${2:-3}
fixed="WZ=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1"
configs=(
  "heat3d WX=16,WY=4,BX=1,VX=1,CX=32,CY=1,ZC=128"
  "heat3d WX=16,WY=4,BX=4,VX=4,CX=8,CY=1,ZC=128"
  "heat3d WX=16,WY=4,BX=2,VX=2,CX=16,CY=1,ZC=128"
  "heat3d WX=32,WY=4,BX=4,VX=4,CX=4,CY=1,ZC=128"
  "heat3d WX=32,WY=1,BX=4,VX=4,CX=1,CY=1,ZC=256"
  "heat3d WX=32,WY=1,BX=4,VX=1,CX=1,CY=1,ZC=256"
  "box27 WX=32,WY=4,BX=1,VX=1,CX=16,CY=1,ZC=128"
  "box27 WX=32,WY=4,BX=4,VX=4,CX=4,CY=1,ZC=128"
  "box27 WX=32,WY=4,BX=2,VX=2,CX=8,CY=1,ZC=128"
  "box27 WX=64,WY=2,BX=2,VX=2,CX=2,CY=4,ZC=128"
  "box27 WX=64,WY=2,BX=2,VX=1,CX=2,CY=4,ZC=128"
)
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    set -- $c
    python3 -m gtune measure "stencils/$1.yaml" --size 512x512x512 --device "$device" \
      --config "$2,$fixed" --runs 20 --json \
      | python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps({'round': $r, 'kernel': '$1', 'config': '$2', 'status': d['status'], 'median_s': d['median_s']}))"
  done
done
