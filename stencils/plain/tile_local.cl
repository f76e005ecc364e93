/*
 * A 5x5 weighted blur through a local-memory tile, as SDK samples write it: each
 * 16x16 work-group loads its block and a halo of two (clamped at the image's edges),
 * waits at a barrier and filters from local memory; the weights are a __constant
 * table, scaled by a run-time gain. The image's width is the launch's global size.
 */
#define BS 16
#define RAD 2
#define TILE (BS + 2 * RAD)

__constant float W5[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

__kernel __attribute__((reqd_work_group_size(BS, BS, 1)))
void tile_blur(__global const float *in, __global float *out, const float gain)
{
    __local float tile[TILE][TILE];
    const int w = get_global_size(0), h = get_global_size(1);
    const int x = get_global_id(0), y = get_global_id(1);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int bx = x - lx - RAD, by = y - ly - RAD;
    for (int j = ly; j < TILE; j += BS)
        for (int i = lx; i < TILE; i += BS)
            tile[j][i] = in[clamp(by + j, 0, h - 1) * w + clamp(bx + i, 0, w - 1)];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (int j = 0; j <= 2 * RAD; j++)
        for (int i = 0; i <= 2 * RAD; i++)
            s += W5[j] * W5[i] * tile[ly + j][lx + i];
    out[y * w + x] = gain * s;
}
