/*
 * A separable blur as two kernels, a row pass and a column pass, each with the 1D
 * filter in a __constant buffer of 2*RADIUS+1 taps and clamped reads. The host runs
 * blur_rows into a temporary, then blur_cols; pick one with --kernel-name.
 */
#define RADIUS 2

__kernel void blur_rows(__global const float *src, __global float *tmp,
                        __constant float *taps, int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    float s = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++)
        s += taps[k + RADIUS] * src[y * width + clamp(x + k, 0, width - 1)];
    tmp[y * width + x] = s;
}

__kernel void blur_cols(__global const float *tmp, __global float *dst,
                        __constant float *taps, int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    float s = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++)
        s += taps[k + RADIUS] * tmp[clamp(y + k, 0, height - 1) * width + x];
    dst[y * width + x] = s;
}
