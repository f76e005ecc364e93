/*
 * A 3D 27-point box stencil with four run-time coefficients: c0 for the centre, c1 for
 * the 6 face neighbours, c2 for the 12 edge neighbours, c3 for the 8 corners. One
 * work-item per point (a 3D launch); points on the boundary are left as they were.
 */
__kernel void box27(__global const float *in, __global float *out,
                    const float c0, const float c1, const float c2, const float c3,
                    const int nx, const int ny, const int nz)
{
    const int x = get_global_id(0);
    const int y = get_global_id(1);
    const int z = get_global_id(2);
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    float faces = 0.0f, edges = 0.0f, corners = 0.0f;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int far = abs(dx) + abs(dy) + abs(dz);
                const float v = in[((z + dz) * ny + (y + dy)) * nx + (x + dx)];
                if (far == 1)
                    faces += v;
                else if (far == 2)
                    edges += v;
                else if (far == 3)
                    corners += v;
            }
    out[(z * ny + y) * nx + x] =
        c0 * in[(z * ny + y) * nx + x] + c1 * faces + c2 * edges + c3 * corners;
}
