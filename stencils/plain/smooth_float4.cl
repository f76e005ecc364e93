/*
 * A 2D five-point smoothing step over rows of float4, as vectorised codes write it:
 * __global float4 pointers, the row width given in float4s (w4), the x neighbours of a
 * vector's end lanes taken from the vectors beside it, every neighbour clamped at the
 * edges. Launched as a (width/4) x height grid of 16x4 work-groups.
 */
__kernel void smooth_float4(__global const float4 *in, __global float4 *out,
                            const int w4, const int h, const float a)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= w4 || y >= h)
        return;
    const int row = y * w4;
    const float4 c = in[row + x];
    const float4 prev = in[row + max(x - 1, 0)];
    const float4 next = in[row + min(x + 1, w4 - 1)];
    const float4 left = (float4)(x > 0 ? prev.w : c.x, c.xyz);
    const float4 right = (float4)(c.yzw, x < w4 - 1 ? next.x : c.w);
    const float4 up = in[max(y - 1, 0) * w4 + x];
    const float4 down = in[min(y + 1, h - 1) * w4 + x];
    out[row + x] = (1.0f - 4.0f * a) * c + a * (left + right + up + down);
}
