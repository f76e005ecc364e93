/* SHOC Stencil2D style (vetter/shoc level1/stencil2d): the input and the output both
 * carry a halo of 1 ((NX+2)x(NY+2), row pitch NX+2) and each work-item writes one
 * interior point, its pitch taken from the launch. Lift refuses the haloed output and
 * names the flags that lift it: the whole haloed array as the problem, boundary
 * interior (tests/stencils/test_lift_struct.py). */
__kernel void smooth_haloed(__global const float *data, __global float *newData,
                            float wCenter, float wCardinal, float wDiagonal)
{
    int col = get_global_id(0), row = get_global_id(1);
    int pitch = get_global_size(0) + 2;
    int c = (row + 1) * pitch + (col + 1);
    newData[c] = wCenter * data[c]
        + wCardinal * (data[c - pitch] + data[c + pitch] + data[c - 1] + data[c + 1])
        + wDiagonal * (data[c - pitch - 1] + data[c - pitch + 1]
                       + data[c + pitch - 1] + data[c + pitch + 1]);
}
