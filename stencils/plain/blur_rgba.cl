/*
 * A 3x3 box blur on RGBA pixels (uchar4), image-library style: each channel filtered
 * alike in float4 arithmetic, clamped reads, rounded and saturated back with
 * convert_uchar4_sat_rte.
 */
__kernel void blur_rgba(__global const uchar4 *src, __global uchar4 *dst, int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    float4 s = (float4)(0.0f);
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += convert_float4(src[clamp(y + j, 0, height - 1) * width + clamp(x + i, 0, width - 1)]);
    dst[y * width + x] = convert_uchar4_sat_rte(s * (1.0f / 9.0f));
}
