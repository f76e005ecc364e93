/*
 * One step of a 3D 7-point heat stencil written as benchmark suites port C loop nests:
 * the host loops over the planes (for k = 0 .. nz-1) and launches this 2D kernel once
 * per plane, with the plane's index k as an argument. Lift it with --plane-index k=z:
 * every probe runs every plane, and the tuned kernel writes all planes in one launch.
 */
__kernel void heat_planes(__global const float *in, __global float *out, int nx, int ny,
                          int nz, int k, float c0, float c1)
{
    const int i = get_global_id(0);
    const int j = get_global_id(1);
    if (i < 1 || j < 1 || k < 1 || i >= nx - 1 || j >= ny - 1 || k >= nz - 1)
        return;
    const int plane = nx * ny;
    const int c = k * plane + j * nx + i;
    out[c] = c0 * in[c]
        + c1 * (in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx] + in[c - plane] + in[c + plane]);
}
