/*
 * A five-point Laplacian that writes zero on the rim (the else branch), as course
 * exercises often do instead of leaving the border alone: lifted with boundary interior
 * and rim: 0.
 */
__kernel void laplace_zero_rim(__global const float *u, __global float *lap, int nx, int ny)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny) return;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1)
        lap[j * nx + i] = u[j * nx + i - 1] + u[j * nx + i + 1] + u[(j - 1) * nx + i]
                        + u[(j + 1) * nx + i] - 4.0f * u[j * nx + i];
    else
        lap[j * nx + i] = 0.0f;
}
