/* pocl's scalarwave style (examples/scalarwave, Schnetter): the grid's step, spacing and
 * sizes passed as one struct of scalars by value, read as grid.dt, grid.ni. gtune passes
 * no structs: lift refuses it, listing the fields and their types, and the copy that
 * takes one scalar per field (grid.dt -> grid_dt) lifts
 * (tests/stencils/test_lift_struct.py). */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

typedef struct {
    double dt;         /* time step */
    double dx, dy, dz; /* resolution */
    int ni, nj, nk;    /* size */
} grid_t;

__kernel void wave3d(__global double *phi, __global const double *phi_p,
                     __global const double *phi_p_p, const grid_t grid)
{
    size_t i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);
    if (i >= grid.ni || j >= grid.nj || k >= grid.nk)
        return;
    size_t di = 1, dj = grid.ni, dk = (size_t)grid.ni * grid.nj;
    size_t c = i + dj * j + dk * k;
    if (i == 0 || j == 0 || k == 0 || i == grid.ni - 1 || j == grid.nj - 1 || k == grid.nk - 1) {
        phi[c] = 0.0;
        return;
    }
    double dt2 = grid.dt * grid.dt;
    phi[c] = 2.0 * phi_p[c] - phi_p_p[c]
        + dt2 * ((phi_p[c - di] - 2.0 * phi_p[c] + phi_p[c + di]) / (grid.dx * grid.dx)
                 + (phi_p[c - dj] - 2.0 * phi_p[c] + phi_p[c + dj]) / (grid.dy * grid.dy)
                 + (phi_p[c - dk] - 2.0 * phi_p[c] + phi_p[c + dk]) / (grid.dz * grid.dz));
}
