/*
 * A 2D 3x3 convolution with its nine weights written into the kernel, as image and
 * benchmark codes do. ni rows of nj columns; the outermost rows and columns are left
 * as they were. Launched as a 2D grid of 32x8 work-groups.
 */
__kernel void conv2d(__global float *A, __global float *B, int ni, int nj)
{
    const int j = get_global_id(0);
    const int i = get_global_id(1);
    const float w11 = 0.2f, w12 = 0.5f, w13 = -0.8f;
    const float w21 = -0.3f, w22 = 0.6f, w23 = -0.9f;
    const float w31 = 0.4f, w32 = 0.7f, w33 = 0.1f;
    if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1) {
        B[i * nj + j] = w11 * A[(i - 1) * nj + (j - 1)] + w12 * A[(i - 1) * nj + j]
                      + w13 * A[(i - 1) * nj + (j + 1)] + w21 * A[i * nj + (j - 1)]
                      + w22 * A[i * nj + j] + w23 * A[i * nj + (j + 1)]
                      + w31 * A[(i + 1) * nj + (j - 1)] + w32 * A[(i + 1) * nj + j]
                      + w33 * A[(i + 1) * nj + (j + 1)];
    }
}
