/*
 * A 2D 5x5 binomial blur as image codes write it: the weights are literals and a
 * neighbour beyond the image's edge reads the edge pixel (clamped coordinates), so every
 * pixel is written. Launched as 16x16 work-groups over a width x height image.
 */
__constant float taps[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};

__kernel void blur_clamp(__global const float *src, __global float *dst, int width,
                         int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float acc = 0.0f;
    for (int dy = -2; dy <= 2; ++dy) {
        const int yy = clamp(y + dy, 0, height - 1);
        for (int dx = -2; dx <= 2; ++dx) {
            const int xx = clamp(x + dx, 0, width - 1);
            acc += taps[dy + 2] * taps[dx + 2] * src[yy * width + xx];
        }
    }
    dst[y * width + x] = acc;
}
