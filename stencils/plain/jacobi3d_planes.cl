/*
 * A 3D Jacobi step launched once per z-plane, the plane an argument (the host loops
 * it), written with a 3D index macro and the plane guard before the x/y guard.
 */
#define I3(i, j, k) (((k) * ny + (j)) * nx + (i))

__kernel void jacobi_plane(__global const double *a, __global double *b, const int nx,
                           const int ny, const int nz, const int kk)
{
    if (kk < 1 || kk > nz - 2) return;
    const int i = get_global_id(0), j = get_global_id(1);
    if (i < 1 || i > nx - 2 || j < 1 || j > ny - 2) return;
    b[I3(i, j, kk)] = (a[I3(i - 1, j, kk)] + a[I3(i + 1, j, kk)] + a[I3(i, j - 1, kk)]
                       + a[I3(i, j + 1, kk)] + a[I3(i, j, kk - 1)] + a[I3(i, j, kk + 1)])
                      / 6.0;
}
