/*
 * A 3x3 maximum filter (grey-scale dilation): the largest neighbour, not a weighted
 * sum. Not a linear stencil: `gtune lift` refuses it.
 */
__kernel void maxfilter(__global const float *img, __global float *out, int width, int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1)
        return;
    float m = img[y * width + x];
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            m = fmax(m, img[(y + dy) * width + x + dx]);
    out[y * width + x] = m;
}
