/*
 * A 9-point weighted stencil in the style of SHOC's Stencil2D (StencilKernel): the
 * centre, the four cardinal and the four diagonal neighbours each have their weight, a
 * float argument. The input is stored with a halo of one cell on each side (its rows
 * `alignment` floats apart); the output is dense. Each work-group copies its block and
 * the halo around it -- (local size + 2) x (local size + 2) floats -- into the __local
 * buffer `sh`, which the host sizes per launch (clSetKernelArg(k, 6, bytes, NULL)),
 * waits at a barrier and computes from local memory.
 */
__kernel void StencilKernel(__global const float *data, __global float *newData,
                            const int alignment, const float wCenter, const float wCardinal,
                            const float wDiagonal, __local float *sh)
{
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int lw = get_local_size(0), lh = get_local_size(1);
    const int gx = get_global_id(0), gy = get_global_id(1);
    const int width = get_global_size(0);
    const int tw = lw + 2; /* the tile's row: the block and a halo cell either side */
    /* this work-item's point in the padded input, and in the tile */
    const int p = (gy + 1) * alignment + (gx + 1);
    const int t = (ly + 1) * tw + (lx + 1);

    sh[t] = data[p];
    if (lx == 0)
        sh[t - 1] = data[p - 1];
    if (lx == lw - 1)
        sh[t + 1] = data[p + 1];
    if (ly == 0)
        sh[t - tw] = data[p - alignment];
    if (ly == lh - 1)
        sh[t + tw] = data[p + alignment];
    if (lx == 0 && ly == 0)
        sh[t - tw - 1] = data[p - alignment - 1];
    if (lx == lw - 1 && ly == 0)
        sh[t - tw + 1] = data[p - alignment + 1];
    if (lx == 0 && ly == lh - 1)
        sh[t + tw - 1] = data[p + alignment - 1];
    if (lx == lw - 1 && ly == lh - 1)
        sh[t + tw + 1] = data[p + alignment + 1];
    barrier(CLK_LOCAL_MEM_FENCE);

    const float center = sh[t];
    const float cardinal = sh[t - tw] + sh[t + tw] + sh[t - 1] + sh[t + 1];
    const float diagonal = sh[t - tw - 1] + sh[t - tw + 1] + sh[t + tw - 1] + sh[t + tw + 1];
    newData[gy * width + gx] = wCenter * center + wCardinal * cardinal + wDiagonal * diagonal;
}
