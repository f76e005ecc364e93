/* heat3d's multi-step walk with its halo exchanged, not recomputed (a probe of issue 49).
 *
 * temporal-zreg's walk keeps TB time levels of a block of WY rows by 4*WX columns in a
 * register queue per level and walks z. At TB 4 it recomputes a halo ring per level
 * around the block, and that halo is what holds it (results/h200-limit/temporal-8/halo/:
 * 196 % of the copy without it, 142 % with it). Here the work-groups exchange their
 * levels' edges instead: every work-group's block is in the launch at once (one
 * work-group per block of the plane, the whole z range in one walk), each level's
 * edge rows and columns go to a global buffer, and each block reads its neighbours'
 * edges from there. So the launch must have all its work-groups resident at once
 * (NBX * NBY work-groups, at most one per compute unit): they wait for each other.
 *
 * Skew: level s walks plane p - s*D at plane step p (D >= 2). Level s at plane z reads
 * level s - 1's plane z in x and y (the shared plane, its edges from the neighbours)
 * and its planes z - 1 and z + 1 at the centre (the work-item's own queue). The edges
 * it needs were written D plane steps before, so they are loaded a step ahead (while
 * the step computes) and a neighbour running a step behind costs no wait.
 *
 * Progress: at the start of plane step p, each work-group publishes base + p (steps
 * 0 .. p-1 done, their edges written) in its flag; a work-item that loads a
 * neighbour's edges for step p + 1 waits for that neighbour's flag to reach
 * base + p + 2 - D. A wait that lasts past SPIN_MAX polls gives up and sets *err (the
 * outputs are then wrong and the verification says so; the launch never hangs).
 *
 * The interior boundary: the array's outer planes, rows and columns keep their value
 * at every level (each level's value there is the input's). The output is written
 * whole, rim included, so the destination needs no copy of the input first.
 *
 * Defines: NX NY NZ (the array), WX (float4 columns of a block), WY (its rows), TB (the
 * levels: steps per launch), D (the skew), R (the edge buffer's plane slots), NBX NBY
 * (blocks across and down), FS (ints between two flags), SPIN_MAX, NV_ASM (NVIDIA's
 * fences as inline PTX), STENCIL_TERMS(T) with T(dx, dy, dz, w) over a star of radius
 * 1 (optional: heat3d's by default).
 */

#ifndef STENCIL_TERMS
#define STENCIL_TERMS(T)                                                                 \
    T(0, 0, -1, 0.125f)                                                                  \
    T(0, -1, 0, 0.125f)                                                                  \
    T(-1, 0, 0, 0.125f)                                                                  \
    T(0, 0, 0, 0.25f)                                                                    \
    T(1, 0, 0, 0.125f)                                                                   \
    T(0, 1, 0, 0.125f)                                                                   \
    T(0, 0, 1, 0.125f)
#endif
#if D < 2
#error "the edges are loaded a plane step ahead: D >= 2"
#endif
#if WX < 2 || WY < 2
#error "a block's edges belong to different work-items: WX >= 2, WY >= 2"
#endif

#define QZ (D + 2)                      /* a level's planes z-1 .. z+D */
#define PVN (WX + 2 + 1 - WX % 2)       /* a shared row's vectors: odd */
#define PITCH (4 * PVN)
#define PLANE (PITCH * (WY + 2))
#define EDGE ((4 * WX > WY ? 4 * WX : WY + 3) / 4 * 4) /* floats of one edge */
#define NB (NBX * NBY)
/* edge e (0 top row, 1 bottom row, 2 left column, 3 right column) of block g's level
   lv (1 .. TB-1) at slot sl: its first float in the edge buffer */
#define XAT(sl, lv, g, e) (((((sl) * (TB - 1) + (lv) - 1) * NB + (g)) * 4 + (e)) * EDGE)
#define IDX(z, y, x) ((((size_t)(z)) * NY + (size_t)(y)) * NX + (size_t)(x))

#if NV_ASM
#define DEVICE_FENCE() asm volatile("membar.gl;")
#else
#define DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

#define PLANE_AT(lv, o) (planes[(lv) * PLANE + (o)])
#define PV(lv, o) (*(__local float4 *)(planes + (lv) * PLANE + (o)))

/* wait until block nb has published at least want; false if it gave up */
inline bool wait_for(__global volatile int *flags, int nb, int want, __global int *err)
{
    int polls = 0;
    while (flags[nb * FS] < want) {
        if (++polls > SPIN_MAX) {
            atomic_or(err, 1);
            return false;
        }
    }
    DEVICE_FENCE();
    return true;
}

#define TERM(dx, dy, dz, w)                                                              \
    {                                                                                    \
        const float4 v_ = (dz) < 0   ? zm                                                \
                          : (dz) > 0 ? zp                                                \
                          : (dy) < 0 ? ym                                                \
                          : (dy) > 0 ? yp                                                \
                          : (dx) < 0 ? xm                                                \
                          : (dx) > 0 ? xp                                                \
                                     : c;                                                \
        acc += (w) * v_;                                                                 \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void exchange_walk(__global const float *restrict src, __global float *restrict dst,
                   __global volatile int *flags, __global float *xbuf, const int base,
                   __global int *err)
{
    __local float4 planes_v[TB * PLANE / 4]; /* levels 0 .. TB-1 */
    __local float *planes = (__local float *)planes_v;
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int bx = (int)get_group_id(0);
    const int by = (int)get_group_id(1);
    const int g = by * NBX + bx;
    const int x0 = (bx * WX + lx) * 4; /* the work-item's first column */
    const int y = by * WY + ly;
    const int own = (ly + 1) * PITCH + 4 * (lx + 1); /* its vector in a shared plane */
    /* the edge work-items: which neighbour's edges they load */
    const bool top = ly == 0 && by > 0;
    const bool bottom = ly == WY - 1 && by < NBY - 1;
    const bool left = lx == 0 && bx > 0;
    const bool right = lx == WX - 1 && bx < NBX - 1;
    const int rowo = ly == 0 ? 4 * (lx + 1) : (WY + 1) * PITCH + 4 * (lx + 1);
    const int colo = lx == 0 ? (ly + 1) * PITCH + 3 : (ly + 1) * PITCH + 4 * (WX + 1);
    const int rown = top ? g - NBX : g + NBX;
    const int coln = left ? g - 1 : g + 1;
    const int rowy = top ? y - 1 : y + 1;
    const int colx = left ? x0 - 1 : x0 + 4;
    const bool xin0 = x0 > 0, xin3 = x0 + 3 < NX - 1; /* the lanes 0 and 3 off the x rim */
    const bool yin = y > 0 && y < NY - 1;

    float4 q[TB][QZ]; /* level lv's planes z-1 .. z+D of its next step */
    float4 rowb[TB];  /* the edge row and column of each level, for the next step */
    float colb[TB];
    for (int lv = 0; lv < TB; ++lv) {
        for (int j = 0; j < QZ; ++j) {
            q[lv][j] = (float4)0;
        }
        rowb[lv] = (float4)0;
        colb[lv] = 0.0f;
    }
    float4 nv = *(__global const float4 *)(src + IDX(0, y, x0)); /* plane 0 */

    for (int p = 0; p < NZ + TB * D; ++p) {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lx == 0 && ly == 0) {
            DEVICE_FENCE();
            atomic_xchg((__global int *)flags + g * FS, base + p);
        }
        /* level lv's plane p - (lv + 1) * D, read by level lv + 1 this step */
#pragma unroll
        for (int lv = 0; lv < TB; ++lv) {
            PV(lv, own) = q[lv][2];
            if (top || bottom) {
                PV(lv, rowo) = rowb[lv];
            }
            if (left || right) {
                PLANE_AT(lv, colo) = colb[lv];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the next step's edges: level 0's from the input, the others' from the
           neighbours, once they have written them (at step p + 1 - D) */
        const int zn = p + 1 - D;
        const bool zin = zn >= 0 && zn < NZ;
        if (top || bottom) {
            rowb[0] = zin ? *(__global const float4 *)(src + IDX(zn, rowy, x0)) : (float4)0;
            if (TB > 1 && wait_for(flags, rown, base + p + 2 - D, err)) {
                const int sl = zn < 0 ? 0 : zn % R; /* the step that wrote them */
                const int e = top ? 1 : 0;
#pragma unroll
                for (int lv = 1; lv < TB; ++lv) {
                    rowb[lv] = *(__global volatile float4 *)(xbuf + XAT(sl, lv, rown, e) + 4 * lx);
                }
            }
        }
        if (left || right) {
            colb[0] = zin ? src[IDX(zn, y, colx)] : 0.0f;
            if (TB > 1 && wait_for(flags, coln, base + p + 2 - D, err)) {
                const int sl = zn < 0 ? 0 : zn % R;
                const int e = left ? 3 : 2;
#pragma unroll
                for (int lv = 1; lv < TB; ++lv) {
                    colb[lv] = ((__global volatile float *)xbuf)[XAT(sl, lv, coln, e) + ly];
                }
            }
        }

        /* level 0: plane p enters its queue; plane p + 1 is loaded ahead */
#pragma unroll
        for (int j = 0; j < QZ - 1; ++j) {
            q[0][j] = q[0][j + 1];
        }
        q[0][QZ - 1] = p < NZ ? nv : (float4)0;
        if (p + 1 < NZ) {
            nv = *(__global const float4 *)(src + IDX(p + 1, y, x0));
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int z = p - s * D;
            const float4 c = q[s - 1][1];
            float4 v = c;
            if (z > 0 && z < NZ - 1 && yin) {
                const float4 zm = q[s - 1][0];
                const float4 zp = q[s - 1][2];
                const float4 ym = PV(s - 1, own - PITCH);
                const float4 yp = PV(s - 1, own + PITCH);
                const float4 xm = (float4)(PLANE_AT(s - 1, own - 1), c.s0, c.s1, c.s2);
                const float4 xp = (float4)(c.s1, c.s2, c.s3, PLANE_AT(s - 1, own + 4));
                float4 acc = (float4)0;
                STENCIL_TERMS(TERM)
                v = (float4)(xin0 ? acc.s0 : c.s0, acc.s1, acc.s2, xin3 ? acc.s3 : c.s3);
            }
            if (s < TB) {
#pragma unroll
                for (int j = 0; j < QZ - 1; ++j) {
                    q[s][j] = q[s][j + 1];
                }
                q[s][QZ - 1] = v;
                const int sl = p % R; /* the slot of the step that writes it */
                if (ly == 0) {
                    *(__global float4 *)(xbuf + XAT(sl, s, g, 0) + 4 * lx) = v;
                }
                if (ly == WY - 1) {
                    *(__global float4 *)(xbuf + XAT(sl, s, g, 1) + 4 * lx) = v;
                }
                if (lx == 0) {
                    xbuf[XAT(sl, s, g, 2) + ly] = v.s0;
                }
                if (lx == WX - 1) {
                    xbuf[XAT(sl, s, g, 3) + ly] = v.s3;
                }
            } else if (z >= 0 && z < NZ) {
                *(__global float4 *)(dst + IDX(z, y, x0)) = v;
            }
        }
    }
}
