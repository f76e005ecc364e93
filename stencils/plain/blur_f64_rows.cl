/*
 * Double-precision five-point blur ported from a C loop nest: dimension 0 is the row
 * (transposed launch), fma() for the accumulation, clamped neighbours.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void blur_rows_f64(__global const double *in, __global double *out, int rows, int cols)
{
    const int r = get_global_id(0), c = get_global_id(1);
    if (r >= rows || c >= cols) return;
    const double w = 0.125;
    double s = in[max(r - 1, 0) * cols + c];
    s += in[min(r + 1, rows - 1) * cols + c];
    s += in[r * cols + max(c - 1, 0)];
    s += in[r * cols + min(c + 1, cols - 1)];
    out[r * cols + c] = fma(w, s, 0.5 * in[r * cols + c]);
}
