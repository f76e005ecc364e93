/*
 * Second-order upwind advection along y for a velocity pointing to -y (what arrives
 * comes from larger y): a one-sided difference over rows j, j+1 and j+2, written from
 * the first row to the last but two, where every tap lies inside the array. Lifted
 * with band: reach.
 */
__kernel void advect_y2(__global const float *u, __global float *un, int nx, int ny, float c)
{
    int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny - 2) return;
    int k = j * nx + i;
    un[k] = u[k] + 0.5f * c * (-3.0f * u[k] + 4.0f * u[k + nx] - u[k + 2 * nx]);
}
