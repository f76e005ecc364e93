// WRONG: truncates (convert_ushort_sat) instead of rounding to the nearest.
// 3x3 binomial blur ([1 2 1] x [1 2 1] / 16) on 16-bit samples, clamp-to-edge, rounded
// to the nearest (ties to even) and saturated: convert_ushort_sat_rte. Its weights are
// sixteenths, so single values land on ties (8/16 = 0.5): lifting tells this rounding
// from "+ 0.5 then truncate" by probing.
__kernel void binomial(__global const ushort *in, __global ushort *out, int w, int h)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    const int xm = max(x - 1, 0), xp = min(x + 1, w - 1);
    const int ym = max(y - 1, 0), yp = min(y + 1, h - 1);
    const float s = (float)in[ym * w + xm] + 2.0f * in[ym * w + x] + in[ym * w + xp]
        + 2.0f * in[y * w + xm] + 4.0f * in[y * w + x] + 2.0f * in[y * w + xp]
        + in[yp * w + xm] + 2.0f * in[yp * w + x] + in[yp * w + xp];
    out[y * w + x] = convert_ushort_sat(s * 0.0625f);
}
