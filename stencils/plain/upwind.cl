/*
 * First-order upwind advection in 2D: the difference taken depends on the sign of the
 * velocity at each point (a data-dependent branch). Linear for each fixed velocity
 * field, but not a stencil with fixed weights: `gtune lift` refuses it.
 */
__kernel void upwind(__global const float *u, __global const float *vel, __global float *out,
                     const float dt_dx, int nx, int ny)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const int c = y * nx + x;
    const float v = vel[c];
    const float grad = (v > 0.0f) ? u[c] - u[c - 1] : u[c + 1] - u[c];
    out[c] = u[c] - dt_dx * v * grad;
}
