/* blur_float4 with the centre's first lane broadcast to all four (a vector mistake). */
__kernel void blur_float4(__global const float4 *in, __global float4 *out,
                          const int w4, const int h)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= w4 || y >= h)
        return;
    const int up = max(y - 1, 0), down = min(y + 1, h - 1);
    const float4 c = (float4)(in[y * w4 + x].x);
    out[y * w4 + x] = 0.25f * in[up * w4 + x] + 0.5f * c + 0.25f * in[down * w4 + x];
}
