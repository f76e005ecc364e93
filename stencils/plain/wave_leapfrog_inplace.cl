/*
 * The 2D wave equation, leapfrog, with two buffers instead of three: the new time level
 * is written over the old one (u_old[k] = 2 u[k] - u_old[k] + c2 lap u), each point read
 * where it is written; the host then swaps u and u_old. The rim is left alone.
 */
__kernel void wave_step(__global const float *u, __global float *u_old, const float c2,
                        const int nx, const int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    const int k = y * nx + x;
    const float lap = u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx] - 4.0f * u[k];
    u_old[k] = 2.0f * u[k] - u_old[k] + c2 * lap;
}
