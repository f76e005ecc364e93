// Shared by tile_square.cl and its wrong variant: found beside the kernel, as the
// OpenCL compiler would with -I on the kernel's folder.
#ifndef TILE_COMMON_H
#define TILE_COMMON_H
#define IDX(x, y, nx) ((y) * (nx) + (x))
inline float clamped(const __global float* a, int x, int y, int nx, int ny) {
    return a[IDX(clamp(x, 0, nx - 1), clamp(y, 0, ny - 1), nx)];
}
#endif
