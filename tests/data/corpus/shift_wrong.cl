// WRONG: out[i + 1] = in[i] for every i, so the last work-item writes past the end of out.
__kernel void shift(__global const float* in, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i + 1] = in[i];
}
