// A 3x3 box blur of 8-bit pixels scaled by a run-time gain: the weights of a kernel of
// integer elements come from a scalar argument, which lifting cannot read through the
// rounding yet (it must refuse, naming the argument).
__kernel void blur_gain(__global const uchar *src, __global uchar *dst, int width, int height,
                        float gain)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += (float)src[(y + dy) * width + x + dx];
    dst[y * width + x] = convert_uchar_sat_rte(sum * gain / 9.0f);
}
