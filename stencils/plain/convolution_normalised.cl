/*
 * A 2D convolution that divides by the sum of its filter (a normalised filter the host
 * need not normalise): its weights are filter[k] / sum(filter), quotients of sums of the
 * array's entries, which a definition cannot hold. Must be refused.
 */
#define FW 3

__kernel void convolution_normalised(__global float *output, __global const float *input,
                                     __constant float *filter, int width, int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < width && y < height) {
        const int pitch = width + FW - 1;
        float sum = 0.0f, norm = 0.0f;
        for (int i = 0; i < FW; i++) {
            for (int j = 0; j < FW; j++) {
                sum += input[(y + i) * pitch + x + j] * filter[i * FW + j];
                norm += filter[i * FW + j];
            }
        }
        output[y * width + x] = sum / norm;
    }
}
