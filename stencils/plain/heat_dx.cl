/*
 * An explicit heat step whose coefficient is formed in the kernel from the physical
 * scalars: r = alpha * dt / (dx * dx), u' = u + r * (sum of neighbours - 4u).
 */
__kernel void heat_dx(__global const float *u, __global float *un, const int nx, const int ny,
                      const float alpha, const float dt, const float dx)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i <= 0 || j <= 0 || i >= nx - 1 || j >= ny - 1) return;
    const float r = alpha * dt / (dx * dx);
    const int c = j * nx + i;
    un[c] = u[c] + r * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx] - 4.0f * u[c]);
}
