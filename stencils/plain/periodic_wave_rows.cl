/*
 * A 9-point box average on a doubly periodic grid (the smoothing pass of a periodic
 * wave/ocean code), launched as a 1D NDRange over rows: each work-item walks its row
 * left to right, keeping three row pointers and wrapping x and y at the ends. The
 * launch is rounded up to whole work-groups of rows; every point is written.
 */
__kernel void box9_rows_periodic(__global const float *in, __global float *out,
                                 const int width, const int height)
{
    const int y = get_global_id(0);
    if (y >= height)
        return;

    __global const float *up = in + ((y == 0) ? height - 1 : y - 1) * width;
    __global const float *mid = in + y * width;
    __global const float *dn = in + ((y == height - 1) ? 0 : y + 1) * width;
    __global float *o = out + y * width;

    for (int x = 0; x < width; ++x) {
        const int xl = (x == 0) ? width - 1 : x - 1;
        const int xr = (x == width - 1) ? 0 : x + 1;
        const float s = up[xl] + up[x] + up[xr]
                      + mid[xl] + mid[x] + mid[xr]
                      + dn[xl] + dn[x] + dn[xr];
        o[x] = s * (1.0f / 9.0f);
    }
}
