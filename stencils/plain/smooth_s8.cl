// Five-point smoothing of signed 8-bit values, interior points only, written with the
// C idiom for rounding: + 0.5f, then a saturating conversion (towards zero). For
// negative sums this is not rounding to the nearest: -1.5 becomes -1.
__kernel void smooth8(__global const char *in, __global char *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const int i = y * nx + x;
    const float v = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
    out[i] = convert_char_sat(v + 0.5f);
}
