/*
 * One step of a hotspot-style thermal simulation on a 2D chip grid (after Rodinia's
 * hotspot): each cell's temperature moves towards its neighbours' and the ambient
 * temperature and rises with the power dissipated in it. Two read-only inputs: the
 * temperature field and the power field.
 *
 *   t' = t + cc * (p + (tN + tS - 2t) * ry + (tE + tW - 2t) * rx + (amb - t) * rz)
 *
 * Tunable: work-group size WX x WY, cyclic merging CX, CY, and LOCAL=1 to stage the
 * temperature tile with its one-cell halo in local memory. Border cells keep their
 * temperature (dst starts as a copy of temp).
 */
#ifndef WX
#define WX 16
#endif
#ifndef WY
#define WY 4
#endif
#ifndef CX
#define CX 1
#endif
#ifndef CY
#define CY 1
#endif
#ifndef LOCAL
#define LOCAL 0
#endif

#define TX (WX + 2)
#define TY (WY + 2)

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void hotspot(__global const float *restrict temp, __global const float *restrict power,
             __global float *restrict dst, const float cc, const float rx, const float ry,
             const float rz, const float amb)
{
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
#if LOCAL
    __local float tile[TY][TX];
#endif
    for (int cy = 0; cy < CY; ++cy) {
        for (int cx = 0; cx < CX; ++cx) {
            const int bx = (int)get_group_id(0) * (WX * CX) + cx * WX;
            const int by = (int)get_group_id(1) * (WY * CY) + cy * WY;
            const int x = bx + lx;
            const int y = by + ly;
#if LOCAL
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int i = ly * WX + lx; i < TX * TY; i += WX * WY) {
                const int xx = bx - 1 + i % TX;
                const int yy = by - 1 + i / TX;
                tile[i / TX][i % TX] =
                    (xx >= 0 && xx < NX && yy >= 0 && yy < NY) ? temp[yy * NX + xx] : 0.0f;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
#define T(dy, dx) tile[ly + 1 + (dy)][lx + 1 + (dx)]
#else
#define T(dy, dx) temp[(y + (dy)) * NX + x + (dx)]
#endif
            if (x >= 1 && x < NX - 1 && y >= 1 && y < NY - 1) {
                const float t = T(0, 0);
                const float delta = cc * (power[y * NX + x] + (T(-1, 0) + T(1, 0) - 2.0f * t) * ry
                                          + (T(0, 1) + T(0, -1) - 2.0f * t) * rx + (amb - t) * rz);
                dst[y * NX + x] = t + delta;
            }
#undef T
        }
    }
}
