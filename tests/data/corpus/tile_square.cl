// CLTune style: square work-groups (TS is the local size in x and in y), each work-item
// computing WPT rows of a 5-point average, so the global y size is the rows divided by
// WPT, rounded up; a header beside the kernel.
#include "tile_common.h"
#ifndef TS
#define TS 8
#endif
#ifndef WPT
#define WPT 1
#endif
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void avg5(const __global float* in, __global float* out, int nx, int ny) {
    int x = get_global_id(0);
    int y0 = get_global_id(1) * WPT;
    if (x >= nx) return;
    for (int w = 0; w < WPT; ++w) {
        int y = y0 + w;
        if (y >= ny) return;
        out[IDX(x, y, nx)] = 0.2f * (clamped(in, x, y, nx, ny) + clamped(in, x - 1, y, nx, ny)
                                   + clamped(in, x + 1, y, nx, ny) + clamped(in, x, y - 1, nx, ny)
                                   + clamped(in, x, y + 1, nx, ny));
    }
}
