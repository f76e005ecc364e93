/*
 * One Jacobi sweep on a square n x n grid in the style of GPU benchmark suites: the
 * element type is a macro (-DDATA_TYPE=float or double), the weight a literal, the
 * grid's edge is skipped. Launched as a 2D grid of 32x8 work-groups.
 */
__kernel void jacobi2d_step(__global DATA_TYPE *A, __global DATA_TYPE *B, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row > 0 && row < n - 1 && col > 0 && col < n - 1) {
        B[row * n + col] = (DATA_TYPE)0.2 * (A[row * n + col] + A[row * n + col - 1]
                         + A[row * n + col + 1] + A[(row + 1) * n + col]
                         + A[(row - 1) * n + col]);
    }
}
