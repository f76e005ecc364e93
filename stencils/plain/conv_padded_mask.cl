/*
 * A convolution over an input padded by the mask radius R on every side, as SDK
 * samples write it: the output point (x, y) reads the input at (y + R) * (W + 2R) +
 * (x + R) plus the tap offset; the mask arrives in a __constant buffer with the
 * taps from -R to R.
 */
#define R 2

__kernel void conv_padded(__global const float *padded, __global float *out,
                          __constant float *mask, int W, int H)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H)
        return;
    const int pw = W + 2 * R;
    const int centre = (y + R) * pw + (x + R);
    float sum = 0.0f;
#pragma unroll
    for (int j = -R; j <= R; j++)
#pragma unroll
        for (int i = -R; i <= R; i++)
            sum += mask[(j + R) * (2 * R + 1) + (i + R)] * padded[centre + j * pw + i];
    out[y * W + x] = sum;
}
