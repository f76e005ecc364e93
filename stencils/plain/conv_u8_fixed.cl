/* An 8-bit image filtered in fixed point, as integer image code does: a 3x3 mask of
 * shorts the host fills (1 2 1 / 2 4 2 / 1 2 1 for a binomial blur), an int sum, then
 * (sum + 8) >> 4 and saturation; neighbours clamped at the edges. */
__kernel void filter2d_fixed(__global const uchar *src, __constant short *mask,
                             __global uchar *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int s = 0;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += mask[(j + 1) * 3 + (i + 1)]
                 * src[clamp(y + j, 0, h - 1) * w + clamp(x + i, 0, w - 1)];
    dst[y * w + x] = convert_uchar_sat((s + 8) >> 4);
}
