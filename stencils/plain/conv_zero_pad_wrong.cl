/*
 * conv_zero_pad.cl with the taps beyond the image's edge clamped to it (reading the edge
 * pixel) instead of skipped: the same inside, wrong on the rim (the zero boundary's
 * definition must not accept it).
 */
#define MW 3
__kernel void conv(__global const float *in, __global const float *mask, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = 0;
    for (int j = 0; j < MW; j++)
        for (int i = 0; i < MW; i++) {
            int xx = clamp(x + i - MW / 2, 0, w - 1), yy = clamp(y + j - MW / 2, 0, h - 1);
            s += mask[j * MW + i] * in[yy * w + xx];
        }
    out[y * w + x] = s;
}
