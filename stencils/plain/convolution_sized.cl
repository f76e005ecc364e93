/*
 * A 2D convolution whose filter size comes as an argument (fw x fw, the input padded by
 * 2 for filters up to 5 x 5), as convolution samples pass it: the stencil's extent
 * changes with fw, which a definition cannot express (its offsets are fixed), so lift
 * refuses it unless told to hold fw at its value (--fixed fw): the definition is then
 * this kernel at that fw.
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
                sum += input[(y + i + 2 - fw / 2) * pitch + x + j + 2 - fw / 2] * filter[i * fw + j];
            }
        }
        output[y * width + x] = sum;
    }
}
