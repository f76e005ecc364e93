// 3x3 blur written for a tuner that passes the thread-block size as macros
// (block_size_x must equal the local size).
#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 1
#endif
__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void blur(__global float* output, __global float* input, int width, int height) {
    int x = get_group_id(0) * block_size_x + get_local_id(0);
    int y = get_group_id(1) * block_size_y + get_local_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    float sum = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
            sum += input[(y + j) * width + x + i];
    output[y * width + x] = sum / 9.0f;
}
