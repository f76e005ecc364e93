/*
 * convolution_sized.cl with its filter read transposed (filter[j * fw + i]): a
 * different convolution for a filter that is not symmetric. The definition lifted from
 * convolution_sized.cl must refuse it as its original.
 */
__kernel void convolution_sized(__global float *output, __global const float *input,
                                __constant float *filter, int fw, int width, int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < width && y < height) {
        const int pitch = width + 4;
        float sum = 0.0f;
        for (int i = 0; i < fw; i++) {
            for (int j = 0; j < fw; j++) {
                sum += input[(y + i + 2 - fw / 2) * pitch + x + j + 2 - fw / 2] * filter[j * fw + i];
            }
        }
        output[y * width + x] = sum;
    }
}
