/*
 * Conway's Game of Life on a float grid (1 alive, 0 dead): the next state depends on
 * the count of live neighbours through a rule, not a weighted sum. Not a linear
 * stencil: `gtune lift` refuses it.
 */
__kernel void life(__global const float *cells, __global float *next, int width, int height)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1)
        return;
    float alive = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx != 0 || dy != 0)
                alive += cells[(y + dy) * width + x + dx];
    const float self = cells[y * width + x];
    next[y * width + x] = (alive == 3.0f || (self == 1.0f && alive == 2.0f)) ? 1.0f : 0.0f;
}
