/*
 * Sobel edge magnitude: two 3x3 weight tables in __constant memory, the two gradients
 * combined with hypot(). Non-linear in the input: lift must refuse it.
 */
__constant float GX[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
__constant float GY[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1};

__kernel void sobel(__global const float *img, __global float *mag, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float gx = 0.0f, gy = 0.0f;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            float p = img[clamp(y + j - 1, 0, h - 1) * w + clamp(x + i - 1, 0, w - 1)];
            gx += GX[j * 3 + i] * p;
            gy += GY[j * 3 + i] * p;
        }
    mag[y * w + x] = hypot(gx, gy);
}
