/*
 * A 3x3 box filter on an image object read through a sampler that clamps to the edge,
 * as OpenCL image samples write it. Image arguments are not arrays lift can probe.
 */
__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void box_image(__read_only image2d_t src, __write_only image2d_t dst)
{
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 s = (float4)(0.0f);
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            s += read_imagef(src, smp, p + (int2)(i, j));
    write_imagef(dst, p, s / 9.0f);
}
