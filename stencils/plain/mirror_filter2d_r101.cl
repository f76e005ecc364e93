/* OpenCV-style filter2D for a CV_32FC1 image with a 3x3 kernelData (other sizes by
 * -D KERNEL_SIZE_X=.. -D KERNEL_SIZE_Y=.., as OpenCV passes them): byte pointers with
 * step and offset in bytes, and the border chosen by a build option the way OpenCV's
 * imgproc kernels choose it (one EXTRAPOLATE macro per border type):
 *   -D BORDER_REFLECT_101  gfedcb|abcdefgh|gfedcba  (the default when none is defined)
 *   -D BORDER_REFLECT      fedcba|abcdefgh|hgfedcb  (the edge pixel repeated)
 *   -D BORDER_WRAP         cdefgh|abcdefgh|abcdefg  (periodic)
 * Launched over the image rounded up to whole work-groups; every pixel is written.
 * Lift with --array srcptr=float32:NX,NY --array dstptr=float32:NX,NY, steps of 4*NX
 * bytes and the offsets held at 0 (--fixed). */
#if !defined BORDER_REFLECT_101 && !defined BORDER_REFLECT && !defined BORDER_WRAP
#define BORDER_REFLECT_101
#endif

#ifdef BORDER_WRAP
//cdefgh|abcdefgh|abcdefg
#define EXTRAPOLATE(x, maxV) \
    { \
        (x) = ( (x) + (maxV) ) % (maxV); \
    }
#elif defined BORDER_REFLECT
//fedcba|abcdefgh|hgfedcb
#define EXTRAPOLATE(x, maxV) \
    { \
        (x) = min( mad24((maxV)-1,2,-(x))+1 , max((x),-(x)-1) ); \
    }
#elif defined BORDER_REFLECT_101
//gfedcb|abcdefgh|gfedcba
#define EXTRAPOLATE(x, maxV) \
    { \
        (x) = min( mad24((maxV)-1,2,-(x)), max((x),-(x)) ); \
    }
#endif

#ifndef KERNEL_SIZE_X
#define KERNEL_SIZE_X 3
#endif
#ifndef KERNEL_SIZE_Y
#define KERNEL_SIZE_Y 3
#endif
#define ANCHOR_X (KERNEL_SIZE_X / 2)
#define ANCHOR_Y (KERNEL_SIZE_Y / 2)
#define loadpix(addr) *(__global const float *)(addr)
#define storepix(val, addr) *(__global float *)(addr) = (val)

__kernel void filter2D(__global const uchar *srcptr, int src_step, int src_offset,
                       int src_rows, int src_cols,
                       __global uchar *dstptr, int dst_step, int dst_offset,
                       int dst_rows, int dst_cols,
                       __constant float *kernelData)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= dst_cols || y >= dst_rows)
        return;

    float sum = 0.0f;
    for (int i = 0; i < KERNEL_SIZE_Y; ++i) {
        int srcY = y + i - ANCHOR_Y;
        EXTRAPOLATE(srcY, src_rows);
        for (int j = 0; j < KERNEL_SIZE_X; ++j) {
            int srcX = x + j - ANCHOR_X;
            EXTRAPOLATE(srcX, src_cols);
            float v = loadpix(srcptr + mad24(srcY, src_step, mad24(srcX, (int)sizeof(float), src_offset)));
            sum = mad(v, kernelData[i * KERNEL_SIZE_X + j], sum);
        }
    }
    storepix(sum, dstptr + mad24(y, dst_step, mad24(x, (int)sizeof(float), dst_offset)));
}
