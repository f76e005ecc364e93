/*
 * A row convolution in the style of the NVIDIA OpenCL SDK's oclConvolutionSeparable
 * (convolutionRows): both pointers are first moved to the work-group's first pixel
 * (`d_Src += baseY * pitch + baseX;`, the same for d_Dst) and only then indexed; each
 * work-group stages its row piece with KERNEL_RADIUS pixels of halo either side (zero
 * outside the image) in a __local tile and sums 2 * KERNEL_RADIUS + 1 taps of the
 * __constant filter c_Kernel. One work-item per pixel, in groups of ROWS_BLOCKDIM_X x
 * ROWS_BLOCKDIM_Y (the host's fixed launch); the width a multiple of ROWS_BLOCKDIM_X.
 */
#ifndef KERNEL_RADIUS
#define KERNEL_RADIUS 2
#endif
#ifndef ROWS_BLOCKDIM_X
#define ROWS_BLOCKDIM_X 16
#endif
#ifndef ROWS_BLOCKDIM_Y
#define ROWS_BLOCKDIM_Y 4
#endif
#define TILE_W (ROWS_BLOCKDIM_X + 2 * KERNEL_RADIUS)

__kernel __attribute__((reqd_work_group_size(ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y, 1)))
void conv_rows(__global float *d_Dst, __global float *d_Src, __constant float *c_Kernel,
               int imageW, int pitch)
{
    __local float l_Data[ROWS_BLOCKDIM_Y][TILE_W];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int baseX = get_group_id(0) * ROWS_BLOCKDIM_X;
    const int baseY = get_global_id(1);
    d_Src += baseY * pitch + baseX;
    d_Dst += baseY * pitch + baseX;
    for (int i = lx; i < TILE_W; i += ROWS_BLOCKDIM_X) {
        const int x = baseX + i - KERNEL_RADIUS;
        l_Data[ly][i] = (x >= 0 && x < imageW) ? d_Src[i - KERNEL_RADIUS] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
        sum += c_Kernel[KERNEL_RADIUS - j] * l_Data[ly][lx + KERNEL_RADIUS + j];
    d_Dst[lx] = sum;
}
