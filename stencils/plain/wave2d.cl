/*
 * The 2D wave equation, leapfrog, as course exercises write it: three buffers the host
 * rotates (u_prev, u, u_next), c2 = (c dt / h)^2 a scalar. Two fields, a weight 2 - 4 c2
 * at the centre.
 */
__kernel void wave(__global const float *u, __global const float *u_prev, __global float *u_next,
                   const int nx, const int ny, const float c2)
{
    int i = get_global_id(0), j = get_global_id(1);
    if (i < 1 || j < 1 || i > nx - 2 || j > ny - 2) return;
    int k = j * nx + i;
    u_next[k] = 2.0f * u[k] - u_prev[k] + c2 * (u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx] - 4.0f * u[k]);
}
