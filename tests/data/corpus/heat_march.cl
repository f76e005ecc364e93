// 7-point heat step: a 2D launch over 3D data, each work-item marching along z.
__kernel void heat(__global float* restrict t, __global float* restrict tn,
                   int nx, int ny, int nz, float alpha) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int plane = nx * ny;
    for (int z = 1; z < nz - 1; ++z) {
        int i = z * plane + y * nx + x;
        tn[i] = t[i] + alpha * (t[i - 1] + t[i + 1] + t[i - nx] + t[i + nx]
                                + t[i - plane] + t[i + plane] - 6.0f * t[i]);
    }
}
