// Central-difference gradient with two outputs (gx, gy), early return outside the
// interior, sizes and a scale factor as arguments.
__kernel void gradient(__global const float *f, __global float *gx, __global float *gy,
                       int nx, int ny, float inv2h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int c = y * nx + x;
    gx[c] = (f[c + 1] - f[c - 1]) * inv2h;
    gy[c] = (f[c + nx] - f[c - nx]) * inv2h;
}
