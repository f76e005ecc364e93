/*
 * One step of a 3D thermal simulation (chip temperature with a power map), written the
 * way thermal codes write it: the temperature of each cell moves towards its six
 * neighbours and the ambient temperature, with every weight a run-time argument
 * (ce, cw, cn, cs, ct, cb, cc) and the power scaled by sdc. A neighbour beyond the chip's
 * edge is the cell itself (clamped boundaries). A 2D launch of 64x4 work-groups over
 * the x-y plane; each work-item marches along z. REAL is float unless -DREAL=double.
 */
#ifndef REAL
#define REAL float
#endif
#define AMBIENT ((REAL)80.0)

__kernel void hotspot3d(__global const REAL *power, __global const REAL *temp_in,
                        __global REAL *temp_out, REAL sdc, int nx, int ny, int nz,
                        REAL ce, REAL cw, REAL cn, REAL cs, REAL ct, REAL cb, REAL cc)
{
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    const int plane = nx * ny;
    int c = i + j * nx;
    const int west = (i == 0) ? 0 : -1;
    const int east = (i == nx - 1) ? 0 : 1;
    const int north = (j == 0) ? 0 : -nx;
    const int south = (j == ny - 1) ? 0 : nx;
    REAL below = temp_in[c];
    REAL here = temp_in[c];
    REAL above = (nz > 1) ? temp_in[c + plane] : here;
    for (int k = 0; k < nz; ++k) {
        temp_out[c] = cc * here + cw * temp_in[c + west] + ce * temp_in[c + east]
                    + cs * temp_in[c + south] + cn * temp_in[c + north] + cb * below
                    + ct * above + sdc * power[c] + ct * AMBIENT;
        below = here;
        here = above;
        c += plane;
        above = (k + 2 < nz) ? temp_in[c + plane] : here;
    }
}
