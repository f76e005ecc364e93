/* A 3x3 float blur written the way OpenCV's imgproc filters are: the image's buffers are
 * uchar pointers holding srcT/dstT elements, addressed in bytes (step and offset in bytes,
 * host macros -D srcT=float -D dstT=float), neighbours clamped at the edges (replicate).
 * Lift it with --array srcptr=float32:NX,NY --array dstptr=float32:NX,NY
 * --scalar src_step=4*NX --scalar dst_step=4*NX (steps in bytes) and --fixed for the
 * offsets (the tuned kernel assumes them 0). */
#ifndef srcT
#define srcT float
#endif
#ifndef dstT
#define dstT float
#endif
#define loadpix(addr) *(__global const srcT *)(addr)
#define storepix(val, addr) *(__global dstT *)(addr) = (val)
#define SRC_AT(x, y) loadpix(srcptr + mad24(y, src_step, mad24(x, (int)sizeof(srcT), src_offset)))
#define REPLICATE(v, n) clamp((v), 0, (n) - 1)

__kernel void blur_bytes(__global const uchar *srcptr, int src_step, int src_offset,
                         __global uchar *dstptr, int dst_step, int dst_offset,
                         int dst_rows, int dst_cols)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= dst_cols || y >= dst_rows)
        return;
    srcT sum = (srcT)0;
    for (int j = -1; j <= 1; j++) {
        int yy = REPLICATE(y + j, dst_rows);
        for (int i = -1; i <= 1; i++) {
            int xx = REPLICATE(x + i, dst_cols);
            sum += ((i == 0 ? 2 : 1) * (j == 0 ? 2 : 1)) * SRC_AT(xx, yy);
        }
    }
    storepix((dstT)(sum * 0.0625f), dstptr + mad24(y, dst_step, mad24(x, (int)sizeof(dstT), dst_offset)));
}
