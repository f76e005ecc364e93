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
 * it needs were written D plane steps before, so they are loaded a step ahead, D - 1
 * steps after their neighbour wrote them (while the step computes).
 *
 * Progress without fences (the low-latency protocol of NCCL's LL): every value of an
 * edge goes out beside a tag, base + the plane step that wrote it, in one 8-byte store,
 * which a reader sees whole or not at all. A reader loads an edge, and loads again
 * until every tag is the one it expects. Nothing else orders the work-groups. A wait
 * that lasts past SPIN_MAX loads gives up and sets *err (the outputs are then wrong and
 * the verification says so; the launch never hangs). The edges wait in a staging area
 * of local memory until the next plane step puts them around the planes.
 * PF 1 issues a step's edge loads before its levels and checks them after (registers
 * held across the levels), PF 0 loads and checks them after the levels, PF 2 copies
 * them into local memory while the levels run (NVIDIA's cp.async, inline PTX, with
 * CPA 1; a plain copy elsewhere) and checks the tags there after the levels. Level 0's
 * edges (the input's) are loaded before the levels and staged after them.
 *
 * The interior boundary: the array's outer planes, rows and columns keep their value
 * at every level (each level's value there is the input's). The output is written
 * whole, rim included, so the destination needs no copy of the input first.
 *
 * Defines: NX NY NZ (the array), WX (float4 columns of a block), WY (its rows), TB (the
 * levels: steps per launch), D (the skew), R (the edge buffer's slots, one per plane
 * step), NBX NBY (blocks across and down), SPIN_MAX, PF, CPA, UNROLL (the walk
 * unrolled by its queue), the probes PROBE_NOWAIT and PROBE_NOX, and STENCIL_TERMS(T)
 * with T(dx, dy, dz, w) over a star of radius 1 (optional: heat3d's by default).
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

/* probes, wrong by design: no waiting for the tags; no edges exchanged at all */
#ifndef PROBE_NOWAIT
#define PROBE_NOWAIT 0
#endif
#ifndef PROBE_NOX
#define PROBE_NOX 0
#endif
#ifndef UNROLL
#define UNROLL 0
#endif
#ifndef CPA
#define CPA 0
#endif
#define QZ (D + 2)                      /* a level's planes z-1 .. z+D */
#define PVN (WX + 2 + 1 - WX % 2)       /* a shared row's vectors: odd */
#define PITCH (4 * PVN)
#define PLANE (PITCH * (WY + 2))
#define NB (NBX * NBY)
/* the staging area of one level: top row, bottom row, left column, right column */
#define ST_ROW(e) ((e) * 4 * WX)
#define ST_COL(e) (8 * WX + (e) * WY)
#define STAGE (8 * WX + 2 * WY)
/* the edge buffer: (value, tag) pairs; edge e (0 top row, 1 bottom row, 2 left column,
   3 right column) of block g's level lv (1 .. TB-1) at slot sl: its first pair */
#define EDGE ((4 * WX > WY ? 4 * WX : WY + 1) / 2 * 2) /* pairs of one edge */
#define XAT(sl, lv, g, e) (2 * (((((sl) * (TB - 1) + (lv) - 1) * NB + (g)) * 4 + (e)) * EDGE))
/* PF 2's staging area of one level (1 .. TB-1): the pairs as they were copied */
#define WYE (WY + WY % 2)
#define TR(e) ((e) * 8 * WX)
#define TC(e) (16 * WX + (e) * 2 * WYE)
#define TSTAGE (16 * WX + 4 * WYE)
#if CPA
#define CP16(l, g)                                                                       \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(l), "l"(g) : "memory")
#define CP_WAIT() asm volatile("cp.async.wait_all;" ::: "memory")
#else
#define CP16(l, g) (*(__local uint4 *)(l) = *(volatile __global uint4 *)(g))
#define CP_WAIT()
#endif
#define IDX(z, y, x) ((((size_t)(z)) * NY + (size_t)(y)) * NX + (size_t)(x))

#define PLANE_AT(lv, o) (planes[(lv) * PLANE + (o)])
#define PV(lv, o) (*(__local float4 *)(planes + (lv) * PLANE + (o)))
#define XROW(a) (*(volatile __global uint4 *)(xbuf + (a)))
#define XCOL(a) (*(volatile __global uint2 *)(xbuf + (a)))

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

/* the edges' loads for the next plane step (levels 1 .. TB-1), into rr and cc */
#define EDGE_LOADS                                                                       \
    _Pragma("unroll") for (int lv = 1; lv < TB; ++lv) {                                  \
        if (live && (top || bottom)) {                                                   \
            rr[lv - 1][0] = XROW(XAT(sl, lv, rown, re) + 8 * lx);                        \
            rr[lv - 1][1] = XROW(XAT(sl, lv, rown, re) + 8 * lx + 4);                    \
        }                                                                                \
        if (live && (left || right)) {                                                   \
            cc[lv - 1] = XCOL(XAT(sl, lv, coln, ce) + 2 * ly);                           \
        }                                                                                \
    }
/* ... loaded again until their tags are the writing step's, then staged */
#define EDGE_STAGE                                                                       \
    _Pragma("unroll") for (int lv = 1; lv < TB; ++lv) {                                  \
        __local float *st_ = stage + lv * STAGE;                                         \
        if (live && (top || bottom)) {                                                   \
            int polls = 0;                                                               \
            while (!PROBE_NOWAIT && (rr[lv - 1][0].s1 != tag || rr[lv - 1][0].s3 != tag ||                \
                    rr[lv - 1][1].s1 != tag || rr[lv - 1][1].s3 != tag) &&               \
                   polls < SPIN_MAX) {                                                   \
                ++polls;                                                                 \
                rr[lv - 1][0] = XROW(XAT(sl, lv, rown, re) + 8 * lx);                    \
                rr[lv - 1][1] = XROW(XAT(sl, lv, rown, re) + 8 * lx + 4);                \
            }                                                                            \
            if (polls >= SPIN_MAX) {                                                     \
                atomic_or(err, 1);                                                       \
            }                                                                            \
            vstore4(as_float4((uint4)(rr[lv - 1][0].s0, rr[lv - 1][0].s2,                \
                                      rr[lv - 1][1].s0, rr[lv - 1][1].s2)),              \
                    0, st_ + ST_ROW(top ? 0 : 1) + 4 * lx);                              \
        }                                                                                \
        if (live && (left || right)) {                                                   \
            int polls = 0;                                                               \
            while (!PROBE_NOWAIT && cc[lv - 1].s1 != tag && polls < SPIN_MAX) {                           \
                ++polls;                                                                 \
                cc[lv - 1] = XCOL(XAT(sl, lv, coln, ce) + 2 * ly);                       \
            }                                                                            \
            if (polls >= SPIN_MAX) {                                                     \
                atomic_or(err, 1);                                                       \
            }                                                                            \
            st_[ST_COL(left ? 0 : 1) + ly] = as_float(cc[lv - 1].s0);                    \
        }                                                                                \
    }

/* PF 2: the edges' copies for the next plane step (levels 1 .. TB-1) */
#define EDGE_ASYNC                                                                       \
    _Pragma("unroll") for (int lv = 1; lv < TB; ++lv) {                                  \
        __local uint *t_ = tstage + (lv - 1) * TSTAGE;                                   \
        if (live && (top || bottom)) {                                                   \
            const int a_ = XAT(sl, lv, rown, re) + 8 * lx;                               \
            CP16(t_ + TR(top ? 0 : 1) + 8 * lx, xbuf + a_);                              \
            CP16(t_ + TR(top ? 0 : 1) + 8 * lx + 4, xbuf + a_ + 4);                      \
        }                                                                                \
        if (live && (left || right) && ly % 2 == 0) {                                    \
            CP16(t_ + TC(left ? 0 : 1) + 2 * ly, xbuf + XAT(sl, lv, coln, ce) + 2 * ly);   \
        }                                                                                \
    }
/* ... their tags checked where they landed; a copy that came too early is loaded again
   until its tags are right */
#define CHECK16(l, g)                                                                    \
    {                                                                                    \
        uint4 w_ = *(__local uint4 *)(l);                                                \
        int polls = 0;                                                                   \
        while (!PROBE_NOWAIT && (w_.s1 != tag || w_.s3 != tag) && polls < SPIN_MAX) {    \
            ++polls;                                                                     \
            w_ = *(volatile __global uint4 *)(g);                                        \
        }                                                                                \
        if (polls >= SPIN_MAX) {                                                         \
            atomic_or(err, 1);                                                           \
        }                                                                                \
        *(__local uint4 *)(l) = w_;                                                      \
    }
#define EDGE_CHECK                                                                       \
    CP_WAIT();                                                                           \
    _Pragma("unroll") for (int lv = 1; lv < TB; ++lv) {                                  \
        __local uint *t_ = tstage + (lv - 1) * TSTAGE;                                   \
        if (live && (top || bottom)) {                                                   \
            const int a_ = XAT(sl, lv, rown, re) + 8 * lx;                               \
            CHECK16(t_ + TR(top ? 0 : 1) + 8 * lx, xbuf + a_);                           \
            CHECK16(t_ + TR(top ? 0 : 1) + 8 * lx + 4, xbuf + a_ + 4);                   \
        }                                                                                \
        if (live && (left || right) && ly % 2 == 0) {                                    \
            CHECK16(t_ + TC(left ? 0 : 1) + 2 * ly, xbuf + XAT(sl, lv, coln, ce) + 2 * ly); \
        }                                                                                \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void exchange_walk(__global const float *restrict src, __global float *restrict dst,
                   __global uint *xbuf, const int base, __global int *err)
{
    __local float4 planes_v[TB * PLANE / 4]; /* levels 0 .. TB-1 */
    __local float4 stage_v[(TB * STAGE + 3) / 4];
    __local float *planes = (__local float *)planes_v;
    __local float *stage = (__local float *)stage_v;
#if PF == 2
    __local uint4 tstage_v[(TB > 1 ? TB - 1 : 1) * TSTAGE / 4];
    __local uint *tstage = (__local uint *)tstage_v;
#endif
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
    const int re = top ? 1 : 0; /* the neighbour's edge facing this block */
    const int ce = left ? 3 : 2;
    const int rowy = top ? y - 1 : y + 1;
    const int colx = left ? x0 - 1 : x0 + 4;
    const bool xin0 = x0 > 0, xin3 = x0 + 3 < NX - 1; /* the lanes 0 and 3 off the x rim */
    const bool yin = y > 0 && y < NY - 1;

    float4 q[TB][QZ]; /* level lv's planes z-1 .. z+D of its next step */
    uint4 rr[TB > 1 ? TB - 1 : 1][2]; /* the next step's edges as loaded: (value, tag) */
    uint2 cc[TB > 1 ? TB - 1 : 1];
    for (int lv = 0; lv < TB; ++lv) {
        for (int j = 0; j < QZ; ++j) {
            q[lv][j] = (float4)0;
        }
    }
    for (int i = ly * WX + lx; i < TB * STAGE; i += WX * WY) {
        stage[i] = 0.0f;
    }
#if PF == 2
    for (int i = ly * WX + lx; i < (TB - 1) * TSTAGE; i += WX * WY) {
        tstage[i] = 0u;
    }
#endif
    float4 nv = *(__global const float4 *)(src + IDX(0, y, x0)); /* plane 0 */

#if UNROLL /* by the queue's length: its shifts become renamings */
#pragma unroll QZ
#endif
    for (int p = 0; p < NZ + TB * D; ++p) {
        barrier(CLK_LOCAL_MEM_FENCE);
        /* level lv's plane p - (lv + 1) * D, read by level lv + 1 this step */
#pragma unroll
        for (int lv = 0; lv < TB; ++lv) {
            PV(lv, own) = q[lv][2];
#if PF == 2
            if (lv > 0) {
                __local uint *t_ = tstage + (lv - 1) * TSTAGE;
                if (top || bottom) {
                    const uint4 a_ = *(__local uint4 *)(t_ + TR(top ? 0 : 1) + 8 * lx);
                    const uint4 b_ = *(__local uint4 *)(t_ + TR(top ? 0 : 1) + 8 * lx + 4);
                    PV(lv, rowo) = as_float4((uint4)(a_.s0, a_.s2, b_.s0, b_.s2));
                }
                if (left || right) {
                    PLANE_AT(lv, colo) = as_float(t_[TC(left ? 0 : 1) + 2 * ly]);
                }
                continue;
            }
#endif
            if (top || bottom) {
                PV(lv, rowo) = vload4(0, stage + lv * STAGE + ST_ROW(top ? 0 : 1) + 4 * lx);
            }
            if (left || right) {
                PLANE_AT(lv, colo) = stage[lv * STAGE + ST_COL(left ? 0 : 1) + ly];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the next step's edges, written at step p + 1 - D (none before step 0) */
        const int zn = p + 1 - D;
        const bool live = zn >= 0 && TB > 1 && !PROBE_NOX;
        const int sl = live ? zn % R : 0;
        const uint tag = (uint)(base + zn);
        /* level 0's edges come from the input: loaded now, staged after the levels */
        float4 e0 = (float4)0;
        float c0 = 0.0f;
        if ((top || bottom) && zn >= 0 && zn < NZ) {
            e0 = *(__global const float4 *)(src + IDX(zn, rowy, x0));
        }
        if ((left || right) && zn >= 0 && zn < NZ) {
            c0 = src[IDX(zn, y, colx)];
        }
#if PF == 1
        EDGE_LOADS
#elif PF == 2
        EDGE_ASYNC
#endif
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
                const int ws = p % R; /* the slot of the step that writes it */
                const uint wt = (uint)(base + p);
                const uint4 u = as_uint4(v);
                if ((ly == 0 || ly == WY - 1) && !PROBE_NOX) {
                    const int a = XAT(ws, s, g, ly == 0 ? 0 : 1) + 8 * lx;
                    XROW(a) = (uint4)(u.s0, wt, u.s1, wt);
                    XROW(a + 4) = (uint4)(u.s2, wt, u.s3, wt);
                }
                if ((lx == 0 || lx == WX - 1) && !PROBE_NOX) {
                    XCOL(XAT(ws, s, g, lx == 0 ? 2 : 3) + 2 * ly) =
                        (uint2)(lx == 0 ? u.s0 : u.s3, wt);
                }
            } else if (z >= 0 && z < NZ) {
                *(__global float4 *)(dst + IDX(z, y, x0)) = v;
            }
        }
        if (top || bottom) {
            vstore4(e0, 0, stage + ST_ROW(top ? 0 : 1) + 4 * lx);
        }
        if (left || right) {
            stage[ST_COL(left ? 0 : 1) + ly] = c0;
        }
#if PF == 0
        EDGE_LOADS
#endif
#if PF == 2
        EDGE_CHECK
#else
        EDGE_STAGE
#endif
    }
}
