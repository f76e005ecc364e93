/*
 * Two Jacobi steps per launch with a fixed rim, as a C loop nest over two buffers
 * fused into one kernel: the first step is recomputed at the neighbours (the rim's
 * values are the input's, never updated), the second written inside the rim.
 */
inline float relax(__global const float *restrict a, int i, int j, int n)
{
    return 0.25f * (a[j * n + i - 1] + a[j * n + i + 1] + a[(j - 1) * n + i] + a[(j + 1) * n + i]);
}

inline float first(__global const float *restrict a, int i, int j, int n, int m)
{
    if (i == 0 || j == 0 || i == n - 1 || j == m - 1)
        return a[j * n + i];
    return relax(a, i, j, n);
}

__kernel void jacobi_twice(__global const float *restrict a, __global float *restrict b,
                           const int n, const int m)
{
    const size_t i = get_global_id(0), j = get_global_id(1);
    if (i < 1 || j < 1 || i >= n - 1 || j >= m - 1)
        return;
    b[j * n + i] = 0.25f * (first(a, i - 1, j, n, m) + first(a, i + 1, j, n, m)
                            + first(a, i, j - 1, n, m) + first(a, i, j + 1, n, m));
}
