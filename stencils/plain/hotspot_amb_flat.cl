/*
 * One step of Rodinia's 2D HotSpot without its tiles, one work-item per cell, as ports
 * of it often write it: the ambient temperature a literal (`amb_temp = 80.0f`) rather than
 * an argument, each conductance divided by its resistance, neighbours clamped at the
 * chip's edges. The kernel adds a constant term, 80*step/(Cap*Rz), that lift measures
 * every weight beside.
 */
__kernel void hotspot_flat(__global const float *power, __global const float *temp,
                           __global float *dst, int cols, int rows, float Cap, float Rx,
                           float Ry, float Rz, float step)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= cols || y >= rows)
        return;
    const float amb_temp = 80.0f;
    const int n = max(y - 1, 0), s = min(y + 1, rows - 1);
    const int w = max(x - 1, 0), e = min(x + 1, cols - 1);
    const float c = temp[y * cols + x];
    dst[y * cols + x] = c + (step / Cap) * (power[y * cols + x]
        + (temp[s * cols + x] + temp[n * cols + x] - 2.0f * c) / Ry
        + (temp[y * cols + e] + temp[y * cols + w] - 2.0f * c) / Rx
        + (amb_temp - c) / Rz);
}
