/*
 * An explicit diffusion step whose physical parameters come in one small __constant
 * buffer (alpha, dt, h), as simulation codes pass a parameter block: the weight
 * alpha*dt/(h*h) is formed in the kernel, a quotient of the buffer's entries.
 */
__kernel void diffuse(__global const float *T, __global float *Tn, __constant float *params,
                      int nx, int ny)
{
    int i = get_global_id(0), j = get_global_id(1);
    if (i < 1 || j < 1 || i > nx - 2 || j > ny - 2) return;
    const float alpha = params[0], dt = params[1], h = params[2];
    const float r = alpha * dt / (h * h);
    int k = j * nx + i;
    Tn[k] = T[k] + r * (T[k - 1] + T[k + 1] + T[k - nx] + T[k + nx] - 4.0f * T[k]);
}
