# The call that measured ../temporal-8/gtune-run-2026-12-02/b/ (heat3d, 8 steps) and
# shapes/ (the block order at more shapes), 218 s on one H200:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=570,
#       command="bash benchmarks/results/h200-limit/partition/call_shapes.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
timeout 200 python3 benchmarks/partition_probe.py $OUT/shapes --device NVIDIA --size 512 --rounds 7 --reps 20 --variants yparte,yrande \
 --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" \
 --config "box27:WX=32,WY=2,WZ=1,$B,BY=2,BZ=4,SEP=1,RIN=1" \
 --config "box27:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,SEP=1,RIN=1" \
 --config "box27:WX=32,WY=8,WZ=1,$B,BY=2,BZ=4,SEP=1,RIN=1" \
 --config "laplacian4:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" \
 --config "laplacian4:WX=32,WY=16,WZ=1,$B,BZ=2,CZ=2" \
 --config "laplacian4:WX=32,WY=8,WZ=2,$B,BZ=2,CZ=2" \
 --config "laplacian4:WX=64,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" \
 --config "heat3d:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" > $OUT/shapes.log 2>&1
echo "probe rc $?" >> $OUT/shapes.log
timeout 330 python3 benchmarks/onestep.py $OUT/h8b --device NVIDIA --kernels benchmarks/results/h200-limit/heat3d-8.stencil.yaml > $OUT/h8b.log 2>&1
echo "onestep rc $?" >> $OUT/h8b.log
rm -f $OUT/h8b/onestep.db*
tar czf $OUT/r.tgz -C $OUT shapes h8b shapes.log h8b.log; rm -rf $OUT/shapes $OUT/h8b
