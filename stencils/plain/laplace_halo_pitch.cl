/* A 5-point Laplacian of a field stored with a one-cell halo: the host allocates
 * (height + 2) rows of in_pitch = width + 2 floats and passes the pitch apart from the
 * width; the kernel reads through a row pointer declared from the input, the output is
 * dense. */
__kernel void laplace_halo(__global const float *in, __global float *out,
                           const int width, const int height, const int in_pitch,
                           const float inv_h2)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    __global const float *p = in + (y + 1) * in_pitch + (x + 1);
    out[y * width + x] = inv_h2 * (p[-1] + p[1] + p[-in_pitch] + p[in_pitch] - 4.0f * p[0]);
}
