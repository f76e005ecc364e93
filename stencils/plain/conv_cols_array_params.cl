/*
 * A column convolution whose parameters are declared as arrays, as older SDK samples
 * write them: the images as `__global float d_Dst[]` and `__global const float d_Src[]`,
 * the taps as `__constant float c_Taps[3]` and the __local tile the host sizes per launch
 * as `__local float l_Data[16 * (8 + 2)]` (C takes each as a pointer; the length written
 * documents the host's default launch). Each work-group stages its columns with one
 * pixel of halo above and below, clamped at the top and bottom edges, and the sum goes
 * through convertToDstT, which the host defines empty (-D convertToDstT=) for "no
 * conversion", as OpenCV's does.
 */
__kernel void conv_cols(__global float d_Dst[], __global const float d_Src[],
                        __constant float c_Taps[3], __local float l_Data[16 * (8 + 2)],
                        int imageW, int imageH)
{
    const int x = get_global_id(0), y = get_global_id(1);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int lw = get_local_size(0), lh = get_local_size(1);
    const int top = y - ly - 1; /* the tile's first row, halo included */
    for (int i = ly; i < lh + 2; i += lh)
        l_Data[i * lw + lx] = d_Src[clamp(top + i, 0, imageH - 1) * imageW + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    const float s = c_Taps[0] * l_Data[ly * lw + lx] + c_Taps[1] * l_Data[(ly + 1) * lw + lx]
                  + c_Taps[2] * l_Data[(ly + 2) * lw + lx];
    d_Dst[y * imageW + x] = convertToDstT(s);
}
