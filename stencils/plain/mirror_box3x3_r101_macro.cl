/*
 * A 3x3 box filter (weights 1/9) written with macros, as small image libraries do: a
 * mirror() for reflect-101 (gfedcb|abcdefgh|gfedcba: the edge pixel not repeated) and
 * RD(img, x, y) reading through it. Launched over the image rounded up to 16x8
 * work-groups; every pixel is written.
 */
#define mirror(i, n) ((i) < 0 ? -(i) : ((i) >= (n) ? 2 * (n) - 2 - (i) : (i)))
#define RD(img, x, y) img[mirror(y, h) * w + mirror(x, w)]
#define WR(img, x, y) img[(y) * w + (x)]
#define BOX_W (1.0f / 9.0f)

__kernel void box3x3_reflect101(__global const float *src, __global float *dst,
                                const int w, const int h)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            acc += BOX_W * RD(src, x + dx, y + dy);
    WR(dst, x, y) = acc;
}
