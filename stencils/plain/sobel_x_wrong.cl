/*
 * sobel_x.cl with its border written as 0 instead of copied from the input: the same
 * inside, wrong on the rim (the copied rim's definition must not accept it).
 */
__constant float SX[3][3] = {{-1.0f, 0.0f, 1.0f}, {-2.0f, 0.0f, 2.0f}, {-1.0f, 0.0f, 1.0f}};

__kernel void sobel_x(__global const float *img, __global float *dx, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        dx[y * w + x] = 0.0f;
        return;
    }
    float s = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += SX[j + 1][i + 1] * img[(y + j) * w + x + i];
    dx[y * w + x] = s;
}
