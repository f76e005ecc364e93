/*
 * A 5x5 Gaussian (binomial 1 4 6 4 1 squared, over 256) in one pass, the weights a
 * table of literals, with the image mirrored about its edges with the edge pixel
 * repeated (scipy.ndimage's 'reflect', OpenCV's BORDER_REFLECT, numpy's 'symmetric'):
 * -1 reads 0, -2 reads 1; width reads width-1, width+1 reads width-2. The indices are
 * fixed up by if/else before the taps. Launched over the image rounded up to 16x16
 * work-groups; every pixel is written.
 */
__constant float gauss5[5][5] = {
    {1.0f / 256, 4.0f / 256, 6.0f / 256, 4.0f / 256, 1.0f / 256},
    {4.0f / 256, 16.0f / 256, 24.0f / 256, 16.0f / 256, 4.0f / 256},
    {6.0f / 256, 24.0f / 256, 36.0f / 256, 24.0f / 256, 6.0f / 256},
    {4.0f / 256, 16.0f / 256, 24.0f / 256, 16.0f / 256, 4.0f / 256},
    {1.0f / 256, 4.0f / 256, 6.0f / 256, 4.0f / 256, 1.0f / 256},
};

__kernel void gauss5_symmetric(__global const float *src, __global float *dst,
                               const int width, const int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    int xs[5], ys[5];
    for (int k = 0; k < 5; ++k) {
        int xx = x + k - 2;
        if (xx < 0)
            xx = -xx - 1;
        else if (xx >= width)
            xx = 2 * width - xx - 1;
        xs[k] = xx;

        int yy = y + k - 2;
        if (yy < 0)
            yy = -yy - 1;
        else if (yy >= height)
            yy = 2 * height - yy - 1;
        ys[k] = yy;
    }

    float acc = 0.0f;
    for (int j = 0; j < 5; ++j) {
        __global const float *row = src + ys[j] * width;
        for (int i = 0; i < 5; ++i)
            acc += gauss5[j][i] * row[xs[i]];
    }
    dst[y * width + x] = acc;
}
