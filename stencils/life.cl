/*
 * Conway's Game of Life, one generation, on a 2D int32 board (0 dead, 1 alive).
 *
 * Tunable: work-group size WX x WY and cyclic merging CX, CY (each work-item updates
 * CX*CY cells, WX*CX cells apart in x). Border cells keep their state: dst starts as
 * a copy of src and only cells with 1 <= x < NX-1, 1 <= y < NY-1 are written.
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

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void life(__global const int *restrict src, __global int *restrict dst)
{
    const int x0 = (int)get_group_id(0) * (WX * CX) + (int)get_local_id(0);
    const int y0 = (int)get_group_id(1) * (WY * CY) + (int)get_local_id(1);
    for (int cy = 0; cy < CY; ++cy) {
        const int y = y0 + cy * WY;
        if (y < 1 || y >= NY - 1)
            continue;
        for (int cx = 0; cx < CX; ++cx) {
            const int x = x0 + cx * WX;
            if (x < 1 || x >= NX - 1)
                continue;
            const int i = y * NX + x;
            const int n = src[i - NX - 1] + src[i - NX] + src[i - NX + 1] + src[i - 1]
                        + src[i + 1] + src[i + NX - 1] + src[i + NX] + src[i + NX + 1];
            dst[i] = (n == 3 || (n == 2 && src[i] == 1)) ? 1 : 0;
        }
    }
}
