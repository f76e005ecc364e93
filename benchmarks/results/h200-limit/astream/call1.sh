# The device call that measured astream/ (asynchronous plane copies, one step, 512³):
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=420,
#       command="bash benchmarks/results/h200-limit/astream/call1.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
V=()
for k in box27 laplacian4; do
  for s in WX=32,WY=8,CY=1,ZC=64,D=3 WX=32,WY=8,CY=1,ZC=64,D=2 WX=32,WY=8,CY=1,ZC=32,D=4 \
           WX=32,WY=8,CY=1,ZC=128,D=3 WX=32,WY=4,CY=2,ZC=64,D=3 WX=32,WY=8,CY=2,ZC=64,D=2 \
           WX=32,WY=16,CY=1,ZC=64,D=2 WX=64,WY=4,CY=1,ZC=64,D=3 WX=64,WY=4,CY=2,ZC=64,D=2 \
           WX=32,WY=4,CY=1,ZC=64,D=4; do
    V+=(--variant "$k:$s")
  done
done
for k in copyR1 copyR2; do
  for s in WX=32,WY=8,CY=1,ZC=64,D=3 WX=32,WY=8,CY=1,ZC=64,D=2 WX=64,WY=4,CY=1,ZC=64,D=3; do
    V+=(--variant "$k:$s")
  done
done
timeout ${PROBE_S:-360} python3 benchmarks/astream_probe.py $OUT/astream --device NVIDIA --size 512 \
  --rounds 7 --reps 20 \
  --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" \
  --config "laplacian4:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" "${V[@]}" > $OUT/astream.log 2>&1
echo "probe rc $?" >> $OUT/astream.log
tar czf $OUT/r.tgz -C $OUT astream astream.log; rm -rf $OUT/astream
