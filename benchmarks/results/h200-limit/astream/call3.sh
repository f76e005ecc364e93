# The third device call of astream/ (the stores: the barrier without a fence, the rim
# stored whole, longer chunks):
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=300,
#       command="bash benchmarks/results/h200-limit/astream/call3.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
V=()
for k in copyR1 box27 laplacian4; do
  for s in WX=32,WY=8,CY=1,ZC=64,D=3 WX=32,WY=8,CY=1,ZC=64,D=3,BAR=1 WX=32,WY=8,CY=1,ZC=64,D=3,WHOLE=1 \
           WX=32,WY=8,CY=1,ZC=256,D=3 WX=32,WY=8,CY=1,ZC=512,D=3 WX=32,WY=8,CY=1,ZC=256,D=3,BAR=1 \
           WX=32,WY=16,CY=1,ZC=128,D=2,BAR=1 WX=32,WY=2,CY=4,ZC=128,D=3,BAR=1; do
    V+=(--variant "$k:$s")
  done
done
timeout ${PROBE_S:-240} python3 benchmarks/astream_probe.py $OUT/astream4 --device NVIDIA --size 512 \
  --rounds 7 --reps 20 \
  --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" \
  --config "laplacian4:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" "${V[@]}" > $OUT/astream4.log 2>&1
echo "probe rc $?" >> $OUT/astream4.log
tar czf $OUT/r4.tgz -C $OUT astream4 astream4.log; rm -rf $OUT/astream4
