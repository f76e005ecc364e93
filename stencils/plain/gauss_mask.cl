/*
 * A (2R+1)x(2R+1) filter with its mask in a __constant buffer the host fills, as GPU
 * course material writes it: nested tap loops from -R to R, clamped coordinates, fma()
 * accumulation. R is a build-time constant (MASK_RADIUS).
 */
#ifndef MASK_RADIUS
#define MASK_RADIUS 1
#endif
#define MASK_WIDTH (2 * MASK_RADIUS + 1)

__kernel void mask_filter(__global const float *image, __constant float *mask,
                          __global float *result, const int width, const int height)
{
    const int col = get_global_id(0);
    const int row = get_global_id(1);
    if (col >= width || row >= height)
        return;
    float sum = 0.0f;
    for (int j = -MASK_RADIUS; j <= MASK_RADIUS; ++j) {
        const int r = clamp(row + j, 0, height - 1);
        for (int i = -MASK_RADIUS; i <= MASK_RADIUS; ++i) {
            const int c = clamp(col + i, 0, width - 1);
            sum = fma(mask[(j + MASK_RADIUS) * MASK_WIDTH + i + MASK_RADIUS],
                      image[r * width + c], sum);
        }
    }
    result[row * width + col] = sum;
}
