/*
 * A smoothing step whose weight is the square root of a run-time scalar: linear in the
 * data, but sqrt(D) is no product of integer powers of D. `gtune lift` must refuse it
 * (a definition's coefficients are products and quotients of scalars and numbers).
 */
__kernel void diffuse_sqrt(__global const float *u, __global float *v, int nx, int ny,
                           float D)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const int i = y * nx + x;
    v[i] = u[i] + sqrt(D) * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - 4.0f * u[i]);
}
