/*
 * Two time steps of a 2D Jacobi-style smoothing in one launch, the "pyramid" way:
 * each 16x16 work-group loads its tile with a halo of two into local memory (clamped
 * at the array's edges), computes the first step over the tile and a halo of one into
 * a second local buffer (ping-pong), and the second step from that. Every step reads
 * clamped neighbours: u' = 0.6 u + 0.1 (sum of the four neighbours).
 */
#define TS 16
#define HALO 2
#define TW (TS + 2 * HALO)

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void jacobi_pyramid(__global const float *u, __global float *v, const int nx, const int ny)
{
    __local float a[TW][TW];
    __local float b[TW][TW];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int ox = (int)get_group_id(0) * TS - HALO, oy = (int)get_group_id(1) * TS - HALO;
    for (int j = ly; j < TW; j += TS)
        for (int i = lx; i < TW; i += TS)
            a[j][i] = u[clamp(oy + j, 0, ny - 1) * nx + clamp(ox + i, 0, nx - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = ly + 1; j < TW - 1; j += TS)
        for (int i = lx + 1; i < TW - 1; i += TS) {
            const int gx = clamp(ox + i, 0, nx - 1), gy = clamp(oy + j, 0, ny - 1);
            const int cx = gx - ox, cy = gy - oy;
            const int xl = clamp(gx - 1, 0, nx - 1) - ox, xr = clamp(gx + 1, 0, nx - 1) - ox;
            const int yu = clamp(gy - 1, 0, ny - 1) - oy, yd = clamp(gy + 1, 0, ny - 1) - oy;
            b[j][i] = 0.6f * a[cy][cx] + 0.1f * (a[cy][xl] + a[cy][xr] + a[yu][cx] + a[yd][cx]);
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int gx = ox + HALO + lx, gy = oy + HALO + ly;
    if (gx >= nx || gy >= ny)
        return;
    const int cx = gx - ox, cy = gy - oy;
    const int xl = clamp(gx - 1, 0, nx - 1) - ox, xr = clamp(gx + 1, 0, nx - 1) - ox;
    const int yu = clamp(gy - 1, 0, ny - 1) - oy, yd = clamp(gy + 1, 0, ny - 1) - oy;
    v[gy * nx + gx] = 0.6f * b[cy][cx] + 0.1f * (b[cy][xl] + b[cy][xr] + b[yu][cx] + b[yd][cx]);
}
