/*
 * A 3x3 box filter on 8-bit pixels in integer arithmetic, as C image code writes it:
 * an int sum and an integer division by 9. Exact; a definition's float32 sum of
 * 1/9-weighted terms lands below the whole quotients now and then: refused.
 */
__kernel void box_div(__global const uchar *src, __global uchar *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    int s = 0;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += src[(y + j) * w + x + i];
    dst[y * w + x] = (uchar)(s / 9);
}
