/* OpenCV-style filter2D for a CV_32FC1 image: byte pointers with step/offset in bytes,
 * the kernel's size and anchor as build options, BORDER_REPLICATE via clamp, delta. */
#ifndef KERNEL_SIZE_X
#define KERNEL_SIZE_X 3
#endif
#ifndef KERNEL_SIZE_Y
#define KERNEL_SIZE_Y 3
#endif
#define ANCHOR_X (KERNEL_SIZE_X / 2)
#define ANCHOR_Y (KERNEL_SIZE_Y / 2)
#define srcT float
#define loadpix(addr) (*(addr))
#define storepix(val, addr) *(addr) = (val)

__kernel void filter2D(__global const float *srcptr, int src_step, int src_offset,
                       int src_rows, int src_cols,
                       __global float *dstptr, int dst_step, int dst_offset,
                       int dst_rows, int dst_cols,
                       __constant float *kernelData, float delta)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= dst_cols || y >= dst_rows)
        return;
    float sum = delta;
    for (int i = 0; i < KERNEL_SIZE_Y; i++) {
        int yy = clamp(y + i - ANCHOR_Y, 0, src_rows - 1);
        for (int j = 0; j < KERNEL_SIZE_X; j++) {
            int xx = clamp(x + j - ANCHOR_X, 0, src_cols - 1);
            srcT v = loadpix(srcptr + mad24(yy, src_step, xx + src_offset));
            sum = mad(v, kernelData[i * KERNEL_SIZE_X + j], sum);
        }
    }
    storepix(sum, dstptr + mad24(y, dst_step, x + dst_offset));
}
