/*
 * A 3x3 mean filter as course exercises write it: an index macro, the weight as the
 * constant 1.0f/9.0f, an early return that keeps the rim (x < 1 first), and the tap
 * loops unrolled by a pragma. The rim of the output is left as it was.
 */
#define IDX(x, y) ((y) * W + (x))

__kernel void mean3(__global const float *in, __global float *out, const int W, const int H)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy) {
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx)
            acc += in[IDX(x + dx, y + dy)];
    }
    out[IDX(x, y)] = acc * (1.0f / 9.0f);
}
