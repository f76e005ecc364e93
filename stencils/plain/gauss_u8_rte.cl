/*
 * A 3x3 Gaussian on 8-bit pixels, OpenCV style: (float) casts, weights 1/16, 2/16,
 * 4/16 as float constants, clamped reads, the result rounded to nearest and saturated
 * with convert_uchar_sat_rte.
 */
__kernel void gauss3_u8(__global const uchar *src, __global uchar *dst, int cols, int rows)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (y >= rows || x >= cols) return;
    const int x0 = max(x - 1, 0), x2 = min(x + 1, cols - 1);
    const int y0 = max(y - 1, 0), y2 = min(y + 1, rows - 1);
    float s = (float)src[y0 * cols + x0] + 2.0f * (float)src[y0 * cols + x] + (float)src[y0 * cols + x2]
            + 2.0f * (float)src[y * cols + x0] + 4.0f * (float)src[y * cols + x] + 2.0f * (float)src[y * cols + x2]
            + (float)src[y2 * cols + x0] + 2.0f * (float)src[y2 * cols + x] + (float)src[y2 * cols + x2];
    dst[y * cols + x] = convert_uchar_sat_rte(s * 0.0625f);
}
