// 3x3 blur over an input padded by one cell on each side (a halo): no bounds checks.
__kernel void blur_padded(__global float* in, __global float* out, int nx, int ny) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny) return;
    int stride = nx;
    float s = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) s += in[(y + dy) * stride + x + dx];
    out[y * nx + x] = s * (1.0f / 9.0f);
}
