/* Parboil-style 7-point stencil: scalars first, Index3D macro, the work-item walks z
 * itself (registers rotate bottom/current/top), launch over the interior only. */
#define Index3D(_nx, _ny, _i, _j, _k) ((_i) + _nx * ((_j) + _ny * (_k)))

__kernel void block2D_reg_tiling(float c0, float c1, __global float *A0, __global float *Anext,
                                 int nx, int ny, int nz)
{
    int i = get_global_id(0) + 1;
    int j = get_global_id(1) + 1;
    if (i > nx - 2 || j > ny - 2)
        return;
    float bottom = A0[Index3D(nx, ny, i, j, 0)];
    float current = A0[Index3D(nx, ny, i, j, 1)];
    float top = A0[Index3D(nx, ny, i, j, 2)];
    for (int k = 1; k < nz - 1; k++) {
        Anext[Index3D(nx, ny, i, j, k)] =
            (top + bottom + A0[Index3D(nx, ny, i, j + 1, k)] + A0[Index3D(nx, ny, i, j - 1, k)]
             + A0[Index3D(nx, ny, i + 1, j, k)] + A0[Index3D(nx, ny, i - 1, j, k)]) * c1
            - current * c0;
        bottom = current;
        current = top;
        if (k + 2 < nz)
            top = A0[Index3D(nx, ny, i, j, k + 2)];
    }
}
