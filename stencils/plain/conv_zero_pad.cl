/*
 * A 3x3 convolution with its mask in a global buffer, taps outside the image skipped
 * (zero padding), as image-processing exercises write it: lifted with boundary zero
 * (every point written, a tap beyond the edge reading 0).
 */
#define MW 3
__kernel void conv(__global const float *in, __global const float *mask, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = 0;
    for (int j = 0; j < MW; j++)
        for (int i = 0; i < MW; i++) {
            int xx = x + i - MW / 2, yy = y + j - MW / 2;
            if (xx >= 0 && xx < w && yy >= 0 && yy < h)
                s += mask[j * MW + i] * in[yy * w + xx];
        }
    out[y * w + x] = s;
}
