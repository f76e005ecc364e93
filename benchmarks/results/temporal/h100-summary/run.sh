#!/bin/bash
# Offline (no device): the summary table, plot and where-the-time-goes columns over the
# recorded H100 runs of benchmarks/temporal.py. From the project root:
#   bash benchmarks/results/temporal/h100-summary/run.sh
set -eu
R=benchmarks/results/temporal
.venv/bin/python benchmarks/temporal_report.py $R/h100-summary \
  $R/h100-zreg2/both $R/h100-real/blur5 $R/h100-real2/box27 $R/h100-real2/laplacian4 \
  $R/h100-suite/suite $R/h100-suite/suite2 $R/h100-hotspot/hotspot
