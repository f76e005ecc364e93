# The call that measured prefetch/ (each work-group prefetching into L2 the input of
# the block PD blocks ahead, then running its own), on one H200:
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=300,
#       command="bash benchmarks/results/h200-limit/partition/call_prefetch.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
timeout 250 python3 benchmarks/partition_probe.py $OUT/prefetch --device NVIDIA --size 512 --rounds 7 --reps 20 --variants pf0,pf264,pf528 \
 --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" \
 --config "box27:WX=32,WY=2,WZ=1,$B,BY=2,BZ=4,SEP=1,RIN=1" \
 --config "laplacian4:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" \
 --config "laplacian4:WX=32,WY=16,WZ=1,$B,BZ=2,CZ=2" \
 --config "heat3d:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" > $OUT/prefetch.log 2>&1
echo "probe rc $?" >> $OUT/prefetch.log
tar czf $OUT/r.tgz -C $OUT prefetch prefetch.log; rm -rf $OUT/prefetch
