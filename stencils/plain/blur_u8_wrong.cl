// WRONG: divides by 8, not 9.
// 3x3 box blur on 8-bit pixels, image-library style: clamp-to-edge reads, a float
// accumulator, rounded and saturated back to uchar.
__kernel void box_blur(__global const uchar *src, __global uchar *dst, int width, int height)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int xx = clamp(x + dx, 0, width - 1);
            int yy = clamp(y + dy, 0, height - 1);
            sum += (float)src[yy * width + xx];
        }
    dst[y * width + x] = convert_uchar_sat(sum / 8.0f + 0.5f);
}
