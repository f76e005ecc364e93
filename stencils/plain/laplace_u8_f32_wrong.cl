/*
 * laplace_u8_f32.cl scaled in integers, s >> 2 (a floor) instead of 0.25f * s: the same
 * where the sum is a multiple of 4, wrong elsewhere (the lifted definition must not
 * accept it).
 */
__kernel void laplace(__global const uchar *img, __global float *lap, const int width,
                      const int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    const int i = y * width + x;
    const int s = img[i - 1] + img[i + 1] + img[i - width] + img[i + width] - 4 * img[i];
    lap[i] = (float)(s >> 2);
}
