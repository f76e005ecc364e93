/*
 * A recursive (IIR) smoothing down each column, one work-item per column, as SDK
 * samples write a recursive Gaussian: linear, but every point depends on the whole
 * column above it. Not a stencil: refused (its response runs to the edge).
 */
__kernel void iir(__global const float *in, __global float *out, int w, int h, float a)
{
    int x = get_global_id(0);
    if (x >= w) return;
    float yp = 0.0f;
    for (int y = 0; y < h; y++) {
        yp = a * in[y * w + x] + (1.0f - a) * yp;
        out[y * w + x] = yp;
    }
}
