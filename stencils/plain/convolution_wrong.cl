/*
 * WRONG (it reads the filter transposed, filter[j*FH + i]): must be caught by verification
 * against convolution.cl.
 *
 * A 2D convolution as autotuning benchmarks and image codes write it: the input is
 * padded by the filter's half-width on every side, so every output point is computed
 * the same way. The output is height x width; the input (height + FH - 1) x
 * (width + FW - 1); the FH x FW filter comes in a __constant array the host fills,
 * filter[i*FW + j] multiplying input[(y + i)*(width + FW - 1) + x + j]. Launched as a
 * 2D grid of 16x16 work-groups.
 */
#define FW 5
#define FH 5

__kernel void convolution(__global float *output, __global const float *input,
                          __constant float *filter, int width, int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < width && y < height) {
        const int pitch = width + FW - 1;
        float sum = 0.0f;
        for (int i = 0; i < FH; i++) {
            for (int j = 0; j < FW; j++) {
                sum += input[(y + i) * pitch + x + j] * filter[j * FH + i];
            }
        }
        output[y * width + x] = sum;
    }
}
