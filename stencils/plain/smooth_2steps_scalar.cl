/*
 * Two time steps of a 2D five-point smoothing in one launch, clamped at the edges, its
 * weights run-time arguments: u' = c0 u + c1 (sum of the four neighbours). Each
 * work-item computes the first step at its four neighbours and itself (each with
 * clamped reads), then the second step from those. `gtune lift` finds the one-step
 * stencil with c0 and c1 kept as scalars and writes a definition with steps: 2.
 */
float step1(__global const float *u, int x, int y, int nx, int ny, float c0, float c1)
{
    const int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    const int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    return c0 * u[y * nx + x]
        + c1 * (u[y * nx + xm] + u[y * nx + xp] + u[ym * nx + x] + u[yp * nx + x]);
}

__kernel void smooth_twice_c(__global const float *u, __global float *v, int nx, int ny,
                             float c0, float c1)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    const int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    const int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    v[y * nx + x] = c0 * step1(u, x, y, nx, ny, c0, c1)
        + c1 * (step1(u, xm, y, nx, ny, c0, c1) + step1(u, xp, y, nx, ny, c0, c1)
                + step1(u, x, ym, nx, ny, c0, c1) + step1(u, x, yp, nx, ny, c0, c1));
}
