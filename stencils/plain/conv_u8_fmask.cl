/* An 8-bit image convolved with a 3x3 float mask the host fills (as OpenCV's and the
 * vendor samples' filter2D kernels take it), neighbours clamped at the edges, the sum
 * rounded to nearest and saturated. */
__kernel void filter2d_u8(__global const uchar *src, __constant float *mask,
                          __global uchar *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float s = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += mask[(j + 1) * 3 + (i + 1)]
                 * src[clamp(y + j, 0, h - 1) * w + clamp(x + i, 0, w - 1)];
    dst[y * w + x] = convert_uchar_sat_rte(s);
}
