// WRONG: the east-west term adds 2*T instead of subtracting it.
// Rodinia hotspot style: a BLOCK_SIZE tile in local memory with a one-cell halo, so
// each work-group writes (BLOCK_SIZE-2)^2 points and the launch rounds up over that;
// physical constants as scalar arguments, macros for ranges.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))
#define CLAMP_RANGE(x, min, max) x = (x<(min)) ? min : ((x>(max)) ? max : x )
#define MIN(a, b) ((a)<=(b) ? (a) : (b))

__kernel void hotspot(__global float *power, __global float *temp_src, __global float *temp_dst,
                      int grid_cols, int grid_rows,
                      float Cap, float Rx, float Ry, float Rz, float step)
{
    __local float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    __local float power_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
    float amb_temp = 80.0f;
    float step_div_Cap = step / Cap;
    float Rx_1 = 1.0f / Rx, Ry_1 = 1.0f / Ry, Rz_1 = 1.0f / Rz;
    int bx = get_group_id(0), by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);
    int small_block_rows = BLOCK_SIZE - 2;
    int small_block_cols = BLOCK_SIZE - 2;
    int blkY = small_block_rows * by - 1;
    int blkX = small_block_cols * bx - 1;
    int yidx = blkY + ty, xidx = blkX + tx;
    int index = grid_cols * yidx + xidx;
    if (IN_RANGE(yidx, 0, grid_rows - 1) && IN_RANGE(xidx, 0, grid_cols - 1)) {
        temp_on_cuda[ty][tx] = temp_src[index];
        power_on_cuda[ty][tx] = power[index];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int validYmin = (blkY < 0) ? -blkY : 0;
    int validYmax = (blkY + BLOCK_SIZE - 1 > grid_rows - 1) ? BLOCK_SIZE - 1 - (blkY + BLOCK_SIZE - 1 - grid_rows + 1) : BLOCK_SIZE - 1;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkX + BLOCK_SIZE - 1 > grid_cols - 1) ? BLOCK_SIZE - 1 - (blkX + BLOCK_SIZE - 1 - grid_cols + 1) : BLOCK_SIZE - 1;
    int N = ty - 1, S = ty + 1, W = tx - 1, E = tx + 1;
    N = (N < validYmin) ? validYmin : N;
    S = (S > validYmax) ? validYmax : S;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;
    if (IN_RANGE(tx, 1, BLOCK_SIZE - 2) && IN_RANGE(ty, 1, BLOCK_SIZE - 2) &&
        IN_RANGE(tx, validXmin, validXmax) && IN_RANGE(ty, validYmin, validYmax)) {
        temp_dst[index] = temp_on_cuda[ty][tx] + step_div_Cap * (power_on_cuda[ty][tx] +
            (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * temp_on_cuda[ty][tx]) * Ry_1 +
            (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] + 2.0f * temp_on_cuda[ty][tx]) * Rx_1 +
            (amb_temp - temp_on_cuda[ty][tx]) * Rz_1);
    }
}
