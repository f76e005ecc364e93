// Naive 3D 7-point stencil: one work-item per point, work-group size a compile-time
// constant. The interior is computed; the boundary keeps the values copied in.
__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void naive7(__global const float* in, __global float* out, const float c0, const float c1) {
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= NX - 1 || y >= NY - 1 || z >= NZ - 1) return;
    const int i = (z * NY + y) * NX + x;
#ifdef WRONG
    out[i] = c0 * in[i];
#else
    out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - NX] + in[i + NX]
                                + in[i - NX * NY] + in[i + NX * NY]);
#endif
#ifdef CRASH
    // Far outside any buffer: takes down the process on a CPU device.
    ((__global float*)0)[i] = 1.0f;
    out[(ulong)i * 4000000000UL] = 1.0f;
#endif
#ifdef BROKEN
    this is not OpenCL C;
#endif
#ifdef HANG
    while (in[i] >= 0.0f) { out[i] += 1.0f; }
#endif
}
