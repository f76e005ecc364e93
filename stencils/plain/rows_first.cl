/*
 * A 2D five-point smoothing step ported from a C loop nest: launch dimension 0 is the
 * row (i, the slowest axis) and dimension 1 the column, as `for i: for j:` reads.
 * height rows of width columns, neighbours clamped at the edges. Launched as a
 * height x width grid of 1x64 work-groups (global NY,NX: dimension 0 covers the rows).
 */
__kernel void smooth_rows(const __global float *src, __global float *dst,
                          const int width, const int height, const float w)
{
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i >= height || j >= width)
        return;
    const int up = max(i - 1, 0), down = min(i + 1, height - 1);
    const int left = max(j - 1, 0), right = min(j + 1, width - 1);
    dst[i * width + j] = (1.0f - 4.0f * w) * src[i * width + j]
                       + w * (src[up * width + j] + src[down * width + j]
                              + src[i * width + left] + src[i * width + right]);
}
