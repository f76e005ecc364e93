/*
 * A Laplacian of 8-bit pixels into a float image: the input and output element types
 * differ (uchar in, float out), the sum taken in integers and scaled after; the border
 * points are left as they were (boundary interior).
 */
__kernel void laplace(__global const uchar *img, __global float *lap, const int width,
                      const int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    const int i = y * width + x;
    const int s = img[i - 1] + img[i + 1] + img[i - width] + img[i + width] - 4 * img[i];
    lap[i] = 0.25f * (float)s;
}
