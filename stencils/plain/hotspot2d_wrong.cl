/*
 * WRONG: divides the y neighbours by Rx, not Ry.
 * One step of Rodinia's 2D HotSpot thermal simulation, written as its C/OpenMP version
 * computes it: the coefficients are quotients of run-time scalars (step/Cap, 1/Rx, 1/Ry,
 * 1/Rz) and the ambient temperature enters through amb_temp/Rz. Neighbours are clamped
 * at the chip's edges. `gtune lift` finds each weight as a sum of monomials with integer
 * powers (the centre's: 1 - 2*step/(Cap*Rx) - 2*step/(Cap*Ry) - step/(Cap*Rz)).
 */
__kernel void hotspot2d(__global const float *power, __global const float *temp,
                        __global float *result, int row, int col, float Cap, float Rx,
                        float Ry, float Rz, float step, float amb_temp)
{
    const int c = get_global_id(0);
    const int r = get_global_id(1);
    if (c >= col || r >= row)
        return;
    const int n = max(r - 1, 0), s = min(r + 1, row - 1);
    const int w = max(c - 1, 0), e = min(c + 1, col - 1);
    const float t = temp[r * col + c];
    const float delta = (step / Cap)
        * (power[r * col + c] + (temp[s * col + c] + temp[n * col + c] - 2.0f * t) / Rx
           + (temp[r * col + e] + temp[r * col + w] - 2.0f * t) / Rx + (amb_temp - t) / Rz);
    result[r * col + c] = t + delta;
}
