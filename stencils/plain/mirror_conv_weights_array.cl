/*
 * A 5x5 convolution (radius 2) with its weights in a __constant array the host fills,
 * row-major, the image mirrored reflect-101 (-1 reads 1, -2 reads 2; width reads
 * width-2, width+1 reads width-3) by abs() and a fold at the far edge. Launched over
 * the image rounded up to 16x16 work-groups; every pixel is written.
 */
#define RADIUS 2
#define KSIZE (2 * RADIUS + 1)

__kernel void conv5x5_reflect101(__global const float *input, __global float *output,
                                 __constant float *w, const int width, const int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float sum = 0.0f;
    for (int j = -RADIUS; j <= RADIUS; ++j) {
        int yy = abs(y + j);
        if (yy >= height)
            yy = 2 * (height - 1) - yy;
        for (int i = -RADIUS; i <= RADIUS; ++i) {
            int xx = abs(x + i);
            if (xx >= width)
                xx = 2 * (width - 1) - xx;
            sum += w[(j + RADIUS) * KSIZE + (i + RADIUS)] * input[yy * width + xx];
        }
    }
    output[y * width + x] = sum;
}
