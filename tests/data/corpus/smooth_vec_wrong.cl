// WRONG at VW=4: lane 2 stores lane 1. A 1-2-1 smoothing along x, VW points per
// work-item, read through a helper taking a const pointer, with a debug array.
#ifndef VW
#define VW 1
#endif

float at(const __global float* p, int x, int y, int nx) {
    x = clamp(x, 0, nx - 1);
    return p[y * nx + x];
}

__kernel void smooth(__global const float* in, __global float* out, __global float* dbg,
                     int nx, int ny, int debug) {
    int x0 = get_global_id(0) * VW;
    int y = get_global_id(1);
    if (x0 >= nx || y >= ny) return;
    float r[VW];
    for (int k = 0; k < VW; ++k) {
        int x = x0 + k;
        r[k] = 0.25f * at(in, x - 1, y, nx) + 0.5f * at(in, x, y, nx) + 0.25f * at(in, x + 1, y, nx);
    }
#if VW == 4
    vstore4((float4)(r[0], r[1], r[1], r[3]), 0, out + y * nx + x0);
#elif VW == 2
    vstore2((float2)(r[0], r[1]), 0, out + y * nx + x0);
#else
    out[y * nx + x0] = r[0];
#endif
    if (debug) dbg[y * nx + x0] = (float)x0;
}
