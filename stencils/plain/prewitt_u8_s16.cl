/*
 * A Prewitt x-derivative from 8-bit pixels into a 16-bit signed output: the input and
 * output element types differ.
 */
__kernel void prewitt_x(__global const uchar *src, __global short *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    int xm = max(x - 1, 0), xp = min(x + 1, w - 1);
    int s = 0;
    for (int j = -1; j <= 1; j++) {
        int yy = clamp(y + j, 0, h - 1);
        s += (int)src[yy * w + xp] - (int)src[yy * w + xm];
    }
    dst[y * w + x] = convert_short_sat(s);
}
