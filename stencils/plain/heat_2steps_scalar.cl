/*
 * Two explicit heat steps per launch, u' = u + r (sum of the four neighbours - 4 u),
 * the diffusion number r a run-time argument; each work-item recomputes the first step
 * at its neighbours, the domain's edge fixed (Dirichlet) in both steps, as a C loop
 * over two buffers fused into one kernel writes it. `gtune lift` finds the one-step
 * stencil with r kept as a scalar (1 - 4 r at the centre, r around it) and writes a
 * definition with steps: 2 and boundary: interior.
 */
#define AT(a, x, y) a[(y) * nx + (x)]

inline float step1(__global const float *u, int x, int y, int nx, int ny, float r)
{
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2)
        return AT(u, x, y);
    return AT(u, x, y) + r * (AT(u, x - 1, y) + AT(u, x + 1, y) + AT(u, x, y - 1)
                              + AT(u, x, y + 1) - 4.0f * AT(u, x, y));
}

__kernel void heat_twice(__global const float *u, __global float *v, int nx, int ny, float r)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2)
        return;
    AT(v, x, y) = step1(u, x, y, nx, ny, r)
        + r * (step1(u, x - 1, y, nx, ny, r) + step1(u, x + 1, y, nx, ny, r)
               + step1(u, x, y - 1, nx, ny, r) + step1(u, x, y + 1, nx, ny, r)
               - 4.0f * step1(u, x, y, nx, ny, r));
}
