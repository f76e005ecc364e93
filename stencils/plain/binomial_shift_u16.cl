/*
 * A 1-2-1 x 1-2-1 binomial blur on 16-bit samples in integer arithmetic only, as
 * embedded image pipelines write it: an int sum and a rounding shift (+8 >> 4).
 */
__kernel void binomial_shift(__global const ushort *in, __global ushort *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    int xm = max(x - 1, 0), xp = min(x + 1, w - 1);
    int ym = max(y - 1, 0), yp = min(y + 1, h - 1);
    int s = in[ym * w + xm] + 2 * in[ym * w + x] + in[ym * w + xp]
          + 2 * (in[y * w + xm] + 2 * in[y * w + x] + in[y * w + xp])
          + in[yp * w + xm] + 2 * in[yp * w + x] + in[yp * w + xp];
    out[y * w + x] = (ushort)((s + 8) >> 4);
}
