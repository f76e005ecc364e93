/*
 * A Gauss-Seidel sweep for the Poisson equation written as one kernel over one buffer:
 * u is updated in place from its four neighbours, which other work-items may or may not
 * have updated already. Its result depends on the order the work-items run in; lift
 * must refuse it (an update in place reads the point it writes only).
 */
__kernel void gs_sweep(__global float *u, __global const float *f, const int nx, const int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    const int k = y * nx + x;
    u[k] = 0.25f * (u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx] - f[k]);
}
