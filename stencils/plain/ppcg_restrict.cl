/*
 * A 2D nine-point stencil as source-to-source compilers emit it: restrict pointers,
 * global indices composed by hand from group and local ids (the block sizes macros the
 * tuner sets: --param BLOCK_X=WX), a guard on both ends of each axis, and the
 * coefficients as double literals cast to float.
 */
__kernel void kernel0(__global float *restrict A, __global float *restrict B, int n)
{
    int b0 = get_group_id(1), b1 = get_group_id(0);
    int t0 = get_local_id(1), t1 = get_local_id(0);
    int c0 = BLOCK_Y * b0 + t0, c1 = BLOCK_X * b1 + t1;
    if (c0 >= 1 && c0 <= n - 2 && c1 >= 1 && c1 <= n - 2)
        B[c0 * n + c1] = (float)(0.2) * A[c0 * n + c1]
            + (float)(0.1) * (A[(c0 - 1) * n + c1] + A[(c0 + 1) * n + c1] + A[c0 * n + c1 - 1]
                              + A[c0 * n + c1 + 1])
            + (float)(0.1) * (A[(c0 - 1) * n + c1 - 1] + A[(c0 - 1) * n + c1 + 1]
                              + A[(c0 + 1) * n + c1 - 1] + A[(c0 + 1) * n + c1 + 1]);
}
