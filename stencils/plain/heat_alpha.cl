/*
 * One explicit step of the 3D heat equation written as the update of the old value,
 * u' = u + alpha * (sum of the six neighbours - 6 u), with alpha a run-time argument:
 * linear, but the centre's weight is 1 - 6*alpha, a sum of products that a definition's
 * coefficient (one product) cannot hold yet. `gtune lift` finds that weight and refuses
 * the kernel, saying so.
 */
__kernel void heat_alpha(__global const float *u, __global float *next, const float alpha,
                         int nx, int ny, int nz)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    const int c = (z * ny + y) * nx + x;
    const int p = nx * ny;
    next[c] = u[c] + alpha * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] + u[c - p]
                              + u[c + p] - 6.0f * u[c]);
}
