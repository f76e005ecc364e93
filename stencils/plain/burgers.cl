/*
 * One explicit step of the viscous Burgers equation in 3D: u_t + u u_x = nu lap(u). The
 * advection term multiplies the field by its own gradient (a nonlinear term). Not a
 * linear stencil: `gtune lift` refuses it.
 */
__kernel void burgers(__global const float *u, __global float *next, const float dt,
                      const float nu, int nx, int ny, int nz)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    const int c = (z * ny + y) * nx + x;
    const int p = nx * ny;
    const float lap = u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] + u[c - p] + u[c + p]
                    - 6.0f * u[c];
    const float adv = u[c] * 0.5f * (u[c + 1] - u[c - 1]);
    next[c] = u[c] + dt * (nu * lap - adv);
}
