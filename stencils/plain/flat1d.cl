/*
 * A five-point stencil on a 1D-flattened launch: one work-item per point, the
 * coordinates recovered with % and /, the rim left untouched.
 */
__kernel void flat_stencil(__global const float *in, __global float *out, int W, int H, float c)
{
    int i = get_global_id(0);
    if (i >= W * H) return;
    int x = i % W, y = i / W;
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1) return;
    out[i] = (1.0f - 4.0f * c) * in[i] + c * (in[i - 1] + in[i + 1] + in[i - W] + in[i + W]);
}
