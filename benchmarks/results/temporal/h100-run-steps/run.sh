#!/bin/bash
# `gtune run` on two real stencils for which temporal blocking lost in
# benchmarks/results/temporal/h100-summary/ (box27 512³, blur5 8192²), each written with
# `steps: 8`: which technique does the default strategy keep? A wall-time budget of
# 150 s each (shared by the predicted one-step technique and the temporal ones), the
# confirmation round on. From the project root on the GPU host:
#   OUT=... bash benchmarks/results/temporal/h100-run-steps/run.sh
set -u
for k in box27:512x512x512 blur5:8192x8192; do
  name=${k%%:*}; size=${k#*:}
  sed 's/^boundary: \(.*\)$/boundary: \1\nsteps: 8/' "stencils/$name.stencil.yaml" \
    > "$OUT/$name-steps8.stencil.yaml"
  timeout 200 python3 -m gtune run "$OUT/$name-steps8.stencil.yaml" --device NVIDIA \
    --size "$size" --budget 150s --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "rc $name=$?"
done
tar czf /tmp/steps.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/steps.tar.gz "$OUT"/
