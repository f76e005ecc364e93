/*
 * A 3x3 binomial blur (1 2 1 / 2 4 2 / 1 2 1, over 16) in double precision on a doubly
 * periodic grid, the taps in a loop with the indices wrapped by (x + dx + nx) % nx.
 * Every point is written.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void blur_periodic_f64(__global const double *src, __global double *dst,
                                const int nx, const int ny)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    double acc = 0.0;
    for (int dy = -1; dy <= 1; ++dy) {
        const int yy = (y + dy + ny) % ny;
        const double wy = (dy == 0) ? 2.0 : 1.0;
        for (int dx = -1; dx <= 1; ++dx) {
            const int xx = (x + dx + nx) % nx;
            const double wx = (dx == 0) ? 2.0 : 1.0;
            acc += wy * wx * src[yy * nx + xx];
        }
    }
    dst[y * nx + x] = acc * 0.0625;
}
