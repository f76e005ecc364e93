/*
 * First-order upwind advection of a scalar q by a constant velocity (u, v), both
 * positive, on a doubly periodic domain: the backward differences read (x-1, y) and
 * (x, y-1), wrapped past the low edge to the last column and row. Courant numbers are
 * computed in the kernel from u, v, dt, dx, dy. Every point is written.
 */
__kernel void advect_upwind_periodic(__global const float *q, __global float *qnew,
                                     const int nx, const int ny,
                                     const float u, const float v,
                                     const float dt, const float dx, const float dy)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;

    int xm = x - 1;
    if (xm < 0)
        xm += nx;
    int ym = y - 1;
    if (ym < 0)
        ym += ny;

    const float cx = u * dt / dx;
    const float cy = v * dt / dy;
    const float qc = q[y * nx + x];
    qnew[y * nx + x] = qc - cx * (qc - q[y * nx + xm]) - cy * (qc - q[ym * nx + x]);
}
