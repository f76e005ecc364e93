/* A 2D wave equation step (leapfrog) in double, as seismic/teaching codes write it:
 * 1D NDRange with the point recovered by / and %, Dirichlet zero outside the domain by
 * ternaries, the Courant number computed in the kernel from c, dt, dx. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void wave_step(__global const double *u_prev, __global const double *u,
                        __global double *u_next, const int nx, const int ny,
                        const double c, const double dt, const double dx)
{
    const int gid = get_global_id(0);
    if (gid >= nx * ny)
        return;
    const int j = gid / nx;
    const int i = gid - j * nx;
    const double r2 = (c * dt / dx) * (c * dt / dx);
    const double uc = u[gid];
    const double uw = (i > 0) ? u[gid - 1] : 0.0;
    const double ue = (i < nx - 1) ? u[gid + 1] : 0.0;
    const double us = (j > 0) ? u[gid - nx] : 0.0;
    const double un = (j < ny - 1) ? u[gid + nx] : 0.0;
    u_next[gid] = 2.0 * uc - u_prev[gid] + r2 * (uw + ue + us + un - 4.0 * uc);
}
