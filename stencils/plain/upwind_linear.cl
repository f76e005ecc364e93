/*
 * First-order upwind advection along x with a constant speed, as course exercises
 * write it: linear, one-sided, writing from x = 1 to the last column (every point whose
 * taps lie inside the array): lifted with band: reach.
 */
__kernel void advect(__global const float *u, __global float *un, int nx, int ny, float c)
{
    int i = get_global_id(0), j = get_global_id(1);
    if (i < 1 || i >= nx || j >= ny) return;
    un[j * nx + i] = u[j * nx + i] - c * (u[j * nx + i] - u[j * nx + i - 1]);
}
