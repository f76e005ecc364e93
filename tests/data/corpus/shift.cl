// out[i] = in[i + 1]: a shift by one element, the last element left alone.
__kernel void shift(__global const float* in, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n - 1) out[i] = in[i + 1];
}
