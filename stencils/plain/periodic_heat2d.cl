/*
 * One explicit step of the 2D heat equation on a torus (periodic in x and y), as
 * teaching and PDE codes write it: neighbours by (x + 1) % nx and (x - 1 + nx) % nx,
 * the diffusion number alpha (k dt / dx^2) a scalar. Every point is written.
 */
__kernel void heat2d_periodic(__global const float *u, __global float *unew,
                              const int nx, const int ny, const float alpha)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;

    const int xp = (x + 1) % nx;
    const int xm = (x - 1 + nx) % nx;
    const int yp = (y + 1) % ny;
    const int ym = (y - 1 + ny) % ny;

    const float c = u[y * nx + x];
    const float lap = u[y * nx + xp] + u[y * nx + xm] + u[yp * nx + x] + u[ym * nx + x]
                    - 4.0f * c;
    unew[y * nx + x] = c + alpha * lap;
}
