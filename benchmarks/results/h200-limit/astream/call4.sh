# The fourth device call of astream/ (one wave: chunks of 256 and 512 planes, deeper
# rings, taller tiles):
#   run(kind="nvidia-h200", carry=[".gpu-bundle"], timeout_s=300,
#       command="bash benchmarks/results/h200-limit/astream/call4.sh")
source .gpu-bundle/env.sh .gpu-bundle
B='BX=4,VX=4,RIM=1'
V=()
for k in copyR1 box27 laplacian4; do
  for s in WX=32,WY=8,CY=1,ZC=512,D=3 WX=32,WY=8,CY=1,ZC=512,D=5 WX=32,WY=16,CY=1,ZC=512,D=2 \
           WX=32,WY=16,CY=1,ZC=256,D=2 WX=64,WY=4,CY=1,ZC=512,D=3 WX=32,WY=4,CY=1,ZC=512,D=4 \
           WX=32,WY=8,CY=1,ZC=512,D=3,WHOLE=1 WX=32,WY=8,CY=2,ZC=512,D=2 WX=64,WY=8,CY=1,ZC=512,D=2; do
    V+=(--variant "$k:$s")
  done
done
timeout ${PROBE_S:-240} python3 benchmarks/astream_probe.py $OUT/astream5 --device NVIDIA --size 512 \
  --rounds 7 --reps 20 \
  --config "box27:WX=32,WY=2,WZ=2,$B,BY=4,BZ=4,SEP=1,RIN=1" \
  --config "laplacian4:WX=32,WY=4,WZ=2,$B,BY=2,BZ=2,CZ=2" "${V[@]}" > $OUT/astream5.log 2>&1
echo "probe rc $?" >> $OUT/astream5.log
tar czf $OUT/r5.tgz -C $OUT astream5 astream5.log; rm -rf $OUT/astream5
