/*
 * A horizontal box filter in the style of the AMD APP SDK's BoxFilter sample
 * (box_filter_horizontal_local), on float pixels: each work-group copies its piece of
 * each of its rows and RADIUS pixels either side (clamped at the image's left and
 * right edges) into the __local buffer `lds`, which the host sizes per launch --
 * (local size x + 2 * RADIUS) * local size y floats, clSetKernelArg(k, 3, bytes, NULL)
 * -- waits at a barrier and sums 2 * RADIUS + 1 pixels from local memory, scaled by
 * `scale` (1 / (2 * RADIUS + 1) for a mean). The image's width is the launch's global
 * size.
 */
#ifndef RADIUS
#define RADIUS 2
#endif

__kernel void box_filter_horizontal_local(__global const float *inputImage,
                                          __global float *outputImage, const float scale,
                                          __local float *lds)
{
    const int x = get_global_id(0), y = get_global_id(1);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int lw = get_local_size(0);
    const int width = get_global_size(0);
    __local float *row = lds + ly * (lw + 2 * RADIUS);
    const int first = x - lx - RADIUS; /* the row piece's first pixel, halo included */
    for (int i = lx; i < lw + 2 * RADIUS; i += lw)
        row[i] = inputImage[y * width + clamp(first + i, 0, width - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int i = 0; i <= 2 * RADIUS; i++)
        sum += row[lx + i];
    outputImage[y * width + x] = scale * sum;
}
