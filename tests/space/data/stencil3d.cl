__kernel void stencil3d(__global const float *src, __global float *dst) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t i = (z * NY + y) * NX + x;
    dst[i] = src[i];
}
