/*
 * upwind2_y.cl stopping one row short: the last row whose taps lie inside the array
 * keeps its contents (the symmetric habit of writing only rows at least the reach
 * from both edges); the definition lifted from upwind2_y.cl must not accept it.
 */
__kernel void advect_y2(__global const float *u, __global float *un, int nx, int ny, float c)
{
    int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny - 3) return;
    int k = j * nx + i;
    un[k] = u[k] + 0.5f * c * (-3.0f * u[k] + 4.0f * u[k + nx] - u[k + 2 * nx]);
}
