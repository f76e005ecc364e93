/*
 * A 3D 7-point stencil written the way benchmark suites write it: two scalar
 * coefficients passed at run time (c0 for the centre, c1 for the six neighbours), one
 * work-item per (x, y) column that marches along z, launched with 256x1x1 work-groups
 * and a global size rounded up to whole groups. Boundary points are left as they were.
 * REAL is float unless built with -DREAL=double.
 */
#ifndef REAL
#define REAL float
#endif

__kernel void star7(REAL c0, REAL c1, __global const REAL *A0, __global REAL *Anext,
                    int nx, int ny, int nz)
{
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < 1 || i >= nx - 1 || j < 1 || j >= ny - 1)
        return;
    const int plane = nx * ny;
    for (int k = 1; k < nz - 1; ++k) {
        const int c = k * plane + j * nx + i;
        const REAL sum = A0[c - 1] + A0[c + 1] + A0[c - nx] + A0[c + nx]
                       + A0[c - plane] + A0[c + plane];
        Anext[c] = c1 * sum - c0 * A0[c];
    }
}
