/*
 * The 7-point Laplacian of a 3D field on a periodic box (spectral-style test problems,
 * lattice codes), launched as a 3D NDRange of one work-item per cell. The wrap is a
 * conditional per axis: xm = (x == 0) ? nx - 1 : x - 1. inv_h2 is 1/h^2.
 */
__kernel void laplace3d_periodic(__global const float *in, __global float *out,
                                 const int nx, const int ny, const int nz,
                                 const float inv_h2)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;

    const int xm = (x == 0) ? nx - 1 : x - 1;
    const int xp = (x == nx - 1) ? 0 : x + 1;
    const int ym = (y == 0) ? ny - 1 : y - 1;
    const int yp = (y == ny - 1) ? 0 : y + 1;
    const int zm = (z == 0) ? nz - 1 : z - 1;
    const int zp = (z == nz - 1) ? 0 : z + 1;

#define AT(i, j, k) in[((k) * ny + (j)) * nx + (i)]
    const float c = AT(x, y, z);
    const float s = AT(xm, y, z) + AT(xp, y, z) + AT(x, ym, z) + AT(x, yp, z)
                  + AT(x, y, zm) + AT(x, y, zp);
#undef AT
    out[(z * ny + y) * nx + x] = inv_h2 * (s - 6.0f * c);
}
