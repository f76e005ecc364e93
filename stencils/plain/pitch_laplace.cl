/*
 * A 2D Laplacian on an image addressed through a row pitch (in elements) passed apart
 * from the width, as image libraries and SDK samples do: row y starts at y * pitch.
 * Out-of-range neighbours are clamped with clamp(); the sum is formed with mad().
 */
__kernel void laplace_pitch(__global const float *src, __global float *dst,
                            int width, int height, int pitch, float scale)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height) return;
    int xl = clamp(x - 1, 0, width - 1), xr = clamp(x + 1, 0, width - 1);
    int yu = clamp(y - 1, 0, height - 1), yd = clamp(y + 1, 0, height - 1);
    float c = src[y * pitch + x];
    float s = src[y * pitch + xl] + src[y * pitch + xr] + src[yu * pitch + x] + src[yd * pitch + x];
    dst[y * pitch + x] = mad(scale, s - 4.0f * c, c);
}
