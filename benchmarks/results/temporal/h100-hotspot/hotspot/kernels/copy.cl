/* Copy: every element read once and written once, VX floats per work-item. */
#ifndef VX
#define VX 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
__kernel __attribute__((reqd_work_group_size(WX, 1, 1)))
void copy(__global const float *restrict src, __global float *restrict dst)
{
    const size_t i = get_global_id(0);
#if VX == 1
    dst[i] = src[i];
#else
    CAT(vstore, VX)(CAT(vload, VX)(i, src), i, dst);
#endif
}
