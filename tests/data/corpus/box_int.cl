// 3x3 box sum on integer data.
__kernel void box(__global int* a, __global int* b, uint nx, uint ny) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int s = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s += a[(y + dy) * nx + x + dx];
    b[y * nx + x] = s;
}
