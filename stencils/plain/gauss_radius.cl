/* A Gaussian blur as GPU image tutorials write it: the (2r+1)^2 weights in a __global
 * array the host fills, the radius an argument, dimension 0 of the launch the row,
 * clamped reads (BORDER_REPLICATE), restrict pointers. */
__kernel void gaussian_blur(__global const float *restrict image,
                            __global const float *restrict weights,
                            __global float *restrict blurred,
                            const int rows, const int cols, const int radius)
{
    const int r = get_global_id(0);
    const int c = get_global_id(1);
    if (r >= rows || c >= cols)
        return;
    const int size = 2 * radius + 1;
    float acc = 0.0f;
    for (int dy = -radius; dy <= radius; dy++) {
        const int yy = min(max(r + dy, 0), rows - 1);
        for (int dx = -radius; dx <= radius; dx++) {
            const int xx = min(max(c + dx, 0), cols - 1);
            acc += weights[(dy + radius) * size + (dx + radius)] * image[yy * cols + xx];
        }
    }
    blurred[r * cols + c] = acc;
}
