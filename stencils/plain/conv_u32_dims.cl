/* A convolution of uint pixels that takes its sizes as the AMD APP SDK's samples pass
 * them: uint2 inputDimensions (width, height) and uint2 maskDimensions (the mask's
 * width, height: odd), a 1D launch over width*height, a mask of floats, the taps
 * outside the image skipped and the sum rounded back with (uint)(sum + 0.5f). Written
 * for gtune's corpus (vector scalar arguments). */
__kernel void conv_u32_dims(__global uint *output, __global const uint *input,
                            __global const float *mask, const uint2 inputDimensions,
                            const uint2 maskDimensions)
{
    const uint tid = get_global_id(0);
    const uint width = inputDimensions.x, height = inputDimensions.y;
    if (tid >= width * height)
        return;
    const int x = (int)(tid % width), y = (int)(tid / width);
    const int rx = (int)(maskDimensions.x - 1) / 2, ry = (int)(maskDimensions.y - 1) / 2;
    float sum = 0.0f;
    for (int j = -ry; j <= ry; ++j) {
        for (int i = -rx; i <= rx; ++i) {
            const int xx = x + i, yy = y + j;
            if (xx < 0 || xx >= (int)width || yy < 0 || yy >= (int)height)
                continue;
            const float w = mask[(j + ry) * (int)maskDimensions.x + (i + rx)];
            sum += (float)input[yy * width + xx] * w;
        }
    }
    output[tid] = (uint)(sum + 0.5f);
}
