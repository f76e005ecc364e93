// 5-point Laplacian with the element type chosen by a macro and a typedef, launched
// over a global size rounded up to whole work-groups.
#ifndef DATA_TYPE
#define DATA_TYPE float
#endif
typedef DATA_TYPE real_t;
#define IDX(x, y) ((y) * nx + (x))

__kernel void laplace(__global real_t* u, __global real_t* lap, const int nx, const int ny) {
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= nx - 1 || y >= (ny - 1) / 3) return;
    lap[IDX(x, y)] = u[IDX(x - 1, y)] + u[IDX(x + 1, y)] + u[IDX(x, y - 1)]
                   + u[IDX(x, y + 1)] - 4 * u[IDX(x, y)];
}
