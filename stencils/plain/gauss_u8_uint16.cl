/* A 3x3 binomial blur of 8-bit pixels written the way OpenCV's gaussianBlur3x3 kernels
 * are: the image's buffers are uint pointers holding uchar pixels (four per uint), each
 * work-item loads 16 pixels of a row with vload4 and as_uchar16, its left and right
 * neighbours through a uchar view, rows clamped at the edges (replicate), the sum rounded
 * to nearest and saturated. Steps are in bytes. Lift it with --array src=uint8:NX,NY
 * --array dst=uint8:NX,NY (the pixels the buffers hold) and --global NX/16,NY. */
#define REPLICATE(v, n) clamp((v), 0, (n) - 1)

__kernel void gauss3x3_u8_cols16(__global const uint *src, int src_step,
                                 __global uint *dst, int dst_step, int rows, int cols)
{
    int block_x = get_global_id(0), y = get_global_id(1);
    if (block_x * 16 >= cols || y >= rows)
        return;
    __global const uchar *src_p = (__global const uchar *)src;
    int x0 = block_x * 16;
    float16 sum = (float16)0.0f;
    for (int j = -1; j <= 1; j++) {
        int yy = REPLICATE(y + j, rows);
        uchar16 mid = as_uchar16(vload4(0, src + yy * (src_step / 4) + block_x * 4));
        uchar left = src_p[yy * src_step + REPLICATE(x0 - 1, cols)];
        uchar right = src_p[yy * src_step + REPLICATE(x0 + 16, cols)];
        uchar16 l = (uchar16)(left, mid.s0123, mid.s456789ab, mid.scde);
        uchar16 r = (uchar16)(mid.s123, mid.s456789ab, mid.scdef, right);
        float16 row = convert_float16(l) + 2.0f * convert_float16(mid) + convert_float16(r);
        sum += (j == 0 ? 2.0f : 1.0f) * row;
    }
    uchar16 out = convert_uchar16_sat_rte(sum * 0.0625f);
    vstore4(as_uint4(out), 0, dst + y * (dst_step / 4) + block_x * 4);
}
