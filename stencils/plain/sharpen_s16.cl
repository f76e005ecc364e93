// Unsharp-style sharpening on signed 16-bit samples, interior points only: 1.5 times the
// centre minus an eighth of each of the four neighbours, truncated towards zero and
// saturated (convert_short_sat). Negative weights and negative values.
__kernel void sharpen(__global const short *in, __global short *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const int i = y * nx + x;
    const float v = 1.5f * in[i] - 0.125f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
    out[i] = convert_short_sat(v);
}
