/*
 * WRONG: the second step weighs the neighbours 0.25, not 0.125.
 * Two time steps of a 2D five-point smoothing in one launch, clamped at the edges: each
 * work-item computes the first step at its four neighbours and itself (each with
 * clamped reads), then the second step from those. One launch is two steps of
 * u' = 0.5 u + 0.125 (sum of the four neighbours); `gtune lift` finds the one-step
 * stencil and writes a definition with steps: 2, so the temporal techniques compete.
 */
float step1(__global const float *u, int x, int y, int nx, int ny)
{
    const int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    const int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    return 0.5f * u[y * nx + x]
        + 0.125f * (u[y * nx + xm] + u[y * nx + xp] + u[ym * nx + x] + u[yp * nx + x]);
}

__kernel void smooth_twice(__global const float *u, __global float *v, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    const int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
    const int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
    v[y * nx + x] = 0.5f * step1(u, x, y, nx, ny)
        + 0.25f * (step1(u, xm, y, nx, ny) + step1(u, xp, y, nx, ny) + step1(u, x, ym, nx, ny)
                    + step1(u, x, yp, nx, ny));
}
