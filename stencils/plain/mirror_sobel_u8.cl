/*
 * The x derivative of an 8-bit image by the 3x3 Sobel operator, written to a float
 * image, as image-processing course code writes it: the border is OpenCV's default
 * BORDER_REFLECT_101 (gfedcb|abcdefgh|gfedcba: -1 reads 1, width reads width-2) by a
 * helper function. Every pixel is written.
 */
int reflect101(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - 2 - i;
    return i;
}

__kernel void sobel_x_u8(__global const uchar *src, __global float *dst,
                         const int width, const int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    const int xl = reflect101(x - 1, width);
    const int xr = reflect101(x + 1, width);
    const int rowU = reflect101(y - 1, height) * width;
    const int rowC = y * width;
    const int rowD = reflect101(y + 1, height) * width;

    const float gx = (float)src[rowU + xr] - (float)src[rowU + xl]
                   + 2.0f * ((float)src[rowC + xr] - (float)src[rowC + xl])
                   + (float)src[rowD + xr] - (float)src[rowD + xl];
    dst[rowC + x] = gx;
}
