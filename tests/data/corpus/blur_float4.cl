/*
 * A three-point vertical blur over rows of float4, as vectorised image and PDE codes
 * pass their arrays: __global float4 pointers, the row width given in float4s (w4),
 * neighbours clamped at the top and bottom rows.
 */
__kernel void blur_float4(__global const float4 *in, __global float4 *out,
                          const int w4, const int h)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= w4 || y >= h)
        return;
    const int up = max(y - 1, 0), down = min(y + 1, h - 1);
    out[y * w4 + x] = 0.25f * in[up * w4 + x] + 0.5f * in[y * w4 + x] + 0.25f * in[down * w4 + x];
}
