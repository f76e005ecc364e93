// A weighted 5-point stencil whose weights live in __constant memory.
__kernel void weighted(__global const float* src, __global float* dst,
                       __constant float* w, int nx, int ny) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    int i = y * nx + x;
    dst[i] = w[0] * src[i] + w[1] * src[i - 1] + w[1] * src[i + 1]
           + w[3] * src[i - nx] + w[4] * src[i + nx];
}
