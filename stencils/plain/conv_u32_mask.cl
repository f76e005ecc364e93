/* A 3x3 convolution of uint pixels in the style of the AMD APP SDK's image samples: one
 * work-item per pixel on a 1D launch over width*height (x = tid % width), a mask of
 * floats the host fills, taps outside the image skipped, the weighted sum rounded back
 * with (uint)(sum + 0.5f). Written for gtune's corpus (uint32 elements). */
__kernel void conv_u32_mask(__global uint *output, __global const uint *input,
                            __global const float *mask, const uint width, const uint height)
{
    const uint tid = get_global_id(0);
    if (tid >= width * height)
        return;
    const int x = (int)(tid % width), y = (int)(tid / width);
    float sum = 0.0f;
    for (int j = -1; j <= 1; ++j) {
        for (int i = -1; i <= 1; ++i) {
            const int xx = x + i, yy = y + j;
            if (xx < 0 || xx >= (int)width || yy < 0 || yy >= (int)height)
                continue;
            sum += (float)input[yy * width + xx] * mask[(j + 1) * 3 + (i + 1)];
        }
    }
    output[tid] = (uint)(sum + 0.5f);
}
