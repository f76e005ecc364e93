// Horizontal three-point smoothing of 32-bit integers with a plain C cast (truncation
// towards zero, no saturation: the weights sum to 1, so the sum stays in range).
__kernel void smooth_int(__global const int *in, __global int *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || x >= nx - 1 || y >= ny)
        return;
    const int i = y * nx + x;
    out[i] = (int)(0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1]);
}
