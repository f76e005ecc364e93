# The second device call of astream/ (what holds the walk: plain copies, one-warp
# work-groups, no stores):
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=300,
#       command="bash benchmarks/results/h200-limit/astream/call2.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
V=()
for k in copyR1 box27; do
  for s in WX=32,WY=8,CY=1,ZC=64,D=3 WX=32,WY=8,CY=1,ZC=64,D=3,CPA=0 WX=32,WY=8,CY=1,ZC=64,D=3,NOST=1 \
           WX=32,WY=1,CY=4,ZC=64,D=3 WX=32,WY=2,CY=4,ZC=64,D=3 WX=32,WY=1,CY=2,ZC=64,D=3 \
           WX=32,WY=1,CY=1,ZC=64,D=3 WX=32,WY=1,CY=4,ZC=128,D=6 WX=32,WY=1,CY=4,ZC=64,D=3,CPA=0 \
           WX=32,WY=1,CY=4,ZC=64,D=3,NOST=1 WX=16,WY=1,CY=8,ZC=64,D=3; do
    V+=(--variant "$k:$s")
  done
done
timeout ${PROBE_S:-240} python3 benchmarks/astream_probe.py $OUT/astream2 --device NVIDIA --size 512 \
  --rounds 7 --reps 20 \
  --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" "${V[@]}" > $OUT/astream2.log 2>&1
echo "probe rc $?" >> $OUT/astream2.log
tar czf $OUT/r2.tgz -C $OUT astream2 astream2.log; rm -rf $OUT/astream2
