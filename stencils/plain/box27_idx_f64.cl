/* A 3D 27-point smoother in double, as C codes ported loop-nest-first write it:
 * an IDX macro over the int sizes passed as arguments, get_global_id(0) the slowest
 * axis (k), restrict pointers, early return on the boundary, weights by distance. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define IDX(i, j, k) ((size_t)(k) * ny * nx + (size_t)(j) * nx + (i))

__kernel void smooth27(__global const double *restrict a, __global double *restrict b,
                       const int nx, const int ny, const int nz, const double w)
{
    const int k = get_global_id(0);
    const int j = get_global_id(1);
    const int i = get_global_id(2);
    if (i < 1 || j < 1 || k < 1 || i > nx - 2 || j > ny - 2 || k > nz - 2)
        return;
    double s = 0.0;
    for (int dk = -1; dk <= 1; dk++)
        for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
                const double wt = (di == 0 && dj == 0 && dk == 0) ? 0.0
                                : 1.0 / (double)(1 << (abs(di) + abs(dj) + abs(dk)));
                s += wt * a[IDX(i + di, j + dj, k + dk)];
            }
    b[IDX(i, j, k)] = (1.0 - w) * a[IDX(i, j, k)] + w * s / 13.0;
}
