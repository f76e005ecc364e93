/*
 * An FDTD-2D electric-field update in place, as PolyBench's fdtd-2d writes its kernels:
 * ey is read at the point it writes and corrected by the difference of hz along the
 * rows (i the row from get_global_id(1), j the column); the first row is left alone.
 * The host rounds the launch up to whole 32x8 work-groups.
 */
typedef float DATA_TYPE;

__kernel void fdtd_ey(__global DATA_TYPE *hz, __global DATA_TYPE *ey, DATA_TYPE c, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i >= 1) && (i < ny) && (j < nx))
    {
        ey[i * nx + j] = ey[i * nx + j] - c * (hz[i * nx + j] - hz[(i - 1) * nx + j]);
    }
}
