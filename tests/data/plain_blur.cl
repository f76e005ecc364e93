// A kernel written with no gtune description: a 3x3 box blur on a 2D image, with an
// optional per-work-item row count ROWS as another tuner might expose it.
#ifndef ROWS
#define ROWS 1
#endif
__kernel void blur(__global const float* restrict in, __global float* restrict out,
                   const int nx, const int ny, const float scale) {
    const int x = get_global_id(0);
    for (int r = 0; r < ROWS; ++r) {
        const int y = get_global_id(1) * ROWS + r;
        if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) continue;
        float s = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * nx + x + dx];
        out[y * nx + x] = scale * s;
    }
}
