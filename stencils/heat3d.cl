/*
 * gtune optimizing stencil template.
 *
 * One source holds every optimization of the tuning space; the configuration selects
 * them at compile time through -D macros, so the compiler folds every loop bound and
 * index and removes the code of the optimizations that are off.
 *
 *   WX WY WZ   work-group size (reqd_work_group_size)
 *   BX         block merging in x: each work-item computes BX adjacent outputs in x
 *   BY BZ      block merging in y and z (the vector technique with RIM=1): each
 *              work-item computes BY x BZ adjacent rows of BX outputs, so the rows of
 *              input they share are loaded once (1 elsewhere)
 *   VX         vector width in x (1, 2, 4, 8, 16); BX must be a multiple of VX. With
 *              2D streaming: the width of the aligned vector loads of each row segment
 *              and of the stores of a work-item's BX outputs. Integer elements: vectors
 *              of ELEM loaded and converted to REAL, stored through STORE_VECTOR.
 *              ZREG=2 (interior boundary): VX = BX = 2 or 4, each block point of a
 *              work-item a vector of VX points
 *   CX CY CZ   cyclic merging: a work-group computes CX*CY*CZ blocks of
 *              (WX*BX) x WY x WZ outputs, one after the other (round robin)
 *   LOCAL      1: cache each block's input tile and its halo in local memory
 *   IMAGE      1: read the input through a read-only image (texture cache)
 *   STREAM     1: stream along the last axis. 3D arrays (2.5D blocking): a work-group
 *              walks ZC consecutive output planes, loading each input plane once into
 *              local memory and keeping the partial sums of the planes it feeds in
 *              registers. 2D arrays: a work-item walks ZC consecutive output rows,
 *              loading each input row segment once into registers and keeping the
 *              partial sums of the rows it feeds in registers. With TB > 1 the
 *              temporal kernel streams instead, its time levels in local memory
 *   ZC         the chunk: outputs per work-item along the streamed axis when
 *              streaming (planes along z in 3D, rows along y in 2D; 1 otherwise)
 *   TB         temporal blocking: time steps one launch advances (1: one step, the
 *              techniques above; > 1: the temporal kernel, tiles in local memory, or
 *              with STREAM=1 streaming along z (3D) or y (2D, a work-group owning
 *              WY*ZC rows of a strip) with TB time levels; CX CY CZ then merge
 *              blocks into one larger block per work-group)
 *   TR         temporal tiles (TB > 1, STREAM=0): each work-item computes TR rows of a
 *              level's column at a time, the rows they share read once from local
 *              memory (1: one point at a time)
 *   ZREG       1: temporal streaming along z (TB > 1, STREAM=1, 3D) keeps each level's
 *              z-neighbours in registers and shares only the centre plane in local
 *              memory (stencils whose off-plane terms lie on the z axis); 2: the same
 *              with the block's points first and the halo frame by frame, so each
 *              level computes only its own region
 *   ZU         1: ZREG=2 unrolls its walk along z by the queue length 2*RZ+1, so
 *              (interior boundary) the queues' shift is a renaming of registers
 *   ZS         1: ZREG=2 with vectors stores every level's centre plane at the start of
 *              a plane step and meets one barrier per step (0: one per level)
 *   RIM        VX > 1 without streaming, interior boundary: 1: every vector is computed
 *              whole, those that straddle a row's rim from reads clamped into the row,
 *              and writes its interior lanes (no branch around the terms); 0: a vector
 *              that touches the rim is computed lane by lane. The clamp boundary
 *              (CLAMP=1, ZERO=0): every vector whole, one that touches an x edge built
 *              from its lanes' clamped elements (XEDGE), every lane and row written
 *   RIN        RIM=1 (the vector technique): 1: a work-item whose BY x BZ rows and
 *              their neighbour rows all lie inside reads its vectors through one
 *              pointer per field plus compile-time row offsets (the interior path),
 *              and a work-item at a y or z rim computes its rows one at a time (the
 *              loop kept rolled); 0: every work-item clamps each row it reads
 *   SEP        a separable stencil (SEP_X_TERMS, SEP_Y_TERMS, SEP_Z_TERMS: its weights'
 *              factors per axis): 1: the weights applied axis by axis. 2D streaming sums
 *              each row's x-terms once and feeds the sum to the y-queue; the vector
 *              technique (RIM=1) sums each input row's x-terms once for all of a
 *              work-item's BY x BZ rows, combines those row sums in y, then in z;
 *              temporal tiles (TR > 1) sum the x-terms of a work-item's TR rows and
 *              the 2*RY around them (3D: in each plane within RZ) once per level,
 *              then combine them in y (3D: each plane's sum, then in z)
 *   NX NY NZ   array size (NZ absent for 2D arrays)
 *
 * The stencil itself (radius per dimension, the primary field's offsets and
 * coefficients, other fields' terms, a constant, the element type, the boundary, the
 * kernel's name and arguments, arithmetic intensity) is written by gtune.stencils where
 * the STENCIL marker stands:
 *
 *   RX RY RZ       radius per axis
 *   STENCIL_TERMS  T(dx, dy, dz, coefficient) per term of the primary field, the one
 *                  the data-loading techniques optimise (SRC, default src)
 *   EXTRA_TERMS    E(field, dx, dy, dz, coefficient) per term of another field, read
 *                  from global memory (optional)
 *   CONSTANT_TERM  added after the terms (optional)
 *   REAL UREAL     element type and the unsigned type of its width (float, uint)
 *   CLAMP          0: interior boundary; 1: every point written (clamp, zero)
 *   ZERO           with CLAMP=1: 1: zero boundary (a neighbour beyond an edge reads 0);
 *                  0: clamp boundary (the global, vector, local, image and streaming
 *                  techniques; not temporal blocking nor a padded field)
 *   BORDER         with CLAMP=1, ZERO=0: 0: a neighbour beyond an edge reads the edge
 *                  (clamp); 1: wrap (periodic: the other edge's points); 2: reflect
 *                  (mirrored about the edge point: -1 reads 1, OpenCV's
 *                  BORDER_REFLECT_101); 3: symmetric (mirrored with the edge repeated:
 *                  -1 reads 0, BORDER_REFLECT). The global, vector, local and
 *                  streaming techniques; not temporal blocking, images nor a padded
 *                  field. Each axis's radius is below its size.
 *   RIM_WRITE      with CLAMP=0: 0: the rim keeps the output's prior contents; 1: each
 *                  rim point takes the primary field's value there; 2: RIM_CONST
 *                  (optional; every technique but temporal blocking)
 *   SRC_PAD_X/Y/Z  the primary field is stored with this many points beyond each edge
 *                  (optional; global, local and vector techniques, 2D streaming with
 *                  VX=1; the vector technique needs (NX + 2*SRC_PAD_X) % VX == 0)
 *   KERNEL_NAME KERNEL_ARGS DST   the kernel's name, parameters and output buffer
 *
 * Boundary: with CLAMP=0 only interior points, every coordinate d in [R_d, N_d - R_d),
 * are written (RX_LO ... RZ_HI, optional: the margins below and above each axis apart)
 * and the rest of the output (the rim) keeps its prior contents, unless
 * RIM_WRITE writes it (a copy of the input or a constant); with CLAMP=1 every
 * point is written and a neighbour beyond an edge reads the edge value (per axis), or 0
 * with ZERO=1 (zero padding), or the point BORDER maps it to (wrap, reflect, symmetric).
 */

/* stencil heat3d: 7 points, extent x1 y1 z1, intensity 1 (generated by gtune) */
#define RX 1
#define RY 1
#define RZ 1
#define QUEUE_Y 3
#define QUEUE_Z 3
#define INTENSITY 1
#define ARRAY_DIMS 3
#define STENCIL_TERMS(T) \
    T(0, 0, -1, 0.125f) \
    T(0, -1, 0, 0.125f) \
    T(-1, 0, 0, 0.125f) \
    T(0, 0, 0, 0.25f) \
    T(1, 0, 0, 0.125f) \
    T(0, 1, 0, 0.125f) \
    T(0, 0, 1, 0.125f)

#ifndef NY
#define NY 1
#endif
#ifndef NZ
#define NZ 1
#endif
#ifndef WX
#define WX 16
#endif
#ifndef WY
#define WY 1
#endif
#ifndef WZ
#define WZ 1
#endif
#ifndef BX
#define BX 1
#endif
#ifndef VX
#define VX 1
#endif
#ifndef CX
#define CX 1
#endif
#ifndef CY
#define CY 1
#endif
#ifndef CZ
#define CZ 1
#endif
#ifndef LOCAL
#define LOCAL 0
#endif
#ifndef IMAGE
#define IMAGE 0
#endif
#ifndef STREAM
#define STREAM 0
#endif
#ifndef ZC
#define ZC 1
#endif
#ifndef TB
#define TB 1
#endif
#ifndef TR
#define TR 1
#endif
#ifndef ZREG
#define ZREG 0
#endif
#ifndef ZU
#define ZU 0
#endif
#ifndef ZS
#define ZS 0
#endif
#ifndef RIM
#define RIM 0
#endif
#ifndef RIN
#define RIN 0
#endif
#ifndef BY
#define BY 1
#endif
#ifndef BZ
#define BZ 1
#endif
#ifndef SEP
#define SEP 0
#endif
#ifndef INTENSITY
#define INTENSITY 1
#endif
#ifndef ARRAY_DIMS
#define ARRAY_DIMS 3
#endif
/* The 2D streaming kernel's queue length 2*RY+1 as a literal (the renderer defines
 * it). Its walk is unrolled by one queue length: the queue's shift after each step is
 * then a renaming of registers, not a move per queued sum. */
#ifndef QUEUE_Y
#define QUEUE_Y 1
#endif
/* The same for the z queue of temporal streaming with the z-neighbours in registers
   (2*RZ+1; ZREG=2 with ZU=1 unrolls its walk by it). */
#ifndef QUEUE_Z
#define QUEUE_Z 1
#endif
#define PRAGMA_(x) _Pragma(#x)
#define UNROLL_BY(n) PRAGMA_(unroll n)
#ifndef REAL
#define REAL float
#define UREAL uint
#endif
/* integer elements (elements.py): ELEM fields, an OUT_ELEM output, REAL sums, STORE(v);
   the vector technique stores a vector of results through STORE_VECTOR(v) (an integer
   output; a float output stores the sums themselves) */
#ifdef ELEM
#define INT_ELEMS 1
#else
#define INT_ELEMS 0
#define ELEM REAL
#define OUT_ELEM ELEM
#endif
#ifndef STORE
#define STORE(v) (v)
#endif
#ifndef CLAMP
#define CLAMP 0
#endif
#ifndef ZERO
#define ZERO 0
#endif
#ifndef BORDER
#define BORDER 0
#endif
#ifndef RIM_WRITE
#define RIM_WRITE 0
#endif
#ifndef SRC
#define SRC src
#endif
#ifndef DST
#define DST dst
#endif
#ifndef KERNEL_NAME
#define KERNEL_NAME stencil
#endif
#ifndef KERNEL_ARGS
#define KERNEL_ARGS SRC_ARG, __global OUT_ELEM *restrict DST
#endif
#ifndef EXTRA_TERMS
#define EXTRA_TERMS(E)
#define NO_EXTRA_TERMS
#endif

#if BX % VX != 0
#error "BX must be a multiple of VX"
#endif
#if VX != 1 && VX != 2 && VX != 4 && VX != 8 && VX != 16
#error "VX must be 1, 2, 4, 8 or 16"
#endif
#if VX > 1 && (LOCAL || IMAGE)
#error "vectorization is a data-loading technique of its own: VX > 1 needs LOCAL=0, IMAGE=0"
#endif
#if LOCAL && IMAGE
#error "LOCAL and IMAGE are alternative data-loading techniques"
#endif
#if STREAM && (LOCAL || IMAGE)
#error "streaming is a data-loading technique of its own: STREAM=1 needs LOCAL=0, IMAGE=0"
#endif
#if STREAM && ARRAY_DIMS == 3 && VX > 1 && !(ZREG == 2 && TB > 1)
#error "streaming along z loads its planes into local memory: STREAM=1 needs VX=1 for a 3D array"
#endif
#if STREAM && ARRAY_DIMS == 3 && (WZ != 1 || CZ != 1)
#error "streaming walks z itself: STREAM=1 needs WZ=1, CZ=1 for a 3D array"
#endif
#if STREAM && ARRAY_DIMS == 2 && CY != 1
#error "streaming walks y itself: STREAM=1 needs CY=1 for a 2D array"
#endif
#if !STREAM && ZC != 1
#error "ZC (the chunk) applies to streaming only: ZC must be 1 when STREAM=0"
#endif
#if ZREG != 0 && ZREG != 1 && ZREG != 2
#error "ZREG must be 0, 1 or 2"
#endif
#if RIM != 0 && RIM != 1
#error "RIM must be 0 or 1"
#endif
#if RIM && (VX == 1 || STREAM || TB > 1 || ZERO)
#error "RIM (whole rim vectors) applies to the vector technique with the interior or clamp boundary: VX > 1, STREAM=0, TB=1, ZERO=0"
#endif
#if RIN != 0 && RIN != 1
#error "RIN must be 0 or 1"
#endif
#if RIN && !RIM
#error "RIN (the interior path) applies to the vector technique with whole rim vectors: RIM=1"
#endif
#if SEP && !(RIM || (STREAM && ARRAY_DIMS == 2 && TB == 1) || (TB > 1 && !STREAM && TR > 1))
#error "SEP (axis by axis weights) applies to 2D streaming, to the vector technique with RIM=1 and to temporal tiles with TR > 1"
#endif
#if SEP && !defined(SEP_X_TERMS)
#error "SEP needs a separable stencil (SEP_X_TERMS, SEP_Y_TERMS)"
#endif
#if INT_ELEMS && (SEP || (STREAM && ARRAY_DIMS == 3) || IMAGE || TB > 1)
#error "integer elements are read by the global, local and vector techniques and 2D streaming, term by term: SEP=0, IMAGE=0, TB=1, no streaming along z"
#endif
#if (BY > 1 || BZ > 1) && !RIM
#error "BY, BZ (rows merged in y and z) apply to the vector technique with whole rim vectors: RIM=1"
#endif
#if TR != 1 && !(TB > 1 && !STREAM && TR >= 1 && TR <= WY * CY)
#error "TR (rows per work-item of a temporal tile's level) applies to temporal tiles (TB > 1, STREAM=0), 1 <= TR <= WY*CY"
#endif
#if ZU && ZREG != 2
#error "ZU (the unrolled walk) applies to ZREG=2 only"
#endif
#if ZS && !(TB > 1 && STREAM && ZREG == 2 && VX > 1)
#error "ZS (one barrier per plane step) applies to ZREG=2 with vectors (VX > 1)"
#endif
#if ZREG && !(TB > 1 && STREAM && ARRAY_DIMS == 3)
#error "ZREG (z-neighbours in registers) applies to temporal streaming along z: TB > 1, STREAM=1, 3D"
#endif
#if TB > 1 && (LOCAL || IMAGE || ((VX > 1 || BX > 1) && !(STREAM && ZREG == 2)))
#error "temporal blocking is a technique of its own: TB > 1 needs LOCAL=IMAGE=0, VX=BX=1 (but ZREG=2's vectors)"
#endif
#if ZERO && !CLAMP
#error "ZERO (the zero boundary) writes every point: it needs CLAMP=1"
#endif
#if BORDER && (!CLAMP || ZERO || BORDER > 3)
#error "BORDER (1 wrap, 2 reflect, 3 symmetric) writes every point from mapped neighbours: CLAMP=1, ZERO=0"
#endif
#if BORDER && (TB > 1 || IMAGE)
#error "the wrap, reflect and symmetric boundaries are read by the global, vector, local and streaming techniques: TB=1, IMAGE=0"
#endif
#if ZERO && TB > 1
#error "the zero boundary is not supported by temporal blocking (its levels clamp or keep the rim): TB=1"
#endif
#if RIM_WRITE != 0 && RIM_WRITE != 1 && RIM_WRITE != 2
#error "RIM_WRITE is 0 (the rim kept), 1 (a copy of the input) or 2 (RIM_CONST)"
#endif
#if RIM_WRITE && CLAMP
#error "RIM_WRITE writes the interior boundary's rim: it needs CLAMP=0"
#endif
#if RIM_WRITE && TB > 1
#error "a written rim is not supported by temporal blocking (its levels keep the rim): TB=1"
#endif
#if RIM_WRITE == 2 && !defined(RIM_CONST)
#error "RIM_WRITE=2 writes the constant RIM_CONST: define it"
#endif

/* A padded primary field: SRC_PAD_X, SRC_PAD_Y, SRC_PAD_Z points stored beyond each
   edge of each axis (a convolution's input padded by the filter's half-width). */
#ifndef SRC_PAD_X
#define SRC_PAD_X 0
#endif
#ifndef SRC_PAD_Y
#define SRC_PAD_Y 0
#endif
#ifndef SRC_PAD_Z
#define SRC_PAD_Z 0
#endif
#define SRC_PADDED (SRC_PAD_X || SRC_PAD_Y || SRC_PAD_Z)
#if SRC_PADDED && BORDER
#error "a padded field holds its neighbours beyond the edge: the wrap, reflect and symmetric boundaries read no pad"
#endif
#if SRC_PADDED && ZERO
#error "a padded field holds its neighbours beyond the edge in its pad: the zero boundary has none"
#endif
#if SRC_PADDED && ((STREAM && (ARRAY_DIMS == 3 || VX > 1)) || IMAGE || TB > 1)
#error "a padded field is read by the global, local and vector techniques and 2D streaming with VX=1: IMAGE=0, TB=1"
#endif
#if SRC_PADDED && VX > 1 && (NX + 2 * SRC_PAD_X) % VX != 0
#error "the vector technique reads a padded field's rows as whole vectors: (NX + 2*SRC_PAD_X) % VX == 0"
#endif

/* Linear index; 32-bit arithmetic while the array fits, as GPUs prefer. */
#if ((NX + 2 * SRC_PAD_X) * (NY + 2 * SRC_PAD_Y) * (NZ + 2 * SRC_PAD_Z)) < 2147483647
typedef int idx_t;
#else
typedef long idx_t;
#endif
#define IDX(zz, yy, xx) ((((idx_t)(zz)) * NY + (idx_t)(yy)) * NX + (idx_t)(xx))

/* The points written, per axis [LO, HI), and where a neighbour index lands. */
#if CLAMP
#define LOX 0
#define LOY 0
#define LOZ 0
#define HIX NX
#define HIY NY
#define HIZ NZ
#if BORDER
/* BMAP(i, n): where neighbour index i of an axis of n points lands, for i at most the
   radius beyond an edge (the radius is below n); the clamp around it keeps an index
   farther out (a value that feeds no written point: a tile's or a block's spare rows)
   inside the array. */
#if BORDER == 1 /* wrap */
#define BMAP(i, n) ((i) < 0 ? (i) + (n) : (i) >= (n) ? (i) - (n) : (i))
#elif BORDER == 2 /* reflect: -1 reads 1, n reads n - 2 */
#define BMAP(i, n) ((i) < 0 ? -(i) : (i) >= (n) ? 2 * (n) - 2 - (i) : (i))
#else /* symmetric: -1 reads 0, n reads n - 1 */
#define BMAP(i, n) ((i) < 0 ? -1 - (i) : (i) >= (n) ? 2 * (n) - 1 - (i) : (i))
#endif
#define CLX(i) min(max(BMAP((i), NX), 0), NX - 1)
#define CLY(i) min(max(BMAP((i), NY), 0), NY - 1)
#define CLZ(i) min(max(BMAP((i), NZ), 0), NZ - 1)
#else
#define CLX(i) min(max((i), 0), NX - 1)
#define CLY(i) min(max((i), 0), NY - 1)
#define CLZ(i) min(max((i), 0), NZ - 1)
#endif
#else
/* The interior's margins below (RX_LO ...) and above (RX_HI ...) each axis: the radius,
   or (a definition's band: reach) how far the offsets reach that way, so a one-sided
   stencil writes up to the edge it does not read beyond. Every read of a written point
   lies inside the array either way; the halos stay the radius. */
#ifndef RX_LO
#define RX_LO RX
#endif
#ifndef RY_LO
#define RY_LO RY
#endif
#ifndef RZ_LO
#define RZ_LO RZ
#endif
#ifndef RX_HI
#define RX_HI RX
#endif
#ifndef RY_HI
#define RY_HI RY
#endif
#ifndef RZ_HI
#define RZ_HI RZ
#endif
#define LOX RX_LO
#define LOY RY_LO
#define LOZ RZ_LO
#define HIX (NX - RX_HI)
#define HIY (NY - RY_HI)
#define HIZ (NZ - RZ_HI)
#define CLX(i) (i)
#define CLY(i) (i)
#define CLZ(i) (i)
#endif

/* The primary field's index and its neighbours' clamp. A padded field is read at the
   point plus the pad, in its own rows and planes; its neighbours beyond an edge lie in
   the pad (the definition's pad covers the field's reach), so only an index beyond the
   pad is clamped into it (a tile with a halo wider than the field's reach). */
#if SRC_PADDED
#define SIDX(zz, yy, xx)                                                                 \
    (((((idx_t)(zz)) + SRC_PAD_Z) * (NY + 2 * SRC_PAD_Y) + (idx_t)(yy) + SRC_PAD_Y) *      \
         (NX + 2 * SRC_PAD_X) +                                                          \
     (idx_t)(xx) + SRC_PAD_X)
#else
#define SIDX(zz, yy, xx) IDX(zz, yy, xx)
#endif
#if SRC_PADDED && CLAMP
#define SCLX(i) min(max((i), -SRC_PAD_X), NX - 1 + SRC_PAD_X)
#define SCLY(i) min(max((i), -SRC_PAD_Y), NY - 1 + SRC_PAD_Y)
#define SCLZ(i) min(max((i), -SRC_PAD_Z), NZ - 1 + SRC_PAD_Z)
#elif SRC_PADDED /* the interior's points read inside the array */
#define SCLX(i) (i)
#define SCLY(i) (i)
#define SCLZ(i) (i)
#else
#define SCLX(i) CLX(i)
#define SCLY(i) CLY(i)
#define SCLZ(i) CLZ(i)
#endif

/* ZERO: whether (zz, yy, xx) lies in the array; a neighbour beyond an edge reads 0. */
#define IN_ARRAY(zz, yy, xx)                                                             \
    ((zz) >= 0 && (zz) < NZ && (yy) >= 0 && (yy) < NY && (xx) >= 0 && (xx) < NX)

/* A term of another field, read from global memory at (zz, yy, xx). */
#if ZERO
#define FIELD_AT(f, zz, yy, xx)                                                          \
    (IN_ARRAY(zz, yy, xx) ? (REAL)(f)[IDX(zz, yy, xx)] : (REAL)0)
#else
#define FIELD_AT(f, zz, yy, xx) (f)[IDX(CLZ(zz), CLY(yy), CLX(xx))]
#endif

/* Work per read element: intensity 2 adds and multiplies each element with itself
   once more, so the compiler cannot fold the extra operations away. */
#if INTENSITY == 2
#define F(v) (((v) + (v)) * (v))
#else
#define F(v) (v)
#endif

/* Where a scalar input element comes from. */
#if IMAGE && ZERO /* beyond an edge the border colour: 0 in the one channel read */
__constant sampler_t SMP = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
#elif IMAGE
__constant sampler_t SMP = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
#endif
#if IMAGE
#if ARRAY_DIMS == 3
#define SRC_ARG __read_only image3d_t SRC
#define GLOBAL_READ(zz, yy, xx) read_imagef(SRC, SMP, (int4)((xx), (yy), (zz), 0)).x
#else
#define SRC_ARG __read_only image2d_t SRC
#define GLOBAL_READ(zz, yy, xx) read_imagef(SRC, SMP, (int2)((xx), (yy))).x
#endif
/* the sampler clamps every neighbour itself (ZERO: reads 0 beyond an edge) */
#define CLAMPED_READ(zz, yy, xx) GLOBAL_READ(zz, yy, xx)
#else
#define SRC_ARG __global const ELEM *restrict SRC
#define GLOBAL_READ(zz, yy, xx) SRC[SIDX(zz, yy, xx)]
#if ZERO /* a neighbour beyond an edge reads 0 */
#define CLAMPED_READ(zz, yy, xx)                                                         \
    (IN_ARRAY(zz, yy, xx) ? (REAL)GLOBAL_READ(zz, yy, xx) : (REAL)0)
#else
#define CLAMPED_READ(zz, yy, xx) GLOBAL_READ(SCLZ(zz), SCLY(yy), SCLX(xx))
#endif
#endif

/* RIM_WRITE: the rim (every point outside [LO, HI) on some axis) is written apart, before
   the stencil, by every work-item of the launch in turn (work-item g writes rim points
   g, g + G, ... of G work-items in all), whatever the technique: the first and last RZ
   planes whole, then in each plane between them its first and last RY rows whole, then
   in each row between those its first and last RX points (RIM_XS, below). An array no
   wider than twice the radius on some axis is rim throughout. */
#if RIM_WRITE
#if RIM_WRITE == 1 && IMAGE
#define RIM_VALUE(zz, yy, xx) STORE((REAL)GLOBAL_READ(zz, yy, xx))
#elif RIM_WRITE == 1 /* the element itself */
#define RIM_VALUE(zz, yy, xx) GLOBAL_READ(zz, yy, xx)
#else
#define RIM_VALUE(zz, yy, xx) STORE((REAL)(RIM_CONST))
#endif
/* RIM_X_IN_VECTORS: with RIM=1 (float elements), each written row's first and last RX
   points are not written apart: the vector that holds them (a rim vector, computed
   whole) stores them with the rest of its lanes, each rim lane taking its RIM_VALUE,
   so the row's first and last sectors are written whole, by one store. */
#if RIM && !INT_ELEMS
#define RIM_X_IN_VECTORS 1
#define RIM_XS 0 /* the x rim points each row's ends have written apart */
#else
#define RIM_X_IN_VECTORS 0
#define RIM_XS RX
#endif
#define RIM_ALL (NX <= 2 * RX || NY <= 2 * RY || NZ <= 2 * RZ)
#define RIM_CAP ((idx_t)RZ * NY * NX)            /* points of the first RZ planes */
#define RIM_BAND ((idx_t)RY * NX)                /* points of a plane's first RY rows */
#define RIM_PLANE (2 * RIM_BAND + (idx_t)2 * RIM_XS * (NY - 2 * RY)) /* an inner plane's */
#define RIM_POINTS                                                                       \
    (RIM_ALL ? (idx_t)NZ * NY * NX : 2 * RIM_CAP + (idx_t)(NZ - 2 * RZ) * RIM_PLANE)
#define WRITE_RIM()                                                                      \
    {                                                                                    \
        const idx_t g_ = (idx_t)get_global_id(0) +                                       \
                         (idx_t)get_global_size(0) *                                     \
                             ((idx_t)get_global_id(1) +                                  \
                              (idx_t)get_global_size(1) * get_global_id(2));             \
        const idx_t n_ =                                                                 \
            (idx_t)get_global_size(0) * get_global_size(1) * get_global_size(2);         \
        for (idx_t k_ = g_; k_ < RIM_POINTS; k_ += n_) {                                 \
            idx_t z_, p_, y_, x_;                                                        \
            if (RIM_ALL || k_ < RIM_CAP || k_ >= RIM_POINTS - RIM_CAP) {                 \
                const idx_t q_ = RIM_ALL || k_ < RIM_CAP                                 \
                                     ? k_                                                \
                                     : k_ - (RIM_POINTS - RIM_CAP) + (idx_t)(NZ - RZ) * NY * NX; \
                z_ = q_ / ((idx_t)NY * NX);                                              \
                p_ = q_ % ((idx_t)NY * NX);                                              \
                y_ = p_ / NX;                                                            \
                x_ = p_ % NX;                                                            \
            } else {                                                                     \
                z_ = RZ + (k_ - RIM_CAP) / RIM_PLANE;                                    \
                p_ = (k_ - RIM_CAP) % RIM_PLANE;                                         \
                if (p_ < RIM_BAND) {                                                     \
                    y_ = p_ / NX;                                                        \
                    x_ = p_ % NX;                                                        \
                } else if (p_ >= RIM_PLANE - RIM_BAND) {                                 \
                    p_ -= RIM_PLANE - RIM_BAND;                                          \
                    y_ = NY - RY + p_ / NX;                                              \
                    x_ = p_ % NX;                                                        \
                } else {                                                                 \
                    p_ -= RIM_BAND;                                                      \
                    y_ = RY + p_ / (2 * RIM_XS + !RIM_XS); /* (no x rim: unused) */      \
                    x_ = p_ % (2 * RIM_XS + !RIM_XS);                                    \
                    x_ = x_ < RIM_XS ? x_ : NX - 2 * RIM_XS + x_;                        \
                }                                                                        \
            }                                                                            \
            DST[IDX(z_, y_, x_)] = RIM_VALUE(z_, y_, x_);                                \
        }                                                                                \
    }
#else
#define WRITE_RIM()
#endif

#if LOCAL
/* One block of (WX*BX) x WY x WZ outputs needs this tile of input. */
#define TX (WX * BX + 2 * RX)
#define TY (WY + 2 * RY)
#define TZ (WZ + 2 * RZ)
#define READ(zz, yy, xx) tile[(zz) - tz0][(yy) - ty0][(xx) - tx0]
#define UNCLAMPED_READ(zz, yy, xx) READ(zz, yy, xx)
#else
#define READ(zz, yy, xx) CLAMPED_READ(zz, yy, xx)
#define UNCLAMPED_READ(zz, yy, xx) GLOBAL_READ(zz, yy, xx)
#endif

/* The primary field's coefficients, read once a work-item (issue 48): at the kernel's
   entry into private values, not where each term uses them. A coefficient that is an
   entry of a run-time weights array (a __constant filter, as convolution.cl and
   conv_padded_mask.cl take it) would otherwise be a load at every use: the vector and
   2D streaming kernels would load a 5x5 convolution's 25 weights again for each row of
   outputs or each streamed row (benchmarks/results/lift/h200-all/conv_ptx.md). On the
   H200 the hoist made the two array-weighted 5x5 convolutions' winners 13.3 % and
   7.0 % faster, kernels with number coefficients unchanged
   (benchmarks/results/lift/conv_hoist/README.md). wq_ holds the coefficient of each
   offset of the stencil's box, wn_ how many terms name that offset (numbers the
   compiler folds: every index is a constant once the terms are unrolled); an offset
   named by more than one term keeps its coefficient at each use. Numbers and scalar
   coefficients fold to what they were, and the sums, their order and their
   contractions are unchanged, so the results are the same bits as reading the
   coefficients at each use. The 2D streaming kernel (ROW_TERM) and the
   global/local/vector kernel (SCALAR, INSIDE, IN, VECTOR terms) take it. The renderer
   defines WQ_HOIST only for a definition with a run-time weights array; elsewhere the
   coefficients are numbers or scalars, which the hoist would fold to what they were,
   so the code (and an exported kernel) stays as written. */
/* WQ_HOIST 1: a coefficient is an entry of a run-time weights array */
#ifndef WQ_HOIST
#define WQ_HOIST 0
#endif
#if WQ_HOIST
#define WQ_AT(a, dx, dy, dz) a[RZ + (dz)][RY + (dy)][RX + (dx)]
#define WQ_SET(dx, dy, dz, w)                                                            \
    WQ_AT(wq_, dx, dy, dz) = (w);                                                        \
    ++WQ_AT(wn_, dx, dy, dz);
#define WQ_LOAD()                                                                        \
    REAL wq_[2 * RZ + 1][2 * RY + 1][2 * RX + 1];                                        \
    int wn_[2 * RZ + 1][2 * RY + 1][2 * RX + 1] = {{{0}}};                               \
    STENCIL_TERMS(WQ_SET)
#define WQ(dx, dy, dz, w) (WQ_AT(wn_, dx, dy, dz) == 1 ? WQ_AT(wq_, dx, dy, dz) : (w))
#else
/* every coefficient a number or a scalar: read where used, as written */
#define WQ_LOAD()
#define WQ(dx, dy, dz, w) (w)
#endif
#define SCALAR_TERM_Q(dx, dy, dz, w) SCALAR_TERM(dx, dy, dz, WQ(dx, dy, dz, w))
#define INSIDE_TERM_Q(dx, dy, dz, w) INSIDE_TERM(dx, dy, dz, WQ(dx, dy, dz, w))
#define VECTOR_TERM_Q(dx, dy, dz, w) VECTOR_TERM(dx, dy, dz, WQ(dx, dy, dz, w))
#define IN_TERM_Q(dx, dy, dz, w) IN_TERM(dx, dy, dz, WQ(dx, dy, dz, w))
#define ROW_TERM_Q(dx, dy, dz, w) ROW_TERM(dx, dy, dz, WQ(dx, dy, dz, w))

#define SCALAR_TERM(dx, dy, dz, w)                                                       \
    {                                                                                    \
        const REAL v_ = READ(z + (dz), y + (dy), xs + (dx));                             \
        acc += (w) * F(v_);                                                              \
    }
#define SCALAR_EXTRA(f, dx, dy, dz, w)                                                   \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), xs + (dx));                      \
        acc += (w) * F(v_);                                                              \
    }
#if CLAMP
/* A point at least the radius away from every edge reads no neighbour beyond one: it
   takes the interior boundary's code, indices unclamped; only the rim clamps. */
#define INSIDE(zz, yy, xx)                                                               \
    ((zz) >= RZ && (zz) < NZ - RZ && (yy) >= RY && (yy) < NY - RY && (xx) >= RX &&       \
     (xx) < NX - RX)
#define INSIDE_TERM(dx, dy, dz, w)                                                       \
    {                                                                                    \
        const REAL v_ = UNCLAMPED_READ(z + (dz), y + (dy), xs + (dx));                   \
        acc += (w) * F(v_);                                                              \
    }
#define INSIDE_EXTRA(f, dx, dy, dz, w)                                                   \
    {                                                                                    \
        const REAL v_ = (f)[IDX(z + (dz), y + (dy), xs + (dx))];                          \
        acc += (w) * F(v_);                                                              \
    }
#endif
#ifdef CONSTANT_TERM
#define ADD_CONSTANT(acc) (acc) += CONSTANT_TERM
#else
#define ADD_CONSTANT(acc)
#endif

#if VX > 1
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(REAL, VX)
#if INT_ELEMS
/* Integer elements (INT_ELEMS): the fields' vectors (VE) are loaded as they are and each
   is converted to a vector of REAL (VIN) as it is loaded, so a vector that several terms
   read is converted once (the compiler loads it once, and converts it once), and the
   misaligned vectors are composed of REAL vectors, a choice of registers as for floats;
   composing the ELEM vectors first would convert every term's composed vector anew.
   Each result is computed lane by lane as the scalar code computes it (the same terms,
   products and sums in the same order), and a vector of results is stored through
   VOUT: STORE_VECTOR, each lane converted as STORE converts a scalar (an integer
   output), or the sums themselves (a float output). */
#define VO CAT(OUT_ELEM, VX)
/* ELEM_BYTES: the size of ELEM (uchar, char: 1; ushort, short: 2; 0: any other type,
   read as ELEM vectors); ELEM_SIGNED: 1 for char and short */
#define ELEM_BYTES_uchar 1
#define ELEM_BYTES_char 1
#define ELEM_BYTES_ushort 2
#define ELEM_BYTES_short 2
#define ELEM_SIGNED_char 1
#define ELEM_SIGNED_short 1
#define ELEM_BYTES CAT(ELEM_BYTES_, ELEM)
#define ELEM_SIGNED CAT(ELEM_SIGNED_, ELEM)
#if defined(__ENDIAN_LITTLE__) && ELEM_BYTES && VX * ELEM_BYTES >= 4
/* uchar, char, ushort and short fields whose vector is 1, 2, 4 or 8 uint: the vector
   is loaded as uint (VE: uint, uint2, uint4, uint8, of the size and alignment of VX
   ELEM, so the vector index and the pointer's alignment hold as for ELEM vectors),
   and each lane comes out of its uint by a shift and an and (char and short: a shift
   up, then an arithmetic shift down), then is converted to REAL: the values convert_
   converts to, bit for bit. A vector of ELEM is not loaded: the compiler loads a
   uchar16 as four vectors of 4 uchar (NVIDIA's GPUs load no vector of 16 lanes), a
   uint4 as one load. Each shift applies to the whole vector of uint (WPART_), so the
   compiler keeps its load one vector; with a shift per uint, the compiler loads each
   uint on its own. The lane i of VE is ELEM i in memory only where __ENDIAN_LITTLE__
   is defined; elsewhere ELEM vectors are read. */
#if VX * ELEM_BYTES == 4
#define VE uint
#define WT REAL
#define WI_(x) as_int(x)
#define WF_(x) as_float(x)
#elif VX * ELEM_BYTES == 8
#define VE uint2
#define WT CAT(REAL, 2)
#define WI_(x) as_int2(x)
#define WF_(x) as_float2(x)
#elif VX * ELEM_BYTES == 16
#define VE uint4
#define WT CAT(REAL, 4)
#define WI_(x) as_int4(x)
#define WF_(x) as_float4(x)
#else
#define VE uint8
#define WT CAT(REAL, 8)
#define WI_(x) as_int8(x)
#define WF_(x) as_float8(x)
#endif
/* ELEM b of each uint of w, as an integer */
#if ELEM_BYTES == 1 && ELEM_SIGNED
#define WBITS_(w, b) (WI_((w) << (24 - 8 * (b))) >> 24)
#elif ELEM_BYTES == 1
#define WBITS_(w, b) (((w) >> (8 * (b))) & 0xffu)
#elif ELEM_SIGNED
#define WBITS_(w, b) (WI_((w) << (16 - 16 * (b))) >> 16)
#else
#define WBITS_(w, b) (((w) >> (16 * (b))) & 0xffffu)
#endif
/* ... as REAL */
#define WPART_(w, b) CAT(convert_, WT)(WBITS_(w, b))
/* the lanes of uint k of w, in memory order */
#if ELEM_BYTES == 1
#define WLANES_(k) p0_.k, p1_.k, p2_.k, p3_.k
#else
#define WLANES_(k) p0_.k, p1_.k
#endif
static inline VT vin_words_(const VE w) {
    const WT p0_ = WPART_(w, 0);
    const WT p1_ = WPART_(w, 1);
#if ELEM_BYTES == 1
    const WT p2_ = WPART_(w, 2);
    const WT p3_ = WPART_(w, 3);
#endif
#if VX * ELEM_BYTES == 4 && ELEM_BYTES == 1
    return (VT)(p0_, p1_, p2_, p3_);
#elif VX * ELEM_BYTES == 4
    return (VT)(p0_, p1_);
#elif VX * ELEM_BYTES == 8
    return (VT)(WLANES_(s0), WLANES_(s1));
#elif VX * ELEM_BYTES == 16
    return (VT)(WLANES_(s0), WLANES_(s1), WLANES_(s2), WLANES_(s3));
#else
    return (VT)(WLANES_(s0), WLANES_(s1), WLANES_(s2), WLANES_(s3), WLANES_(s4),
                WLANES_(s5), WLANES_(s6), WLANES_(s7));
#endif
}
#define VIN(v) vin_words_(v)
#else
#define VE CAT(ELEM, VX)
#define VIN(v) CAT(convert_, VT)(v)
#endif
#ifdef STORE_VECTOR
#define VOUT(v) STORE_VECTOR(v)
#else
#define VOUT(v) v
#endif
#else
/* float elements: VE and VO are the vector type, VIN and VOUT the identity */
#define VE VT
#define VO VT
#define VIN(v) v
#define VOUT(v) v
#endif
#define VLOAD CAT(vload, VX)
#define VSTORE CAT(vstore, VX)
/* VX consecutive inputs starting at x + dx on row (zz, yy); x is a multiple of VX and
   xv = x / VX. Aligned offsets are one vector load; the others are two aligned loads
   composed (the shift is a compile-time constant: the composition is a choice of
   registers, written with components so that no compiler needs to see through a
   shuffle). Every load goes through a pointer to the vector type at the vector index xv
   plus a compile-time constant: the pointer's type promises the vector's alignment (the
   row starts on a multiple of VX: NX is one), so each is one wide load (vloadn promises
   only the element's alignment, and NVIDIA's compiler then loads value by value), and
   the terms of one row name the same addresses, so the compiler loads each vector of a
   row once, however many terms read it: a radius-2 row of x-terms is three vector loads
   (the work-item's own vector and one either side), not four pairs. */
#define VFLOOR(d) (((d) >= 0 ? (d) : (d) - (VX - 1)) / VX) /* floor(d / VX) */
#define SHIFT(dx) ((dx) - VFLOOR(dx) * VX)
#define VROW(p, zz, yy) ((__global const VE *)((p) + IDX(zz, yy, 0)))
/* lanes s .. VX-1 of a, then lanes 0 .. s-1 of b (0 < s < VX) */
#if VX == 2
#define COMPOSE(a, b, s) (VT)((a).s1, (b).s0)
#elif VX == 4
#define COMPOSE(a, b, s) \
    ((s) == 1 ? (VT)((a).s123, (b).s0) \
     : (s) == 2 ? (VT)((a).s23, (b).s01) \
     : (VT)((a).s3, (b).s012))
#elif VX == 8
#define COMPOSE(a, b, s) \
    ((s) == 1 ? (VT)((a).s1234, (a).s567, (b).s0) \
     : (s) == 2 ? (VT)((a).s2345, (a).s67, (b).s01) \
     : (s) == 3 ? (VT)((a).s3456, (a).s7, (b).s012) \
     : (s) == 4 ? (VT)((a).s4567, (b).s0123) \
     : (s) == 5 ? (VT)((a).s567, (b).s0123, (b).s4) \
     : (s) == 6 ? (VT)((a).s67, (b).s0123, (b).s45) \
     : (VT)((a).s7, (b).s0123, (b).s456))
#elif VX == 16
#define COMPOSE(a, b, s) \
    ((s) == 1 ? (VT)((a).s12345678, (a).s9abc, (a).sdef, (b).s0) \
     : (s) == 2 ? (VT)((a).s23456789, (a).sabcd, (a).sef, (b).s01) \
     : (s) == 3 ? (VT)((a).s3456789a, (a).sbcde, (a).sf, (b).s012) \
     : (s) == 4 ? (VT)((a).s456789ab, (a).scdef, (b).s0123) \
     : (s) == 5 ? (VT)((a).s56789abc, (a).sdef, (b).s0123, (b).s4) \
     : (s) == 6 ? (VT)((a).s6789abcd, (a).sef, (b).s0123, (b).s45) \
     : (s) == 7 ? (VT)((a).s789abcde, (a).sf, (b).s0123, (b).s456) \
     : (s) == 8 ? (VT)((a).s89abcdef, (b).s01234567) \
     : (s) == 9 ? (VT)((a).s9abc, (a).sdef, (b).s01234567, (b).s8) \
     : (s) == 10 ? (VT)((a).sabcd, (a).sef, (b).s01234567, (b).s89) \
     : (s) == 11 ? (VT)((a).sbcde, (a).sf, (b).s01234567, (b).s89a) \
     : (s) == 12 ? (VT)((a).scdef, (b).s01234567, (b).s89ab) \
     : (s) == 13 ? (VT)((a).sdef, (b).s01234567, (b).s89ab, (b).sc) \
     : (s) == 14 ? (VT)((a).sef, (b).s01234567, (b).s89ab, (b).scd) \
     : (VT)((a).sf, (b).s01234567, (b).s89ab, (b).scde))
#endif
/* RIM=1: the vector index kept in the row, so a vector that straddles the row's rim
   reads inside the array. A lane whose neighbours lie beyond the row then reads a
   clamped vector, and it is not written; every written lane's neighbours lie inside the
   row, so in the vectors it reads (an element inside the row has its vector index
   inside it), unchanged by the clamp. */
#if RIM
#define VCL(i) min(max((i), 0), NX / VX - 1)
#else
#define VCL(i) (i)
#endif
#if RIM && CLAMP
/* The clamp boundary with RIM=1: a vector that touches an x edge (XEDGE: x < RX or
   x + VX > NX - RX, some lane's neighbour x + dx beyond the row) builds each shifted
   vector from its lanes' elements, lane i read at its own clamped index CLX(x + i + dx)
   (XGATHER), so a lane whose neighbour lies beyond the edge reads the edge element, as
   the clamp boundary reads it, and every lane is written. Every other vector reads two
   vectors and COMPOSEs them, the interior boundary's code. xe_: whether the vector
   touches an x edge; the work-item's code for a vector stands twice, once for each
   value (a loop of two unrolled, XEDGE_PATHS), so in each copy xe_ is a constant and
   the vectors inside carry no branch. Rows in y and z: VRY, VRZ (and CLY, CLZ) clamp
   them, the clamp boundary's rows; every row is written (LOY = 0, HIY = NY). */
#define XEDGE(x) ((x) < RX || (x) + VX > NX - RX)
#define XG_(e, xx) ((REAL)(e)[CLX(xx)])
#define XG2_(e, xx) XG_(e, xx), XG_(e, (xx) + 1)
#define XG4_(e, xx) XG2_(e, xx), XG2_(e, (xx) + 2)
#define XG8_(e, xx) XG4_(e, xx), XG4_(e, (xx) + 4)
#define XG16_(e, xx) XG8_(e, xx), XG8_(e, (xx) + 8)
/* the VX elements x + dx .. x + dx + VX - 1 of the row at e, each index clamped */
#define XGATHER(e, xx) ((VT)(CAT(CAT(XG, VX), _)(e, xx)))
#endif
/* BY, BZ > 1: a block's rows may lie beyond an edge of the array (y < RY, say, where
   the next row of the block is written): their neighbours' rows are clamped into the
   array. Such rows are not written, and a written row's neighbours lie inside. */
#if (BY > 1 || BZ > 1) && BORDER /* a written row's neighbours mapped as CLY maps them */
#define VRY(i) CLY(i)
#define VRZ(i) CLZ(i)
#elif BY > 1 || BZ > 1
#define VRY(i) min(max((i), 0), NY - 1)
#define VRZ(i) min(max((i), 0), NZ - 1)
#else
#define VRY(i) CLY(i)
#define VRZ(i) CLZ(i)
#endif
#if SRC_PADDED
/* A padded primary field: each stored row holds NX + 2*SRC_PAD_X points and starts at
   x = -SRC_PAD_X on a multiple of VX ((NX + 2*SRC_PAD_X) % VX == 0), so element x + dx
   lies in vector xv + VFLOOR(dx + SRC_PAD_X) of the padded row, lane SHIFT(dx +
   SRC_PAD_X) on. Rows and planes beyond the array's edge lie in the pad (with the clamp
   boundary it covers the field's reach: no row is clamped), so the row clamps of row
   blocks (BY, BZ) and the vector clamp (RIM=1) keep indices in the padded extent, not
   the array's: a written lane's vectors are unchanged by them. Other fields are
   unpadded (VREAD_TERM). */
#define SPX(dx) ((dx) + SRC_PAD_X)
#define SNXV ((NX + 2 * SRC_PAD_X) / VX) /* vectors per padded row */
#define SVROW(zz, yy) ((__global const VE *)(SRC + SIDX(zz, yy, -SRC_PAD_X)))
#if RIM
#define SVCL(i) min(max((i), 0), SNXV - 1)
#else
#define SVCL(i) (i)
#endif
#if BY > 1 || BZ > 1
#define SVRY(i) min(max((i), -SRC_PAD_Y), NY - 1 + SRC_PAD_Y)
#define SVRZ(i) min(max((i), -SRC_PAD_Z), NZ - 1 + SRC_PAD_Z)
#else
#define SVRY(i) (i)
#define SVRZ(i) (i)
#endif
#define SVREAD_TERM(dx, dy, dz, w)                                                       \
    {                                                                                    \
        __global const VE *r_ = SVROW(SVRZ(z + (dz)), SVRY(y + (dy)));                   \
        VT v_ = VIN(r_[SVCL(xv + VFLOOR(SPX(dx)))]);                                     \
        if (SHIFT(SPX(dx)) != 0) {                                                       \
            const VT b_ = VIN(r_[SVCL(xv + VFLOOR(SPX(dx)) + 1)]);                       \
            v_ = COMPOSE(v_, b_, SHIFT(SPX(dx)));                                        \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#endif
#if ZERO
/* ZERO: a row beyond a y or z edge reads 0, so its term adds nothing (a vector that
   touches an x edge is computed lane by lane) */
#define VREAD_TERM(p, dx, dy, dz, w)                                                     \
    if (y + (dy) >= 0 && y + (dy) < NY && z + (dz) >= 0 && z + (dz) < NZ) {              \
        __global const VE *r_ = VROW(p, z + (dz), y + (dy));                             \
        VT v_ = VIN(r_[xv + VFLOOR(dx)]);                                                \
        if (SHIFT(dx) != 0) {                                                            \
            const VT b_ = VIN(r_[xv + VFLOOR(dx) + 1]);                                  \
            v_ = COMPOSE(v_, b_, SHIFT(dx));                                             \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#elif RIM && CLAMP
/* an x edge's vector (xe_) from its lanes' clamped elements, others as below */
#define VREAD_TERM(p, dx, dy, dz, w)                                                     \
    {                                                                                    \
        VT v_;                                                                           \
        if (xe_) {                                                                       \
            v_ = XGATHER((p) + IDX(VRZ(z + (dz)), VRY(y + (dy)), 0), x + (dx));          \
        } else {                                                                         \
            __global const VE *r_ = VROW(p, VRZ(z + (dz)), VRY(y + (dy)));               \
            v_ = VIN(r_[VCL(xv + VFLOOR(dx))]);                                          \
            if (SHIFT(dx) != 0) {                                                        \
                const VT b_ = VIN(r_[VCL(xv + VFLOOR(dx) + 1)]);                         \
                v_ = COMPOSE(v_, b_, SHIFT(dx));                                         \
            }                                                                            \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#else
#define VREAD_TERM(p, dx, dy, dz, w)                                                     \
    {                                                                                    \
        __global const VE *r_ = VROW(p, VRZ(z + (dz)), VRY(y + (dy)));                   \
        VT v_ = VIN(r_[VCL(xv + VFLOOR(dx))]);                                           \
        if (SHIFT(dx) != 0) {                                                            \
            const VT b_ = VIN(r_[VCL(xv + VFLOOR(dx) + 1)]);                             \
            v_ = COMPOSE(v_, b_, SHIFT(dx));                                             \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#endif
/* The lanes of v whose x lies in [LOX, HIX) stored at d[0 .. VX-1] (d[0]: element x);
   integer elements: each through STORE, as the scalar code stores it. */
#if INT_ELEMS
#define LANE(d, v, x, i, c)                                                              \
    if ((x) + (i) >= LOX && (x) + (i) < HIX) {                                           \
        (d)[i] = STORE((v).c);                                                           \
    }
#else
#define LANE(d, v, x, i, c)                                                              \
    if ((x) + (i) >= LOX && (x) + (i) < HIX) {                                           \
        (d)[i] = (v).c;                                                                  \
    }
#endif
#define LANES2(d, v, x) LANE(d, v, x, 0, s0) LANE(d, v, x, 1, s1)
#define LANES4(d, v, x) LANES2(d, v, x) LANE(d, v, x, 2, s2) LANE(d, v, x, 3, s3)
#define LANES8(d, v, x)                                                                  \
    LANES4(d, v, x) LANE(d, v, x, 4, s4) LANE(d, v, x, 5, s5) LANE(d, v, x, 6, s6)       \
    LANE(d, v, x, 7, s7)
#define LANES16(d, v, x)                                                                 \
    LANES8(d, v, x) LANE(d, v, x, 8, s8) LANE(d, v, x, 9, s9) LANE(d, v, x, 10, sa)      \
    LANE(d, v, x, 11, sb) LANE(d, v, x, 12, sc) LANE(d, v, x, 13, sd)                    \
    LANE(d, v, x, 14, se) LANE(d, v, x, 15, sf)
#define STORE_LANES(d, v, x) CAT(LANES, VX)(d, v, x)
#if RIM_WRITE && RIM_X_IN_VECTORS
/* A vector at the x rim of row (zz, yy), from x: its rim lanes take their RIM_VALUE
   and the vector is stored whole (else STORE_X_RIM stores its interior lanes). */
#define RIM_LANE(w, zz, yy, x, i, c)                                                     \
    if ((x) + (i) < LOX || (x) + (i) >= HIX) {                                           \
        (w).c = (REAL)RIM_VALUE(zz, yy, (x) + (i));                                      \
    }
#define RIM_LANES2(w, zz, yy, x) RIM_LANE(w, zz, yy, x, 0, s0) RIM_LANE(w, zz, yy, x, 1, s1)
#define RIM_LANES4(w, zz, yy, x)                                                         \
    RIM_LANES2(w, zz, yy, x) RIM_LANE(w, zz, yy, x, 2, s2) RIM_LANE(w, zz, yy, x, 3, s3)
#define RIM_LANES8(w, zz, yy, x)                                                         \
    RIM_LANES4(w, zz, yy, x) RIM_LANE(w, zz, yy, x, 4, s4) RIM_LANE(w, zz, yy, x, 5, s5) \
    RIM_LANE(w, zz, yy, x, 6, s6) RIM_LANE(w, zz, yy, x, 7, s7)
#define RIM_LANES16(w, zz, yy, x)                                                        \
    RIM_LANES8(w, zz, yy, x) RIM_LANE(w, zz, yy, x, 8, s8) RIM_LANE(w, zz, yy, x, 9, s9) \
    RIM_LANE(w, zz, yy, x, 10, sa) RIM_LANE(w, zz, yy, x, 11, sb)                        \
    RIM_LANE(w, zz, yy, x, 12, sc) RIM_LANE(w, zz, yy, x, 13, sd)                        \
    RIM_LANE(w, zz, yy, x, 14, se) RIM_LANE(w, zz, yy, x, 15, sf)
#define STORE_X_RIM(d, v, zz, yy, x)                                                     \
    {                                                                                    \
        VT w_ = (v);                                                                     \
        CAT(RIM_LANES, VX)(w_, zz, yy, x)                                                \
        ((__global VO *)(DST + IDX(zz, yy, 0)))[(x) / VX] = VOUT(w_);                    \
    }
#else
#define STORE_X_RIM(d, v, zz, yy, x) STORE_LANES(d, v, x)
#endif
#if SRC_PADDED
#define VECTOR_TERM(dx, dy, dz, w) SVREAD_TERM(dx, dy, dz, w)
#else
#define VECTOR_TERM(dx, dy, dz, w) VREAD_TERM(SRC, dx, dy, dz, w)
#endif
#define VECTOR_EXTRA(f, dx, dy, dz, w) VREAD_TERM(f, dx, dy, dz, w)
/* SEP=1 (RIM=1): the factors' terms. x: a row's own vectors; y: row sums jy = iy + RY +
   dy of plane jz; z: plane sums jz = iz + RZ + dz of row iy. A 2D array has no z
   factor: its one plane's sums are the outputs. */
#if SRC_PADDED
#define SEP_VECTOR_X(dx, w) SVREAD_TERM(dx, 0, 0, w)
#else
#define SEP_VECTOR_X(dx, w) VREAD_TERM(SRC, dx, 0, 0, w)
#endif
#define SEP_VECTOR_Y(dy, w) acc += (w) * rows_[jz][iy + RY + (dy)];
#define SEP_VECTOR_Z(dz, w) acc += (w) * planes_[iz + RZ + (dz)][iy];
#if RIN
/* RIM=1, a work-item whose rows all lie inside (RIM_ROWS_INSIDE: every row of its
   block written, every neighbour row inside the array, no row clamped): its vectors
   are read through one pointer per field, the block's first row (s_ for the primary
   field), at the x index of the vector (clamped into the row as RIM=1 clamps it: a
   few instructions per work-item, not per row) plus a compile-time row offset. So
   every load is a pointer plus an immediate (no clamp or index arithmetic per row),
   and the rows the block's outputs share are the same address, loaded once. The
   condition is on y and z only: the work-items of a warp share their rows (but at a
   y or z rim), so the x rim (a lane of every row's first and last warp) does not
   send its warp down both paths; it differs only in the store. oz_ and oy_: the
   row's offset from the block's first row, constants once the row loops unroll. */
#if CLAMP /* the clamp boundary writes every row: its neighbour rows inside too */
#define RIM_ROWS_INSIDE(y, z)                                                            \
    ((y) >= RY && (y) + BY <= NY - RY && (z) >= RZ && (z) + BZ <= NZ - RZ)
#else
#define RIM_ROWS_INSIDE(y, z) ((y) >= LOY && (y) + BY <= HIY && (z) >= LOZ && (z) + BZ <= HIZ)
#endif
#define IN_ROW(dy, dz) ((((idx_t)(oz_ + (dz))) * NY + (oy_ + (dy))) * (NX / VX))
#if CLAMP /* an x edge's vector (xe_) from its lanes' clamped elements, as VREAD_TERM */
#define IN_READ_AT(base, dx, dy, dz, w)                                                  \
    {                                                                                    \
        VT v_;                                                                           \
        if (xe_) {                                                                       \
            v_ = XGATHER((__global const ELEM *)(base) + IN_ROW(dy, dz) * VX, x + (dx)); \
        } else {                                                                         \
            v_ = VIN(((base) + VCL(xv + VFLOOR(dx)))[IN_ROW(dy, dz)]);                   \
            if (SHIFT(dx) != 0) {                                                        \
                const VT b_ = VIN(((base) + VCL(xv + VFLOOR(dx) + 1))[IN_ROW(dy, dz)]);  \
                v_ = COMPOSE(v_, b_, SHIFT(dx));                                         \
            }                                                                            \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#else
#define IN_READ_AT(base, dx, dy, dz, w)                                                  \
    {                                                                                    \
        VT v_ = VIN(((base) + VCL(xv + VFLOOR(dx)))[IN_ROW(dy, dz)]);                    \
        if (SHIFT(dx) != 0) {                                                            \
            const VT b_ = VIN(((base) + VCL(xv + VFLOOR(dx) + 1))[IN_ROW(dy, dz)]);      \
            v_ = COMPOSE(v_, b_, SHIFT(dx));                                             \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#endif
#if SRC_PADDED
/* the padded primary field: s_ is the block's first padded row (its x = -SRC_PAD_X),
   its rows SNXV vectors apart, its planes NY + 2*SRC_PAD_Y rows */
#define IN_SROW(dy, dz)                                                                  \
    ((((idx_t)(oz_ + (dz))) * (NY + 2 * SRC_PAD_Y) + (oy_ + (dy))) * SNXV)
#define IN_TERM(dx, dy, dz, w)                                                           \
    {                                                                                    \
        VT v_ = VIN((s_ + SVCL(xv + VFLOOR(SPX(dx))))[IN_SROW(dy, dz)]);                 \
        if (SHIFT(SPX(dx)) != 0) {                                                       \
            const VT b_ = VIN((s_ + SVCL(xv + VFLOOR(SPX(dx)) + 1))[IN_SROW(dy, dz)]);   \
            v_ = COMPOSE(v_, b_, SHIFT(SPX(dx)));                                        \
        }                                                                                \
        acc += (w) * F(v_);                                                              \
    }
#define IN_SEP_X(dx, w) IN_TERM(dx, 0, 0, w)
#define S_FIRST(zz, yy) SIDX(zz, yy, -SRC_PAD_X)
#else
#define IN_TERM(dx, dy, dz, w) IN_READ_AT(s_, dx, dy, dz, w)
#define IN_SEP_X(dx, w) IN_READ_AT(s_, dx, 0, 0, w)
#define S_FIRST(zz, yy) IDX(zz, yy, 0)
#endif
#define IN_EXTRA(f, dx, dy, dz, w)                                                       \
    IN_READ_AT((__global const VE *)((f) + IDX(z0_, y0_, 0)), dx, dy, dz, w)
/* the rim's rolled path (one output row at a time): its row sums' y and z factors */
#define ROLLED_SEP_Y(dy, w) acc += (w) * rl_[kz][RY + (dy)];
#define ROLLED_SEP_Z(dz, w) acc += (w) * pl_[RZ + (dz)];
#endif
#ifndef SEP_Z_TERMS
#define SEP_Z_TERMS(T) T(0, (REAL)1)
#endif
#endif

#if TB > 1
/*
 * Temporal blocking: one launch advances TB time steps. A work-group owns a block of
 * SBX x SBY x SBZ = (WX*CX) x (WY*CY) x (WZ*CZ) outputs: with merging (CX, CY, CZ > 1)
 * each work-item computes several points of every level, and the block is larger
 * than the work-group, so the halo that is loaded and computed again by the
 * neighbouring work-groups is a smaller share of it. It loads the block's input tile
 * with a halo of TB radii per side into local memory (level 0), then computes level
 * s = 1 .. TB of the points that level TB still needs: the block widened by TB - s
 * radii per side, a region that shrinks by one radius per step. Two tile buffers
 * alternate (level s reads level s - 1). Level TB is written to the output.
 *
 * Every step is exactly one step of the other techniques: the same terms in the same
 * order in the element type. With the interior boundary, a point closer to an edge
 * than the radius keeps its value every step (its level-0 value); with clamp, a
 * neighbour beyond an edge reads the edge point of the previous level, which lies in
 * the tile and was computed there. Other fields than the primary one are read from
 * global memory: they do not evolve.
 */
#define HX (TB * RX) /* halo per side */
#define HY (TB * RY)
#define HZ (TB * RZ)
#if VX > 1
#define SBX (WX * VX * CX) /* the block of one work-group: ZREG=2's vectors */
#else
#define SBX (WX * CX) /* the block of one work-group */
#endif
#define SBY (WY * CY)
#define SBZ (WZ * CZ)
#if STREAM && ARRAY_DIMS == 2
/*
 * Streaming along y with TB time levels (2D, as the 3D kernel streams along z): a
 * work-group owns a strip of SBX columns and the WY*ZC output rows y0 .. y0+WY*ZC-1.
 * It walks the input rows y0-TB*RY .. y0+WY*ZC+TB*RY-1, WY rows per iteration, loading
 * each once with an x halo of TB radii into a ring of 2*RY+WY rows (level 0). Once
 * rows p .. p+WY-1 are loaded, level s = 1 .. TB computes its rows p-s*RY ..
 * p+WY-1-s*RY (whose y-neighbours at level s - 1 are then all there) on the columns
 * level TB still needs, the strip widened by TB - s radii per side, into level s's
 * ring; level TB is written to the output. Only the x halo (TB radii per side of a
 * strip of SBX columns) is computed twice, by the neighbouring strip too, and the y
 * halo once per chunk; TB barriers per WY rows (one after each level below TB, one
 * after the next rows are stored: level TB writes global memory only). The next rows'
 * global loads are issued into registers before the levels are computed and stored
 * into level 0's ring after them (the rows they replace are no longer read). Each step is exactly
 * one step of the other techniques, boundary included.
 */
#define PX (SBX + 2 * HX)
#define QY (2 * RY + WY)
#define GROUP (WX * WY)
/* the ring slot of row q (0 <= q < NY) at level s */
#define RING(s, q) (levels + ((s) * QY + (q) % QY) * PX)
#define LEVEL_AT(zz, yy, xx) RING(s - 1, yy)[(xx) - tx0]
#define TEMPORAL_TERM(dx, dy, dz, w)                                                     \
    {                                                                                    \
        const REAL v_ = LEVEL_AT(0, CLY(y + (dy)), CLX(x + (dx)));                       \
        acc += (w) * F(v_);                                                              \
    }
#define TEMPORAL_EXTRA(f, dx, dy, dz, w)                                                 \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, 0, y + (dy), x + (dx));                              \
        acc += (w) * F(v_);                                                              \
    }
#define ROWS (WY * ZC) /* output rows of one work-group */
#define LOADS ((WY * PX + GROUP - 1) / GROUP) /* input elements per work-item and iteration */
/* Rows pp .. pp+WY-1 of the input into registers (issued before the levels are
   computed, so the loads are in flight meanwhile), then into level 0's ring. */
#define LOAD_ROWS(pp)                                                                    \
    _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                                  \
        const int i = lid + k * GROUP;                                                   \
        const int q = (pp) + i / PX;                                                     \
        const int xx = tx0 + i % PX;                                                     \
        next[k] = i < WY * PX && q >= first && q < last && xx >= 0 && xx < NX            \
                      ? GLOBAL_READ(0, q, xx)                                            \
                      : (REAL)0;                                                         \
    }
#define STORE_ROWS(pp)                                                                   \
    _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                                  \
        const int i = lid + k * GROUP;                                                   \
        const int q = (pp) + i / PX;                                                     \
        if (i < WY * PX && q >= first && q < last) {                                     \
            RING(0, q)[i % PX] = next[k];                                                \
        }                                                                                \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL levels[TB * QY * PX];
    const int lid = (int)get_local_id(1) * WX + (int)get_local_id(0);
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int y0 = (int)get_group_id(1) * ROWS;
    const int first = max(y0 - HY, 0);        /* the input rows read */
    const int last = min(y0 + ROWS + HY, NY); /* one past the last */

    REAL next[LOADS];
    LOAD_ROWS(y0 - HY) /* level 0: the first iteration's input rows */
    STORE_ROWS(y0 - HY)
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = y0 - HY; p < y0 + ROWS + HY; p += WY) {
        const bool more = p + WY < y0 + ROWS + HY;
        if (more) {
            LOAD_ROWS(p + WY)
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int mx = (TB - s) * RX;
            const int my = (TB - s) * RY;
            const int lo = max(y0 - my, 0); /* the rows of level s */
            const int hi = min(y0 + ROWS + my, NY);
            const int ex = SBX + 2 * mx;
            for (int i = lid; i < WY * ex; i += GROUP) {
                const int y = p - s * RY + i / ex; /* level s's rows of this iteration */
                const int ix = HX - mx + i % ex;
                const int x = tx0 + ix;
                if (y < lo || y >= hi || x < 0 || x >= NX) {
                    continue; /* not needed, or beyond the array: never read */
                }
                const bool written = x >= LOX && x < HIX && y >= LOY && y < HIY;
                REAL v;
                if (written) {
                    REAL acc = (REAL)0;
                    STENCIL_TERMS(TEMPORAL_TERM)
                    EXTRA_TERMS(TEMPORAL_EXTRA)
                    ADD_CONSTANT(acc);
                    v = acc;
                } else {
                    v = RING(s - 1, y)[ix]; /* interior boundary: the rim keeps it */
                }
                if (s == TB) {
                    if (written) {
                        DST[IDX(0, y, x)] = STORE(v);
                    }
                } else {
                    RING(s, y)[ix] = v;
                }
            }
            if (s < TB) { /* level TB writes global memory only: the barrier below (or
                             the kernel's end) orders its ring reads before the next
                             iteration overwrites them */
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        if (more) { /* the rows the next iteration's level 1 reads replace older ones */
            STORE_ROWS(p + WY)
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

#elif STREAM && ZREG == 2
/*
 * Streaming along z with TB time levels, the z-neighbours in registers, each level on
 * its own region (3D, ZREG=2; z-star stencils as ZREG=1): the block, the planes walked,
 * the queues and the shared centre plane are those of ZREG=1, but the points of the
 * block's plane with its halo are dealt to the work-items in another order. First the
 * block, CX*CY points per work-item in the work-group's shape (point (a, b) of
 * work-item (lx, ly): x = lx + a*WX, y = ly + b*WY of the block; its rows coalesce and
 * its positions in the plane are constant offsets of the work-item's first), then the
 * halo frame by frame outwards (frame f: the block widened by f radii less the block
 * widened by f - 1; halo point h: work-item h % GROUP). Level s needs the block and
 * frames 1 .. TB - s, so every level computes, stores in local memory and queues only
 * its own region: a work-group's warps past it skip the level (the frames lie in
 * consecutive points, only the warp at a frame's end is split), and the last level
 * computes the block alone. ZREG=1 has every work-item visit (test, store, queue) each
 * of its points at every level, the halo's TB radii included. Each step is exactly one
 * step of the other techniques, boundary included.
 */
#define PX (SBX + 2 * HX)
#define PY (SBY + 2 * HY)
#define PLANE (PX * PY)
#define QZ (2 * RZ + 1)
#define GROUP (WX * WY)
#define HALO (PLANE - SBX * SBY)                /* halo points of the plane */
#define HALO_PTS ((HALO + GROUP - 1) / GROUP)   /* halo points per work-item */
#define HALO_ARRAY (HALO_PTS > 0 ? HALO_PTS : 1) /* no halo: no zero-length arrays */
/* halo points of the block widened by m radii per side (frames 1 .. m) */
#define WIDE(m) ((SBX + 2 * (m) * RX) * (SBY + 2 * (m) * RY) - SBX * SBY)
/* whether halo point m of the work-item lies in frames 1 .. f (the first test a
   constant: a point beyond frame f in every work-item keeps no queue of the levels it
   is never computed at) */
#define IN_FRAMES(m, f)                                                                  \
    ((m) * GROUP < min(WIDE(f), HALO) && lid + (m) * GROUP < min(WIDE(f), HALO))
/* Halo point m of the work-item (point h of the halo, frame by frame outwards): its
   place in the tile (hx, hy) and whether it lies in the array (loaded). */
#define HALO_PLACE(m)                                                                    \
    {                                                                                    \
        const int h = lid + (m) * GROUP;                                                 \
        int f = TB; /* the frame of halo point h */                                      \
        _Pragma("unroll") for (int g = TB - 1; g >= 1; --g) {                            \
            if (h < WIDE(g)) {                                                           \
                f = g;                                                                   \
            }                                                                            \
        }                                                                                \
        const int j0 = h - WIDE(f - 1);                                                  \
        const int win = SBX + 2 * (f - 1) * RX; /* the frame's inner rectangle */        \
        const int hin = SBY + 2 * (f - 1) * RY;                                          \
        const int wout = win + 2 * RX;                                                   \
        const int ox = HX - f * RX; /* the frame's outer corner in the tile */           \
        const int oy = HY - f * RY;                                                      \
        int ix, iy;                                                                      \
        if (j0 < RY * wout) { /* above the inner rectangle */                            \
            iy = oy + j0 / wout;                                                         \
            ix = ox + j0 % wout;                                                         \
        } else if (j0 < 2 * RY * wout) { /* below */                                     \
            const int j = j0 - RY * wout;                                                \
            iy = oy + RY + hin + j / wout;                                               \
            ix = ox + j % wout;                                                          \
        } else { /* beside: RX points left, RX right per row */                          \
            const int j = j0 - 2 * RY * wout;                                            \
            const int c = j % max(2 * RX, 1);                                            \
            iy = oy + RY + j / max(2 * RX, 1);                                           \
            ix = c < RX ? ox + c : ox + RX + win + (c - RX);                             \
        }                                                                                \
        hx[m] = h < HALO ? ix : 0;                                                       \
        hy[m] = h < HALO ? iy : 0;                                                       \
        const int x = tx0 + ix;                                                          \
        const int y = ty0 + iy;                                                          \
        hload[m] = h < HALO && x >= 0 && x < NX && y >= 0 && y < NY;                     \
    }
/* The last level whose region holds the tile place (ix, iy) (the block and frames
   1 .. TB - s for level s): top = 0 .. TB. */
#define REGION_TOP(ix, iy, top)                                                          \
    {                                                                                    \
        top = 0;                                                                         \
        _Pragma("unroll") for (int s_ = 1; s_ <= TB; ++s_) {                             \
            const int mx_ = (TB - s_) * RX;                                              \
            const int my_ = (TB - s_) * RY;                                              \
            if ((ix) >= HX - mx_ && (ix) < HX + SBX + mx_ && (iy) >= HY - my_ &&         \
                (iy) < HY + SBY + my_) {                                                 \
                top = s_;                                                                \
            }                                                                            \
        }                                                                                \
    }
/* a term of another field at a point (x, y) of plane z, read from global memory */
#define TEMPORAL_EXTRA(f, dx, dy, dz, w)                                                 \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), x + (dx));                       \
        acc += (w) * F(v_);                                                              \
    }
#if VX > 1
/*
 * Streaming along z with TB time levels, ZREG=2 with vectors (VX = BX = 2 or 4, the
 * interior boundary): the walk, the levels, the queues and the halo frames are those of
 * the scalar kernel below, but each of a work-item's CX*CY block points is a vector of
 * VX adjacent points in x (vector (a, b) of work-item (lx, ly): x = (lx + a*WX)*VX,
 * y = ly + b*WY of the block, which is (WX*VX*CX) x (WY*CY)). A block vector is loaded,
 * queued, stored in the shared plane and written to the output as one vector, and its
 * terms are computed lane by lane: its y-neighbours are the aligned vectors of the rows
 * above and below, its x-neighbours the vectors beside composed with its own (the same
 * addresses for every term of a row), its z-neighbours its queue. The halo's points
 * stay scalars, dealt frame by frame as the scalar kernel deals them. In the plane the
 * block starts on a whole vector (XOFF columns before the halo), and its row pitch is
 * an odd number of vectors. Each lane's terms are the scalar kernel's, in the same
 * order: the same results, bit for bit. On the H200 (heat3d 512^3, 8 steps) the vectors
 * at a 128x16 block with ZS=1 ran 3.3-3.7 % faster than the scalar kernel's best, and
 * TB 4 as fast per step as TB 2 (benchmarks/results/h200-limit/temporal-8/zreg-vectors/).
 */
#if CLAMP
#error "ZREG=2 with vectors (VX > 1) supports the interior boundary only: CLAMP=0"
#endif
#if VX != BX || VX > 4
#error "ZREG=2 with vectors: VX = BX = 2 or 4"
#endif
#if RX > VX
#error "ZREG=2 with vectors reads its x-neighbours from the vectors beside it: RX <= VX"
#endif
#if NX % VX != 0
#error "ZREG=2 with vectors reads whole vectors of each row: NX % VX == 0"
#endif
#define XOFF ((HX + VX - 1) / VX * VX - HX) /* columns before the halo: the block aligned */
#define PVN ((XOFF + PX + VX - 1) / VX)     /* a row's vectors */
#define PITCH (VX * (PVN + 1 - PVN % 2))    /* an odd number of vectors */
#define PLANE_STORE (PITCH * PY)
#define BLOCK_VS (CX * CY)                      /* block vectors per work-item */
/* block vector k: its first lane's place in the tile (0 .. PX-1, 0 .. PY-1) and in the
   plane (a multiple of VX); halo point m's place in the plane */
#define BVX(k) (HX + (lx + ((k) % CX) * WX) * VX)
#define BVY(k) (HY + ly + ((k) / CX) * WY)
#define BPOS(k) (home + ((k) % CX) * WX * VX + ((k) / CX) * WY * PITCH)
#define HPOS(m) (hy[m] * PITCH + XOFF + hx[m])
#define PV(o) (*(__local VT *)(plane + (o))) /* the aligned vector at plane place o */
/* block vector k's row dy, the vector j beside it (its own: level s - 1's queue) */
#define ROWV(k, dy, j)                                                                   \
    ((dy) == 0 && (j) == 0 ? qv[s - 1][k][RZ] : PV(BPOS(k) + (dy) * PITCH + (j) * VX))
#define ZV_TERM(dx, dy, dz, w)                                                           \
    {                                                                                    \
        typedef char zreg_needs_a_z_star[((dz) == 0 || ((dx) == 0 && (dy) == 0)) ? 1 : -1]; \
        const VT v_ = ((dx) == 0 && (dy) == 0) ? qv[s - 1][k][RZ + (dz)]                 \
                      : SHIFT(dx) == 0        ? ROWV(k, dy, VFLOOR(dx))                  \
                                              : COMPOSE(ROWV(k, dy, VFLOOR(dx)),         \
                                                        ROWV(k, dy, VFLOOR(dx) + 1),     \
                                                        SHIFT(dx));                      \
        acc += (w) * F(v_);                                                              \
    }
/* ZS=1: each plane step stores every level's centre plane first, then meets one
   barrier, then computes the levels (0: a barrier before each level). Level s reads
   level s - 1's plane z = p - s*RZ, computed RZ steps before, so it is there before the
   step's levels; their z-neighbours (the newest entries) come from the work-item's own
   queues. Each level has two buffers, by the step's parity. */
#if ZS
#define NBUF (2 * TB)
#define BUF(s) ((stage & 1) * TB + (s) - 1)
/* the queue entry that holds level s - 1's plane z before this step's levels: the
   centre once level s - 1 has queued this step's plane (level 0 queues after them) */
#define QSTORE(s) ((s) == 1 ? RZ : RZ + 1)
#else
#define NBUF 2
#define BUF(s) ((stage + (s)) & 1)
#define QSTORE(s) RZ
#endif
/* level t - 1's plane on level t's region (the block and frames 1 .. TB - t + 1) */
#define STORE_LEVEL(t)                                                                   \
    {                                                                                    \
        __local REAL *plane_ = centre + BUF(t) * PLANE_STORE;                            \
        _Pragma("unroll") for (int k = 0; k < BLOCK_VS; ++k) {                           \
            *(__local VT *)(plane_ + BPOS(k)) = qv[(t) - 1][k][QSTORE(t)];               \
        }                                                                                \
        _Pragma("unroll") for (int m = 0; m < HALO_PTS; ++m) {                           \
            if (IN_FRAMES(m, TB - (t) + 1)) {                                            \
                plane_[HPOS(m)] = qs[(t) - 1][m][QSTORE(t)];                             \
            }                                                                            \
        }                                                                                \
    }
/* another field's lanes at x0 + dx + i, each read on its own (x kept in the row: the
   rim's lanes are not written) */
#define FIELD_LANE(f, dx, dy, dz, i)                                                     \
    (f)[IDX(z + (dz), y + (dy), min(max(x0 + (dx) + (i), 0), NX - 1))]
#if VX == 2
#define FIELD_VECTOR(f, dx, dy, dz)                                                      \
    (VT)(FIELD_LANE(f, dx, dy, dz, 0), FIELD_LANE(f, dx, dy, dz, 1))
/* the constant lane by lane: a constant that is a product (a*b) then contracts with
   each lane's sum as with the scalar kernel's, fma(a, b, acc); added to the vector it
   would round once more */
#define ADD_CONSTANT_V(acc)                                                              \
    ADD_CONSTANT((acc).s0);                                                              \
    ADD_CONSTANT((acc).s1)
#else
#define FIELD_VECTOR(f, dx, dy, dz)                                                      \
    (VT)(FIELD_LANE(f, dx, dy, dz, 0), FIELD_LANE(f, dx, dy, dz, 1),                     \
         FIELD_LANE(f, dx, dy, dz, 2), FIELD_LANE(f, dx, dy, dz, 3))
#define ADD_CONSTANT_V(acc)                                                              \
    ADD_CONSTANT((acc).s0);                                                              \
    ADD_CONSTANT((acc).s1);                                                              \
    ADD_CONSTANT((acc).s2);                                                              \
    ADD_CONSTANT((acc).s3)
#endif
#define ZV_EXTRA(f, dx, dy, dz, w)                                                       \
    {                                                                                    \
        const VT v_ = FIELD_VECTOR(f, dx, dy, dz);                                       \
        acc += (w) * F(v_);                                                              \
    }
#define PLANE_AT(dx, dy) plane[HPOS(m) + (dy) * PITCH + (dx)]
#define HALO_TERM(dx, dy, dz, w)                                                         \
    {                                                                                    \
        const REAL v_ = ((dx) == 0 && (dy) == 0) ? qs[s - 1][m][RZ + (dz)]               \
                                                 : PLANE_AT(dx, dy);                     \
        acc += (w) * F(v_);                                                              \
    }
/* a plane enters a queue: a plain shift (the interior boundary reads no plane beyond
   the array); with ZU=1 the walk is unrolled by the queue's length, a renaming */
#define SHIFT_IN(qq, val)                                                                \
    {                                                                                    \
        _Pragma("unroll") for (int j = 0; j < QZ - 1; ++j) {                             \
            (qq)[j] = (qq)[j + 1];                                                       \
        }                                                                                \
        (qq)[QZ - 1] = (val);                                                            \
    }
#define LOAD_PLANE(pp)                                                                   \
    {                                                                                    \
        const bool in_ = (pp) >= 0 && (pp) < NZ;                                         \
        _Pragma("unroll") for (int k = 0; k < BLOCK_VS; ++k) {                           \
            nv[k] = in_ ? *(__global const VT *)(SRC + IDX(pp, ty0 + BVY(k), tx0 + BVX(k))) \
                        : (VT)0;                                                         \
        }                                                                                \
        _Pragma("unroll") for (int m = 0; m < HALO_PTS; ++m) {                           \
            ns[m] = in_ && hload[m] ? GLOBAL_READ(pp, ty0 + hy[m], tx0 + hx[m]) : (REAL)0; \
        }                                                                                \
    }
/* Level s of block vector k at plane z: its terms lane by lane (the x rim's lanes keep
   their value), then queued, or written at the last level. */
#define VECTOR_LEVEL(k)                                                                  \
    {                                                                                    \
        const int x0 = tx0 + BVX(k);                                                     \
        const int y = ty0 + BVY(k);                                                      \
        const bool written = zw && wrow[k];                                              \
        VT v = qv[s - 1][k][RZ]; /* interior boundary: the rim keeps it */               \
        if (written) {                                                                   \
            VT acc = (VT)0;                                                              \
            STENCIL_TERMS(ZV_TERM)                                                       \
            EXTRA_TERMS(ZV_EXTRA)                                                        \
            ADD_CONSTANT_V(acc);                                                         \
            if (xrim[k]) {                                                               \
                REAL a_[VX];                                                             \
                REAL c_[VX];                                                             \
                VSTORE(acc, 0, a_);                                                      \
                VSTORE(v, 0, c_);                                                        \
                _Pragma("unroll") for (int i = 0; i < VX; ++i) {                         \
                    a_[i] = x0 + i >= LOX && x0 + i < HIX ? a_[i] : c_[i];               \
                }                                                                        \
                acc = VLOAD(0, a_);                                                      \
            }                                                                            \
            v = acc;                                                                     \
        }                                                                                \
        if (s < TB) {                                                                    \
            SHIFT_IN(qv[s][k], v)                                                        \
        } else if (written && !xrim[k]) {                                                \
            *(__global VT *)(DST + IDX(z, y, x0)) = STORE(v);                            \
        } else if (written) {                                                            \
            REAL a_[VX];                                                                 \
            VSTORE(v, 0, a_);                                                            \
            _Pragma("unroll") for (int i = 0; i < VX; ++i) {                             \
                if (x0 + i >= LOX && x0 + i < HIX) {                                     \
                    DST[IDX(z, y, x0 + i)] = STORE(a_[i]);                               \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }
/* Level s of halo point m (in level s's region, s < TB): as the scalar kernel's. */
#define HALO_LEVEL(m)                                                                    \
    {                                                                                    \
        const int x = tx0 + hx[m];                                                       \
        const int y = ty0 + hy[m];                                                       \
        REAL v = qs[s - 1][m][RZ];                                                       \
        if (zw && reach[m] > 0) {                                                        \
            REAL acc = (REAL)0;                                                          \
            STENCIL_TERMS(HALO_TERM)                                                     \
            EXTRA_TERMS(TEMPORAL_EXTRA)                                                  \
            ADD_CONSTANT(acc);                                                           \
            v = acc;                                                                     \
        }                                                                                \
        SHIFT_IN(qs[s][m], v)                                                            \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local VT centre_v[NBUF * PLANE_STORE / VX];
    __local REAL *centre = (__local REAL *)centre_v;
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int lid = ly * WX + lx;
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int ty0 = (int)get_group_id(1) * SBY - HY;
    const int z0 = (int)get_group_id(2) * ZC;
    const int home = (HY + ly) * PITCH + XOFF + HX + lx * VX; /* block vector 0 */

    VT qv[TB][BLOCK_VS][QZ]; /* levels 0 .. TB-1: planes z-RZ .. z+RZ per vector */
    REAL qs[TB][HALO_ARRAY][QZ];
    VT nv[BLOCK_VS]; /* the next plane, loaded ahead */
    REAL ns[HALO_ARRAY];
    int hx[HALO_ARRAY]; /* the tile places of the work-item's halo points */
    int hy[HALO_ARRAY];
    bool hload[HALO_ARRAY]; /* a halo point inside the array (loaded) */
    int reach[HALO_ARRAY]; /* the halo points' last level, negative on the rim */
    bool wrow[BLOCK_VS]; /* block vector k's row is written (inside the y rim) */
    bool xrim[BLOCK_VS]; /* block vector k holds lanes of the x rim */
#pragma unroll
    for (int m = 0; m < HALO_PTS; ++m) {
        HALO_PLACE(m)
        const int x = tx0 + hx[m];
        const int y = ty0 + hy[m];
        int top;
        REGION_TOP(hx[m], hy[m], top)
        top = hload[m] ? top : 0; /* beyond the array, or no point (the last pass) */
        reach[m] = x >= LOX && x < HIX && y >= LOY && y < HIY ? top : -top;
    }
#pragma unroll
    for (int k = 0; k < BLOCK_VS; ++k) {
        const int x0 = tx0 + BVX(k);
        const int y = ty0 + BVY(k);
        wrow[k] = y >= LOY && y < HIY;
        xrim[k] = x0 < LOX || x0 + VX > HIX;
    }
#pragma unroll
    for (int lv = 0; lv < TB; ++lv) {
#pragma unroll
        for (int j = 0; j < QZ; ++j) {
#pragma unroll
            for (int k = 0; k < BLOCK_VS; ++k) {
                qv[lv][k][j] = (VT)0;
            }
#pragma unroll
            for (int m = 0; m < HALO_PTS; ++m) {
                qs[lv][m][j] = (REAL)0;
            }
        }
    }
    LOAD_PLANE(z0 - HZ) /* level 0: the first input plane */
#pragma unroll
    for (int k = 0; k < BLOCK_VS; ++k) {
        SHIFT_IN(qv[0][k], nv[k])
    }
#pragma unroll
    for (int m = 0; m < HALO_PTS; ++m) {
        SHIFT_IN(qs[0][m], ns[m])
    }
    int stage = 0; /* stages so far: the buffers of the centre planes alternate */
#if ZU
    UNROLL_BY(QUEUE_Z)
#endif
    for (int p = z0 - HZ; p < z0 + ZC + HZ; ++p) {
        const bool more = p + 1 < z0 + ZC + HZ;
        if (more) {
            LOAD_PLANE(p + 1)
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
#if ZS
            if (s == 1) { /* every level's plane, then one barrier */
#pragma unroll
                for (int t = 1; t <= TB; ++t) {
                    STORE_LEVEL(t)
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
#else
            STORE_LEVEL(s)
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            __local REAL *plane = centre + BUF(s) * PLANE_STORE;
            const int z = p - s * RZ; /* level s's plane of this step */
            const int mz = (TB - s) * RZ;
            /* the plane is one level s needs and one the stencil writes */
            const bool zw = z >= max(z0 - mz, LOZ) && z < min(z0 + ZC + mz, HIZ);
#pragma unroll
            for (int k = 0; k < BLOCK_VS; ++k) {
                VECTOR_LEVEL(k)
            }
#pragma unroll
            for (int m = 0; m < HALO_PTS; ++m) { /* the halo's points of level s's region */
                if (s < TB && IN_FRAMES(m, TB - s)) {
                    HALO_LEVEL(m)
                }
            }
        }
        stage += ZS ? 1 : TB;
        if (more) {
#pragma unroll
            for (int k = 0; k < BLOCK_VS; ++k) {
                SHIFT_IN(qv[0][k], nv[k])
            }
#pragma unroll
            for (int m = 0; m < HALO_PTS; ++m) {
                SHIFT_IN(qs[0][m], ns[m])
            }
        }
    }
}

#else
/* the plane's row pitch in local memory: odd, so that a column of up to 32 points (the
   halo's side frames, dealt along y) falls in 32 banks */
#define PITCH (PX + 1 - PX % 2)
#define PLANE_STORE (PITCH * PY)
#define BLOCK_PTS (CX * CY)                     /* block points per work-item */
#define PTS (BLOCK_PTS + HALO_PTS)
/* The place of the work-item's point k in the plane: block points at constant offsets
   of its first, halo points from their registers (k is a constant: unrolled). */
#define PX_OF(k) ((k) < BLOCK_PTS ? HX + lx + ((k) % CX) * WX : hx[(k) - BLOCK_PTS])
#define PY_OF(k) ((k) < BLOCK_PTS ? HY + ly + ((k) / CX) * WY : hy[(k) - BLOCK_PTS])
#define POS(k) ((k) < BLOCK_PTS ? home + ((k) % CX) * WX + ((k) / CX) * WY * PITCH      \
                                : hy[(k) - BLOCK_PTS] * PITCH + hx[(k) - BLOCK_PTS])
#define LOAD_PLANE(pp)                                                                   \
    _Pragma("unroll") for (int k = 0; k < PTS; ++k) {                                    \
        next[k] = (pp) >= 0 && (pp) < NZ && (k < BLOCK_PTS || hload[k - BLOCK_PTS])      \
                      ? GLOBAL_READ(pp, ty0 + PY_OF(k), tx0 + PX_OF(k))                  \
                      : (REAL)0;                                                         \
    }
/* Level lv's plane zz (point k's value in vals) enters its queue. Clamp: as ZREG=1's
   PUSH. Interior: a plain shift, as no plane beyond the array is ever read (a plane
   the stencil writes reads planes 0 .. NZ-1 only); with ZU=1 the walk is unrolled by
   the queue's length, so the shift is a renaming of registers. */
#if CLAMP
#define PUSH(lv, zz, vals, k)                                                            \
    {                                                                                    \
        _Pragma("unroll") for (int j = 0; j < QZ - 1; ++j) {                             \
            q[lv][k][j] = (zz) == 0 ? (vals)[k] : q[lv][k][j + 1];                       \
        }                                                                                \
        q[lv][k][QZ - 1] = (zz) >= NZ ? q[lv][k][QZ - 1] : (vals)[k];                    \
    }
#else
#define PUSH(lv, zz, vals, k)                                                            \
    {                                                                                    \
        _Pragma("unroll") for (int j = 0; j < QZ - 1; ++j) {                             \
            q[lv][k][j] = q[lv][k][j + 1];                                               \
        }                                                                                \
        q[lv][k][QZ - 1] = (vals)[k];                                                    \
    }
#endif
#if CLAMP
#define PLANE_AT(dx, dy) plane[(CLY(y + (dy)) - ty0) * PITCH + (CLX(x + (dx)) - tx0)]
#else
#define PLANE_AT(dx, dy) plane[POS(k) + (dy) * PITCH + (dx)]
#endif
#define ZREG_TERM(dx, dy, dz, w)                                                         \
    {                                                                                    \
        typedef char zreg_needs_a_z_star[((dz) == 0 || ((dx) == 0 && (dy) == 0)) ? 1 : -1]; \
        const REAL v_ = ((dx) == 0 && (dy) == 0) ? q[s - 1][k][RZ + (dz)]                \
                                                 : PLANE_AT(dx, dy);                     \
        acc += (w) * F(v_);                                                              \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL centre[2 * PLANE_STORE];
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int lid = ly * WX + lx;
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int ty0 = (int)get_group_id(1) * SBY - HY;
    const int z0 = (int)get_group_id(2) * ZC;
    const int home = (HY + ly) * PITCH + HX + lx; /* the work-item's first block point */

    REAL q[TB][PTS][QZ]; /* levels 0 .. TB-1: planes z-RZ .. z+RZ per point */
    REAL next[PTS];
    REAL now[PTS];
    int hx[HALO_ARRAY]; /* the plane places of the work-item's halo points */
    int hy[HALO_ARRAY];
    bool hload[HALO_ARRAY]; /* a halo point inside the array (loaded) */
    /* Per point: the last level whose region holds it (0: none, or beyond the array),
       negative on the interior boundary's x/y rim (computed there, never written). */
    int reach[PTS];
#pragma unroll
    for (int m = 0; m < HALO_PTS; ++m) {
        HALO_PLACE(m)
    }
#pragma unroll
    for (int k = 0; k < PTS; ++k) {
        const int ix = PX_OF(k);
        const int iy = PY_OF(k);
        const int x = tx0 + ix;
        const int y = ty0 + iy;
        int top;
        REGION_TOP(ix, iy, top)
        if (k >= BLOCK_PTS && !hload[k - BLOCK_PTS]) {
            top = 0; /* beyond the array, or no point (the halo's last pass) */
        }
        reach[k] = x >= LOX && x < HIX && y >= LOY && y < HIY ? top : -top;
    }
#pragma unroll
    for (int lv = 0; lv < TB; ++lv) {
#pragma unroll
        for (int k = 0; k < PTS; ++k) {
#pragma unroll
            for (int j = 0; j < QZ; ++j) {
                q[lv][k][j] = (REAL)0;
            }
        }
    }
    LOAD_PLANE(z0 - HZ) /* level 0: the first input plane */
#pragma unroll
    for (int k = 0; k < PTS; ++k) {
        PUSH(0, z0 - HZ, next, k)
    }
    int stage = 0; /* stages so far: the buffer of the centre plane alternates */
#if ZU
    UNROLL_BY(QUEUE_Z)
#endif
    for (int p = z0 - HZ; p < z0 + ZC + HZ; ++p) {
        const bool more = p + 1 < z0 + ZC + HZ;
        if (more) {
            LOAD_PLANE(p + 1)
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int z = p - s * RZ; /* level s's plane of this step */
            const int mz = (TB - s) * RZ;
            __local REAL *plane = centre + ((stage + s) & 1) * PLANE_STORE;
#pragma unroll
            for (int k = 0; k < PTS; ++k) { /* level s - 1's plane z on its region */
                if (k < BLOCK_PTS || IN_FRAMES(k - BLOCK_PTS, TB - s + 1)) {
                    plane[POS(k)] = q[s - 1][k][RZ];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* the plane is one level s needs and one the stencil writes */
            const bool zw = z >= max(z0 - mz, LOZ) && z < min(z0 + ZC + mz, HIZ);
#pragma unroll
            for (int k = 0; k < PTS; ++k) {
                /* level s's region: the block and frames 1 .. TB - s (so s <= |reach|) */
                if (k >= BLOCK_PTS && !IN_FRAMES(k - BLOCK_PTS, TB - s)) {
                    continue;
                }
                const int x = tx0 + PX_OF(k);
                const int y = ty0 + PY_OF(k);
                const bool written = zw && reach[k] > 0;
                REAL v = q[s - 1][k][RZ]; /* interior boundary: the rim keeps it */
                if (written) {
                    REAL acc = (REAL)0;
                    STENCIL_TERMS(ZREG_TERM)
                    EXTRA_TERMS(TEMPORAL_EXTRA)
                    ADD_CONSTANT(acc);
                    v = acc;
                }
                if (s == TB) {
                    if (written) {
                        DST[IDX(z, y, x)] = STORE(v);
                    }
                } else {
                    now[k] = v;
                    PUSH(s, z, now, k)
                }
            }
        }
        stage += TB;
        if (more) {
#pragma unroll
            for (int k = 0; k < PTS; ++k) {
                PUSH(0, p + 1, next, k)
            }
        }
    }
}

#endif
#elif STREAM && ZREG
/*
 * Streaming along z with TB time levels, the z-neighbours in registers (3D, ZREG=1; a
 * stencil whose terms off the centre plane lie on the z axis, dz != 0 only with
 * dx = dy = 0): the work-group, its block and the planes walked are those of the
 * kernel below (ZREG=0), but a work-item owns the same x/y points of the block's plane
 * with its halo at every level (point i of the plane: work-item i % GROUP), and keeps,
 * per level 0 .. TB-1 and point, a queue of the 2*RZ+1 planes its z-terms read in
 * registers. Local memory holds one plane only, the centre plane of the level below
 * for the x/y neighbours, in two buffers that alternate stage by stage (the next
 * store into a buffer waits for the barrier of the stage between): 2 planes of the
 * block with its halo at any TB instead of TB*(2*RZ+1). One barrier per level and
 * plane (after the centre plane is stored), TB per plane as below. Clamp: a level's
 * queue is filled with plane 0 when plane 0 enters it (the planes below read it) and
 * repeats its newest plane past NZ - 1. Each step is exactly one step of the other
 * techniques, boundary included.
 */
#define PX (SBX + 2 * HX)
#define PY (SBY + 2 * HY)
#define PLANE (PX * PY)
#define QZ (2 * RZ + 1)
#define GROUP (WX * WY)
#define LOADS ((PLANE + GROUP - 1) / GROUP) /* points per work-item and plane */
#define LOAD_PLANE(pp)                                                                   \
    _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                                  \
        const int i = lid + k * GROUP;                                                   \
        const int xx = tx0 + i % PX;                                                     \
        const int yy = ty0 + i / PX;                                                     \
        next[k] = i < PLANE && (pp) >= 0 && (pp) < NZ &&                                 \
                          (inner || (xx >= 0 && xx < NX && yy >= 0 && yy < NY))          \
                      ? GLOBAL_READ(pp, yy, xx)                                          \
                      : (REAL)0;                                                         \
    }
/* Level lv's plane zz (values vals) enters its queue: the queue moves one plane on;
   plane 0 fills it (a clamped z-neighbour below reads plane 0), a plane past NZ - 1
   repeats the newest (a clamped z-neighbour above reads plane NZ - 1). */
#define PUSH(lv, zz, vals)                                                               \
    _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                                  \
        _Pragma("unroll") for (int j = 0; j < QZ - 1; ++j) {                             \
            q[lv][k][j] = (zz) == 0 ? (vals)[k] : q[lv][k][j + 1];                       \
        }                                                                                \
        q[lv][k][QZ - 1] = (zz) >= NZ ? q[lv][k][QZ - 1] : (vals)[k];                    \
    }
/* A term: z-neighbours from the work-item's queue of level s - 1, x/y neighbours from
   the shared centre plane (a stencil with other terms fails to compile here); without
   clamping, at a constant offset from the point's own place i. */
#if CLAMP
#define PLANE_AT(dx, dy) plane[(CLY(y + (dy)) - ty0) * PX + (CLX(x + (dx)) - tx0)]
#else
#define PLANE_AT(dx, dy) plane[i + (dy) * PX + (dx)]
#endif
#define ZREG_TERM(dx, dy, dz, w)                                                         \
    {                                                                                    \
        typedef char zreg_needs_a_z_star[((dz) == 0 || ((dx) == 0 && (dy) == 0)) ? 1 : -1]; \
        const REAL v_ = ((dx) == 0 && (dy) == 0) ? q[s - 1][k][RZ + (dz)]                \
                                                 : PLANE_AT(dx, dy);                     \
        acc += (w) * F(v_);                                                              \
    }
#define TEMPORAL_EXTRA(f, dx, dy, dz, w)                                                 \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), x + (dx));                       \
        acc += (w) * F(v_);                                                              \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL centre[2 * PLANE];
    const int lid = (int)get_local_id(1) * WX + (int)get_local_id(0);
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int ty0 = (int)get_group_id(1) * SBY - HY;
    const int z0 = (int)get_group_id(2) * ZC;
    const bool inner = tx0 >= 0 && tx0 + PX <= NX && ty0 >= 0 && ty0 + PY <= NY;

    REAL q[TB][LOADS][QZ]; /* levels 0 .. TB-1: planes z-RZ .. z+RZ per point */
    REAL next[LOADS];
    REAL now[LOADS];
    /* Per point: the last level whose x/y region holds it (0: none, or beyond the
       array; the regions shrink with the level), negative on the interior boundary's
       x/y rim (computed there, never written). */
    int reach[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        const int i = lid + k * GROUP;
        const int ix = i % PX;
        const int iy = i / PX;
        const int x = tx0 + ix;
        const int y = ty0 + iy;
        int top = 0;
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int mx = (TB - s) * RX;
            const int my = (TB - s) * RY;
            if (ix >= HX - mx && ix < HX + SBX + mx && iy >= HY - my && iy < HY + SBY + my) {
                top = s;
            }
        }
        if (i >= PLANE || x < 0 || x >= NX || y < 0 || y >= NY) {
            top = 0;
        }
        reach[k] = x >= LOX && x < HIX && y >= LOY && y < HIY ? top : -top;
    }
#pragma unroll
    for (int lv = 0; lv < TB; ++lv) {
#pragma unroll
        for (int k = 0; k < LOADS; ++k) {
#pragma unroll
            for (int j = 0; j < QZ; ++j) {
                q[lv][k][j] = (REAL)0;
            }
        }
    }
    LOAD_PLANE(z0 - HZ) /* level 0: the first input plane */
    PUSH(0, z0 - HZ, next)
    int stage = 0; /* stages so far: the buffer of the centre plane alternates */
    for (int p = z0 - HZ; p < z0 + ZC + HZ; ++p) {
        const bool more = p + 1 < z0 + ZC + HZ;
        if (more) {
            LOAD_PLANE(p + 1)
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int z = p - s * RZ; /* level s's plane of this step */
            const int mz = (TB - s) * RZ;
            __local REAL *plane = centre + ((stage + s) & 1) * PLANE;
#pragma unroll
            for (int k = 0; k < LOADS; ++k) { /* level s - 1's plane z */
                const int i = lid + k * GROUP;
                if (i < PLANE) {
                    plane[i] = q[s - 1][k][RZ];
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const bool zin = z >= max(z0 - mz, 0) && z < min(z0 + ZC + mz, NZ);
            const bool zw = z >= LOZ && z < HIZ;
#pragma unroll
            for (int k = 0; k < LOADS; ++k) {
                const int i = lid + k * GROUP;
                const int x = tx0 + i % PX;
                const int y = ty0 + i / PX;
                const bool needed = zin && s <= abs(reach[k]);
                const bool written = needed && reach[k] > 0 && zw;
                REAL v = q[s - 1][k][RZ]; /* interior boundary: the rim keeps it */
                if (written) {
                    REAL acc = (REAL)0;
                    STENCIL_TERMS(ZREG_TERM)
                    EXTRA_TERMS(TEMPORAL_EXTRA)
                    ADD_CONSTANT(acc);
                    v = acc;
                }
                if (s == TB) {
                    if (written) {
                        DST[IDX(z, y, x)] = STORE(v);
                    }
                } else {
                    now[k] = v;
                }
            }
            if (s < TB) {
                PUSH(s, z, now)
            }
        }
        stage += TB;
        if (more) {
            PUSH(0, p + 1, next)
        }
    }
}

#elif STREAM
/*
 * Streaming along z with TB time levels (3D): a work-group owns SBX x SBY outputs in x
 * and y and the ZC output planes z0 .. z0+ZC-1. It walks the input planes
 * z0-TB*RZ .. z0+ZC+TB*RZ-1, loading each once with an x/y halo of TB radii into a
 * ring of 2*RZ+1 planes (level 0). Once input plane p is loaded, level s = 1 .. TB
 * computes its plane p - s*RZ (whose z-neighbours at level s - 1 are then all there)
 * on the x/y region level TB still needs, the block widened by TB - s radii per side,
 * into level s's ring; level TB is written to the output. Every level keeps a ring of
 * 2*RZ+1 planes in local memory (levels 0 .. TB-1: TB*(2*RZ+1) planes of the block with
 * its halo); TB barriers per plane (one after each level below TB, one after the next
 * plane is stored: level TB writes global memory only). The next plane's
 * global loads are issued into registers before the levels are computed. Each step is
 * exactly one step of the other techniques, boundary included (a neighbour index is
 * clamped per axis with CLAMP; rim points keep their value with the interior
 * boundary).
 */
#define PX (SBX + 2 * HX)
#define PY (SBY + 2 * HY)
#define PLANE (PX * PY)
#define QZ (2 * RZ + 1)
#define GROUP (WX * WY)
#define LOADS ((PLANE + GROUP - 1) / GROUP) /* input elements per work-item and plane */
/* Input plane pp into registers (issued before the levels are computed, so the loads
   are in flight meanwhile), then into level 0's ring. */
#define LOAD_PLANE(pp)                                                                   \
    _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                                  \
        const int i = lid + k * GROUP;                                                   \
        const int xx = tx0 + i % PX;                                                     \
        const int yy = ty0 + i / PX;                                                     \
        next[k] = i < PLANE && (pp) >= 0 && (pp) < NZ &&                                 \
                          (inner || (xx >= 0 && xx < NX && yy >= 0 && yy < NY))          \
                      ? GLOBAL_READ(pp, yy, xx)                                          \
                      : (REAL)0;                                                         \
    }
#define STORE_PLANE(pp)                                                                  \
    if ((pp) >= 0 && (pp) < NZ) {                                                        \
        _Pragma("unroll") for (int k = 0; k < LOADS; ++k) {                              \
            const int i = lid + k * GROUP;                                               \
            if (i < PLANE) {                                                             \
                RING(0, pp)[i] = next[k];                                                \
            }                                                                            \
        }                                                                                \
    }
/* the ring slot of plane q (0 <= q < NZ) at level s */
#define RING(s, q) (levels + ((s) * QZ + (q) % QZ) * PLANE)
#define LEVEL_AT(zz, yy, xx) RING(s - 1, zz)[((yy) - ty0) * PX + ((xx) - tx0)]
#define TEMPORAL_TERM(dx, dy, dz, w)                                                     \
    {                                                                                    \
        const REAL v_ = LEVEL_AT(CLZ(z + (dz)), CLY(y + (dy)), CLX(x + (dx)));           \
        acc += (w) * F(v_);                                                              \
    }
#define TEMPORAL_EXTRA(f, dx, dy, dz, w)                                                 \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), x + (dx));                       \
        acc += (w) * F(v_);                                                              \
    }
/* A work-group whose plane with its halo lies inside the array in x and y: every point
   of every level is in the array and written, and no x/y neighbour index needs
   clamping; the term reads the same element at a constant offset. */
#define INNER_TERM(dx, dy, dz, w)                                                        \
    {                                                                                    \
        const REAL v_ = RING(s - 1, CLZ(z + (dz)))[at + (dy) * PX + (dx)];               \
        acc += (w) * F(v_);                                                              \
    }

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL levels[TB * QZ * PLANE];
    const int lid = (int)get_local_id(1) * WX + (int)get_local_id(0);
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int ty0 = (int)get_group_id(1) * SBY - HY;
    const int z0 = (int)get_group_id(2) * ZC;
    /* the same for the whole work-group: the fast path's branch does not diverge */
    const bool inner = tx0 >= 0 && tx0 + PX <= NX && ty0 >= 0 && ty0 + PY <= NY;

    REAL next[LOADS];
    LOAD_PLANE(z0 - HZ) /* level 0: the first input plane */
    STORE_PLANE(z0 - HZ)
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = z0 - HZ; p < z0 + ZC + HZ; ++p) {
        const bool more = p + 1 < z0 + ZC + HZ;
        if (more) {
            LOAD_PLANE(p + 1)
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int z = p - s * RZ; /* level s's plane of this step */
            const int mx = (TB - s) * RX;
            const int my = (TB - s) * RY;
            const int mz = (TB - s) * RZ;
            if (inner && z >= max(z0 - mz, 0) && z < min(z0 + ZC + mz, NZ)) {
                const int ex = SBX + 2 * mx;
                const int ey = SBY + 2 * my;
                const bool zw = z >= LOZ && z < HIZ; /* the plane is written */
                for (int i = lid; i < ex * ey; i += GROUP) {
                    const int ix = HX - mx + i % ex;
                    const int iy = HY - my + i / ex;
                    const int x = tx0 + ix;
                    const int y = ty0 + iy;
                    const int at = iy * PX + ix;
                    REAL v;
                    if (zw) {
                        REAL acc = (REAL)0;
                        STENCIL_TERMS(INNER_TERM)
                        EXTRA_TERMS(TEMPORAL_EXTRA)
                        ADD_CONSTANT(acc);
                        v = acc;
                    } else {
                        v = RING(s - 1, z)[at]; /* interior boundary: the rim keeps it */
                    }
                    if (s == TB) {
                        if (zw) {
                            DST[IDX(z, y, x)] = STORE(v);
                        }
                    } else {
                        RING(s, z)[at] = v;
                    }
                }
            } else if (z >= max(z0 - mz, 0) && z < min(z0 + ZC + mz, NZ)) {
                const int ex = SBX + 2 * mx;
                const int ey = SBY + 2 * my;
                for (int i = lid; i < ex * ey; i += GROUP) {
                    const int ix = HX - mx + i % ex;
                    const int iy = HY - my + i / ex;
                    const int x = tx0 + ix;
                    const int y = ty0 + iy;
                    if (x < 0 || x >= NX || y < 0 || y >= NY) {
                        continue; /* beyond the array: never read */
                    }
                    const int at = iy * PX + ix;
                    const bool written =
                        x >= LOX && x < HIX && y >= LOY && y < HIY && z >= LOZ && z < HIZ;
                    REAL v;
                    if (written) {
                        REAL acc = (REAL)0;
                        STENCIL_TERMS(TEMPORAL_TERM)
                        EXTRA_TERMS(TEMPORAL_EXTRA)
                        ADD_CONSTANT(acc);
                        v = acc;
                    } else {
                        v = RING(s - 1, z)[at]; /* interior boundary: the rim keeps it */
                    }
                    if (s == TB) {
                        if (written) {
                            DST[IDX(z, y, x)] = STORE(v);
                        }
                    } else {
                        RING(s, z)[at] = v;
                    }
                }
            }
            if (s < TB) { /* level TB writes global memory only (see the 2D kernel) */
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        if (more) { /* plane p + 1 replaces plane p - 2*RZ, no longer read */
            STORE_PLANE(p + 1)
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

#else /* tiles */
#define TTX (SBX + 2 * HX)
#define TTY (SBY + 2 * HY)
#define TTZ (SBZ + 2 * HZ)
#define TILE (TTX * TTY * TTZ)
#define GROUP (WX * WY * WZ)
/* level s - 1 at the global point (zz, yy, xx) of the tile */
#define LEVEL_AT(zz, yy, xx) prev[(((zz) - tz0) * TTY + ((yy) - ty0)) * TTX + ((xx) - tx0)]
#define TEMPORAL_TERM(dx, dy, dz, w)                                                     \
    {                                                                                    \
        const REAL v_ = LEVEL_AT(CLZ(z + (dz)), CLY(y + (dy)), CLX(x + (dx)));           \
        acc += (w) * F(v_);                                                              \
    }
#define TEMPORAL_EXTRA(f, dx, dy, dz, w)                                                 \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), x + (dx));                       \
        acc += (w) * F(v_);                                                              \
    }
/* A work-group whose tile (the block with its halo) lies inside the array: every point
   of every level is in the array and written, and no neighbour index needs clamping;
   the term reads the same element at a constant offset. */
#define INNER_TERM(dx, dy, dz, w)                                                        \
    {                                                                                    \
        const REAL v_ = prev[at + ((dz) * TTY + (dy)) * TTX + (dx)];                     \
        acc += (w) * F(v_);                                                              \
    }
/* SEP with TR > 1: a row's x-factor terms into its row sum, then the y-factor's terms
   over the row sums (h_[RY + r] is the work-item's row r); 3D: the row sums of each
   plane within RZ (h_[kz * (TR + 2 RY) + RY + r], kz = RZ + dz), each plane's y-sum
   into the z-factor's terms */
#define TILE_SEP_X(dx, w) hs_ += (w) * F(prev[at + (dx)]);
#define TILE_SEP_Y(dy, w) acc += (w) * h_[r + RY + (dy)];
#define TILE_SEP_YZ(dy, w) g_ += (w) * h_[kz_ * (TR + 2 * RY) + r + RY + (dy)];
#define TILE_SEP_Z(dz, w)                                                                \
    {                                                                                    \
        const int kz_ = RZ + (dz);                                                       \
        REAL g_ = (REAL)0;                                                               \
        SEP_Y_TERMS(TILE_SEP_YZ)                                                         \
        acc += (w) * g_;                                                                 \
    }

/* Point i of level s's region (ex x ey x ez, margins mx, my, mz): its position in the
   tile (ix, iy, iz) and in the array (x, y, z). */
#if ARRAY_DIMS == 3
#define LEVEL_POINT(i)                                                                   \
    const int ix = HX - mx + (i) % ex;                                                   \
    const int iy = HY - my + ((i) / ex) % ey;                                            \
    const int iz = HZ - mz + (i) / (ex * ey);                                            \
    const int x = tx0 + ix;                                                              \
    const int y = ty0 + iy;                                                              \
    const int z = tz0 + iz
#else /* one plane: no division by the plane */
#define LEVEL_POINT(i)                                                                   \
    const int ix = HX - mx + (i) % ex;                                                   \
    const int iy = HY - my + (i) / ex;                                                   \
    const int iz = 0;                                                                    \
    const int x = tx0 + ix;                                                              \
    const int y = ty0 + iy;                                                              \
    const int z = tz0 + iz
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL levels[2 * TILE];
    const int lid = ((int)get_local_id(2) * WY + (int)get_local_id(1)) * WX +
                    (int)get_local_id(0);
    const int tx0 = (int)get_group_id(0) * SBX - HX;
    const int ty0 = (int)get_group_id(1) * SBY - HY;
    const int tz0 = (int)get_group_id(2) * SBZ - HZ;
    /* the same for the whole work-group: the fast path's branch does not diverge */
    const bool inner = tx0 >= 0 && tx0 + TTX <= NX && ty0 >= 0 && ty0 + TTY <= NY &&
                       tz0 >= 0 && tz0 + TTZ <= NZ;

    /* Level 0: the input tile (zeros beyond the array, never read; clamp reads the
       edge point of the tile instead). */
    for (int i = lid; i < TILE; i += GROUP) {
        const int xx = tx0 + i % TTX;
#if ARRAY_DIMS == 3
        const int yy = ty0 + (i / TTX) % TTY;
        const int zz = tz0 + i / (TTX * TTY);
#else /* one plane: no division by the plane */
        const int yy = ty0 + i / TTX;
        const int zz = 0;
#endif
        const bool inside =
            inner || (xx >= 0 && xx < NX && yy >= 0 && yy < NY && zz >= 0 && zz < NZ);
        levels[i] = inside ? GLOBAL_READ(zz, yy, xx) : (REAL)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#pragma unroll
    for (int s = 1; s <= TB; ++s) {
        __local const REAL *prev = levels + ((s - 1) % 2) * TILE;
        __local REAL *next = levels + (s % 2) * TILE;
        /* the region of level s: the block widened by (TB - s) radii per side */
        const int mx = (TB - s) * RX;
        const int my = (TB - s) * RY;
        const int mz = (TB - s) * RZ;
        const int ex = SBX + 2 * mx;
        const int ey = SBY + 2 * my;
        const int ez = SBZ + 2 * mz;
#if TR > 1
        if (inner) {
            /* TR rows per work-item: the region's columns cut into segments of TR rows;
               each point's terms in the same order as below, all loads of the segment
               before its stores, so a row that several of its points read is loaded
               from local memory once. A column's last segment ends at the region's
               last row and skips the rows the segment before computed. */
            const int segs = (ey + TR - 1) / TR;
            for (int i = lid; i < ex * segs * ez; i += GROUP) {
                const int ix = HX - mx + i % ex;
#if ARRAY_DIMS == 3
                const int seg = (i / ex) % segs;
                const int iz = HZ - mz + i / (ex * segs);
#else
                const int seg = i / ex;
                const int iz = 0;
#endif
                const int r0 = min(seg * TR, ey - TR);
                /* rows of the segment before (none where TR divides the region) */
                const int skip = ey % TR == 0 ? 0 : seg * TR - r0;
                const int x = tx0 + ix;
                const int z = tz0 + iz;
                const int y0 = ty0 + HY - my + r0;
                const int at0 = (iz * TTY + HY - my + r0) * TTX + ix;
#if SEP /* each row's x-terms summed once: the TR rows and the RY rows either side,
           in 3D of each plane within RZ */
                REAL h_[(2 * RZ + 1) * (TR + 2 * RY)];
#pragma unroll
                for (int kz = 0; kz < 2 * RZ + 1; ++kz) {
#pragma unroll
                    for (int r = 0; r < TR + 2 * RY; ++r) {
                        const int at = at0 + ((kz - RZ) * TTY + r - RY) * TTX;
                        REAL hs_ = (REAL)0;
                        SEP_X_TERMS(TILE_SEP_X)
                        h_[kz * (TR + 2 * RY) + r] = hs_;
                    }
                }
#endif
                REAL row_[TR];
#pragma unroll
                for (int r = 0; r < TR; ++r) {
                    const int at = at0 + r * TTX;
                    const int y = y0 + r;
                    REAL acc = (REAL)0;
#if SEP && ARRAY_DIMS == 3
                    SEP_Z_TERMS(TILE_SEP_Z)
#elif SEP
                    SEP_Y_TERMS(TILE_SEP_Y)
#else
                    STENCIL_TERMS(INNER_TERM)
#endif
                    EXTRA_TERMS(TEMPORAL_EXTRA)
                    ADD_CONSTANT(acc);
                    row_[r] = acc;
                }
#pragma unroll
                for (int r = 0; r < TR; ++r) {
                    if (r >= skip) {
                        if (s == TB) {
                            DST[IDX(z, y0 + r, x)] = STORE(row_[r]);
                        } else {
                            next[at0 + r * TTX] = row_[r];
                        }
                    }
                }
            }
        } else
#else
        if (inner) {
            for (int i = lid; i < ex * ey * ez; i += GROUP) {
                LEVEL_POINT(i);
                const int at = (iz * TTY + iy) * TTX + ix;
                REAL acc = (REAL)0;
                STENCIL_TERMS(INNER_TERM)
                EXTRA_TERMS(TEMPORAL_EXTRA)
                ADD_CONSTANT(acc);
                if (s == TB) {
                    DST[IDX(z, y, x)] = STORE(acc);
                } else {
                    next[at] = acc;
                }
            }
        } else
#endif
        for (int i = lid; i < ex * ey * ez; i += GROUP) {
            LEVEL_POINT(i);
            if (x < 0 || x >= NX || y < 0 || y >= NY || z < 0 || z >= NZ) {
                continue; /* beyond the array: never read */
            }
            const int at = (iz * TTY + iy) * TTX + ix;
            REAL v;
            if (x >= LOX && x < HIX && y >= LOY && y < HIY && z >= LOZ && z < HIZ) {
                REAL acc = (REAL)0;
                STENCIL_TERMS(TEMPORAL_TERM)
                EXTRA_TERMS(TEMPORAL_EXTRA)
                ADD_CONSTANT(acc);
                v = acc;
            } else {
                v = prev[at]; /* interior boundary: the rim keeps its value */
            }
            if (s == TB) {
                if (x >= LOX && x < HIX && y >= LOY && y < HIY && z >= LOZ && z < HIZ) {
                    DST[IDX(z, y, x)] = STORE(v);
                }
            } else {
                next[at] = v;
            }
        }
        if (s < TB) { /* after level TB nothing reads the tiles again */
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}
#endif /* tiles */

#elif STREAM && ARRAY_DIMS == 2
/*
 * Streaming along y (2D arrays). Work-item (gx, gy) owns, per block cx of its CX blocks
 * in x, the BX adjacent outputs x0 .. x0+BX-1 (x0 = gx0 + cx*WX*BX + lx*BX, as in the
 * other techniques) of the ZC output rows y0 .. y0+ZC-1 (y0 = gy*ZC). It walks the
 * input rows y0-RY .. y0+ZC+RY-1 in order, loading each row's segment of BX + 2*HXS
 * values once into registers (no local memory, no barrier). Input row p feeds output
 * rows p-RY .. p+RY; per output point a queue of QY = 2*RY+1 partial sums in registers
 * holds those rows' sums. Once row p is added, the oldest sum (row p-RY) is complete:
 * it is written and the queue moves on. The sums run over y in increasing order and,
 * per row, over the terms in their listed order: the reference's order, for offsets
 * sorted by y. Rows past NY (the chunk need not divide NY) are neither read nor
 * written.
 *
 * VX > 1 (vector loads): the segment's halo HXS is RX rounded up to whole vectors, so
 * the segment starts and ends on a multiple of VX (x0, NX and every row start are
 * multiples of VX) and a segment inside the array is (BX + 2*HXS) / VX aligned vector
 * loads: consecutive work-items read consecutive vectors, each load instruction of a
 * wavefront covers whole memory segments. They are read through a pointer to the vector
 * type, whose alignment tells the compiler that one wide load is safe (vloadn promises
 * only the alignment of the element type, and some compilers then load value by value). A segment that crosses an edge is loaded
 * value by value, clamped (CLAMP) or zero beyond the edge (ZERO; interior: those values
 * feed only outputs that are not written); with ZERO, rows beyond an edge are skipped. The BX outputs of a row are stored as
 * BX / VX vectors when all of them are written, else value by value.
 *
 * Integer elements (INT_ELEMS): each row segment is converted to REAL as it is loaded
 * (VIN; values no term reads are never converted: the compiler drops them), so each
 * input value is converted once per chunk, not once per output row that reads it; a
 * vector of results is stored through VOUT. Each output sums its terms in y order, so
 * the results are the scalar code's bits when the terms are listed in y order (the
 * renderer offers streaming to such definitions only).
 */
#define QY (2 * RY + 1)
#if SEP /* separable weights: a row's x-terms summed once, the sum fed to the queue */
#define SEP_X_TERM(dx, w) h_ += (w) * F(seg[b + HXS + (dx)]);
#define SEP_Y_TERM(dy, w) q[cx][b][RY - (dy)] += (w) * h_;
#endif
#if VX > 1
#define HXS ((RX + VX - 1) / VX * VX) /* the segment's halo per side, whole vectors */
#else
#define HXS RX
#endif
#define SEG (BX + 2 * HXS) /* one row segment of a block */
#define ROW_TERM(dx, dy, dz, w)                                                          \
    {                                                                                    \
        const REAL v_ = seg[b + HXS + (dx)];                                             \
        q[cx][b][RY - (dy)] += (w) * F(v_);                                              \
    }
#define ROW_EXTRA(f, dx, dy, dz, w)                                                      \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, 0, y + (dy), x + (dx));                              \
        r += (w) * F(v_);                                                                \
    }
#if defined(NO_EXTRA_TERMS) && !defined(CONSTANT_TERM)
#define ROW_OUTPUT(r, cx, b) const REAL r = q[cx][b][0]
#else
#define ROW_OUTPUT(r, cx, b)                                                             \
    REAL r = q[cx][b][0];                                                                \
    EXTRA_TERMS(ROW_EXTRA)                                                               \
    ADD_CONSTANT(r)
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    WQ_LOAD() /* the primary field's coefficients, read once */
    const int lx = (int)get_local_id(0);
    const int gx0 = (int)get_group_id(0) * (WX * BX * CX) + lx * BX;
    WRITE_RIM() /* RIM_WRITE: the rim, written apart */
    const int y0 = (int)get_global_id(1) * ZC;
#if CLAMP && !ZERO /* rows beyond an edge are the edge row, loaded again */
    const int first = y0 - RY;
    const int last = min(y0 + ZC, NY) + RY; /* one past the last row read */
#else
    const int first = max(y0 - RY, 0);
    const int last = min(y0 + ZC + RY, NY); /* one past the last row read */
#endif

    REAL q[CX][BX][QY];
#pragma unroll
    for (int cx = 0; cx < CX; ++cx) {
#pragma unroll
        for (int b = 0; b < BX; ++b) {
#pragma unroll
            for (int k = 0; k < QY; ++k) {
                q[cx][b][k] = (REAL)0;
            }
        }
    }

    UNROLL_BY(QUEUE_Y)
    for (int t = 0; t < ZC + 2 * RY; ++t) {
        const int p = y0 - RY + t; /* the input row of this step */
        if (p >= first && p < last) {
            __global const ELEM *row = SRC + SIDX(0, SCLY(p), 0);
#pragma unroll
            for (int cx = 0; cx < CX; ++cx) {
                const int xs0 = gx0 + cx * (WX * BX) - HXS; /* the segment's first x */
                REAL seg[SEG];
                /* the whole segment lies inside (a padded row: inside its pad) */
                if (xs0 >= -SRC_PAD_X && xs0 + SEG <= NX + SRC_PAD_X) {
#if VX > 1
#pragma unroll
                    for (int i = 0; i < SEG / VX; ++i) {
                        VSTORE(VIN(((__global const VE *)row)[xs0 / VX + i]), i, seg);
                    }
#else
#pragma unroll
                    for (int i = 0; i < SEG; ++i) {
                        seg[i] = row[xs0 + i];
                    }
#endif
                } else {
#pragma unroll
                    for (int i = 0; i < SEG; ++i) {
#if CLAMP && !ZERO
                        seg[i] = row[SCLX(xs0 + i)];
#else /* interior (values that feed no written point) and zero: 0 beyond an edge */
                        const int xx = xs0 + i;
                        seg[i] = xx >= 0 && xx < NX ? row[xx] : (REAL)0;
#endif
                    }
                }
#pragma unroll
                for (int b = 0; b < BX; ++b) {
#if SEP
                    REAL h_ = (REAL)0;
                    SEP_X_TERMS(SEP_X_TERM)
                    SEP_Y_TERMS(SEP_Y_TERM)
#else
                    STENCIL_TERMS(ROW_TERM_Q)
#endif
                }
            }
        }
        /* Output row p - RY has every contribution: write it, advance the queue. */
        const int y = p - RY;
        if (t >= 2 * RY && y >= LOY && y < HIY) {
#pragma unroll
            for (int cx = 0; cx < CX; ++cx) {
                const int x0 = gx0 + cx * (WX * BX);
#if VX > 1
                if (x0 >= LOX && x0 + BX <= HIX) { /* every output of the block: vectors */
                    REAL out[BX];
#pragma unroll
                    for (int b = 0; b < BX; ++b) {
                        const int x = x0 + b;
                        ROW_OUTPUT(r, cx, b);
                        out[b] = r;
                    }
#pragma unroll
                    for (int v = 0; v < BX / VX; ++v) {
                        ((__global VO *)(DST + IDX(0, y, 0)))[x0 / VX + v] = VOUT(VLOAD(v, out));
                    }
                } else
#endif
                {
#pragma unroll
                    for (int b = 0; b < BX; ++b) {
                        const int x = x0 + b;
                        if (x >= LOX && x < HIX) {
                            ROW_OUTPUT(r, cx, b);
                            DST[IDX(0, y, x)] = STORE(r);
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int cx = 0; cx < CX; ++cx) {
#pragma unroll
            for (int b = 0; b < BX; ++b) {
#pragma unroll
                for (int k = 0; k + 1 < QY; ++k) {
                    q[cx][b][k] = q[cx][b][k + 1];
                }
                q[cx][b][QY - 1] = (REAL)0;
            }
        }
    }
}

#elif STREAM
/*
 * Streaming along z (2.5D blocking). A work-group owns a tile of SX x SY outputs in
 * x and y (work-item lx computes the BX adjacent outputs lx*BX.. of each of its CX
 * blocks in x, ly the rows ly + cy*WY) and the ZC output planes z0 .. z0+ZC-1. It
 * walks the input planes z0-RZ .. z0+ZC+RZ-1 in order, loading each once, with its
 * x/y halo, into local memory (consecutive work-items read consecutive x: coalesced).
 * Input plane p feeds output planes p-RZ .. p+RZ; each work-item keeps, per output
 * point, a queue of QZ = 2*RZ+1 partial sums for those planes in registers. Once
 * plane p is added, the oldest sum (plane p-RZ) is complete: it is written and the
 * queue moves on. The sums run over z in increasing order and, per plane, over the
 * terms in their listed order: the reference's order, for offsets sorted by z.
 *
 * Two plane buffers alternate, so one barrier per plane suffices, and the next
 * plane's global loads are issued into registers before the current plane is
 * computed, so they are in flight while it is.
 */
#define SX (WX * BX * CX)
#define SY (WY * CY)
#define PX (SX + 2 * RX)
#define PY (SY + 2 * RY)
#define PLANE (PX * PY)
#define GROUP (WX * WY)
#define LOADS ((PLANE + GROUP - 1) / GROUP) /* plane elements per work-item */
#define QZ (2 * RZ + 1)
#define OUTS (CY * CX * BX) /* outputs per work-item and plane */

#define STREAM_TERM(dx, dy, dz, w)                                                       \
    {                                                                                    \
        const REAL v_ = buf[(row + (dy)) * PX + col + (dx)];                             \
        q[o][RZ - (dz)] += (w) * F(v_);                                                  \
    }
#define STREAM_EXTRA(f, dx, dy, dz, w)                                                   \
    {                                                                                    \
        const REAL v_ = FIELD_AT(f, z + (dz), y + (dy), x + (dx));                       \
        r += (w) * F(v_);                                                                \
    }
#if BORDER /* planes beyond an edge are the planes the boundary maps them to */
#define PLANE_AT(p) CLZ(p)
#elif CLAMP && !ZERO /* planes beyond an edge are the edge plane, loaded again */
#define PLANE_AT(p) min(max((p), 0), NZ - 1)
#else
#define PLANE_AT(p) (p)
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void KERNEL_NAME(KERNEL_ARGS)
{
    __local REAL planes[2 * PLANE];
    WRITE_RIM() /* RIM_WRITE: the rim, written apart */
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int lid = ly * WX + lx;
    const int gx0 = (int)get_group_id(0) * SX;
    const int gy0 = (int)get_group_id(1) * SY;
    const int z0 = (int)get_group_id(2) * ZC;

    /* Where this work-item's share of a plane lies: fixed for every plane. */
    int from[LOADS];
    bool take[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        const int i = lid + k * GROUP;
        const int xx = gx0 - RX + i % PX;
        const int yy = gy0 - RY + i / PX;
#if CLAMP && !ZERO
        take[k] = i < PLANE;
        from[k] = CLY(yy) * NX + CLX(xx);
#else
        take[k] = i < PLANE && xx >= 0 && xx < NX && yy >= 0 && yy < NY;
        from[k] = yy * NX + xx;
#endif
    }

    REAL q[OUTS][QZ];
#pragma unroll
    for (int o = 0; o < OUTS; ++o) {
#pragma unroll
        for (int k = 0; k < QZ; ++k) {
            q[o][k] = (REAL)0;
        }
    }

    /* The first plane read, loaded before the walk starts. */
#if CLAMP && !ZERO
    const int first = z0 - RZ;
    const int last = z0 + ZC + RZ; /* one past the last plane read */
#else
    const int first = max(z0 - RZ, 0);
    const int last = min(z0 + ZC + RZ, NZ); /* one past the last plane read */
#endif
    REAL next[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        next[k] = take[k] ? SRC[(idx_t)PLANE_AT(first) * (NX * NY) + from[k]] : (REAL)0;
    }
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
        const int i = lid + k * GROUP;
        if (i < PLANE) {
            planes[i] = next[k];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int t = 0; t < ZC + 2 * RZ; ++t) {
        const int p = z0 - RZ + t; /* the input plane of this step */
        if (p >= first && p < last) {
            __local const REAL *buf = planes + (p - first) % 2 * PLANE;
            const bool more = p + 1 < last;
            if (more) {
#pragma unroll
                for (int k = 0; k < LOADS; ++k) {
                    next[k] =
                        take[k] ? SRC[(idx_t)PLANE_AT(p + 1) * (NX * NY) + from[k]] : (REAL)0;
                }
            }
#pragma unroll
            for (int cy = 0; cy < CY; ++cy) {
#pragma unroll
                for (int cx = 0; cx < CX; ++cx) {
#pragma unroll
                    for (int b = 0; b < BX; ++b) {
                        const int o = (cy * CX + cx) * BX + b;
                        const int row = ly + cy * WY + RY;
                        const int col = cx * (WX * BX) + lx * BX + b + RX;
                        STENCIL_TERMS(STREAM_TERM)
                    }
                }
            }
            if (more) {
                __local REAL *fill = planes + (p + 1 - first) % 2 * PLANE;
#pragma unroll
                for (int k = 0; k < LOADS; ++k) {
                    const int i = lid + k * GROUP;
                    if (i < PLANE) {
                        fill[i] = next[k];
                    }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        /* Output plane p - RZ has every contribution: write it, advance the queue. */
        if (t >= 2 * RZ) {
            const int z = p - RZ;
            if (z >= LOZ && z < HIZ) {
#pragma unroll
                for (int cy = 0; cy < CY; ++cy) {
                    const int y = gy0 + cy * WY + ly;
#pragma unroll
                    for (int cx = 0; cx < CX; ++cx) {
#pragma unroll
                        for (int b = 0; b < BX; ++b) {
                            const int x = gx0 + cx * (WX * BX) + lx * BX + b;
                            if (y >= LOY && y < HIY && x >= LOX && x < HIX) {
#if defined(NO_EXTRA_TERMS) && !defined(CONSTANT_TERM)
                                DST[IDX(z, y, x)] = STORE(q[(cy * CX + cx) * BX + b][0]);
#else
                                REAL r = q[(cy * CX + cx) * BX + b][0];
                                EXTRA_TERMS(STREAM_EXTRA)
                                ADD_CONSTANT(r);
                                DST[IDX(z, y, x)] = STORE(r);
#endif
                            }
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int o = 0; o < OUTS; ++o) {
#pragma unroll
            for (int k = 0; k + 1 < QZ; ++k) {
                q[o][k] = q[o][k + 1];
            }
            q[o][QZ - 1] = (REAL)0;
        }
    }
}

#else /* the four techniques of seed 001 */
/* A work-item's rows in y and z: BY x BZ adjacent ones (block merging in y and z, the
   vector technique with RIM=1), else one, spelled as before BY and BZ existed. A block
   of rows is skipped when none of its rows is written. */
#if BY > 1 || BZ > 1
#define TILE_Y (WY * BY)
#define TILE_Z (WZ * BZ)
#define ROW_Y(ly) ((ly) * BY)
#define ROW_Z(lz) ((lz) * BZ)
#define ROWS_WRITTEN(zz, yy) ((zz) + BZ > LOZ && (zz) < HIZ && (yy) + BY > LOY && (yy) < HIY)
#else
#define TILE_Y WY
#define TILE_Z WZ
#define ROW_Y(ly) (ly)
#define ROW_Z(lz) (lz)
#define ROWS_WRITTEN(zz, yy) ((zz) >= LOZ && (zz) < HIZ && (yy) >= LOY && (yy) < HIY)
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void KERNEL_NAME(KERNEL_ARGS)
{
    WQ_LOAD() /* the primary field's coefficients, read once */
    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    WRITE_RIM() /* RIM_WRITE: the rim, written apart */
    const int lz = (int)get_local_id(2);
    /* First output of this work-item in the work-group's first block. */
    const int gx0 = (int)get_group_id(0) * (WX * BX * CX);
    const int gy0 = (int)get_group_id(1) * (TILE_Y * CY);
    const int gz0 = (int)get_group_id(2) * (TILE_Z * CZ);
#if LOCAL
    __local REAL tile[TZ][TY][TX];
    const int lid = (lz * WY + ly) * WX + lx;
#endif

    for (int cz = 0; cz < CZ; ++cz) {
        for (int cy = 0; cy < CY; ++cy) {
            for (int cx = 0; cx < CX; ++cx) {
                const int bx0 = gx0 + cx * (WX * BX);
                const int by0 = gy0 + cy * TILE_Y;
                const int bz0 = gz0 + cz * TILE_Z;
                const int z = bz0 + ROW_Z(lz); /* the first of the work-item's BZ x BY rows */
                const int y = by0 + ROW_Y(ly);
#if LOCAL
                const int tx0 = bx0 - RX;
                const int ty0 = by0 - RY;
                const int tz0 = bz0 - RZ;
                barrier(CLK_LOCAL_MEM_FENCE); /* the previous block is done reading */
                for (int i = lid; i < TX * TY * TZ; i += WX * WY * WZ) {
                    const int ix = i % TX;
                    const int iy = (i / TX) % TY;
                    const int iz = i / (TX * TY);
                    const int xx = tx0 + ix;
                    const int yy = ty0 + iy;
                    const int zz = tz0 + iz;
#if CLAMP && !ZERO
                    tile[iz][iy][ix] = GLOBAL_READ(SCLZ(zz), SCLY(yy), SCLX(xx));
#else /* interior (values that feed no written point) and zero: 0 beyond an edge */
                    const bool inside =
                        xx >= 0 && xx < NX && yy >= 0 && yy < NY && zz >= 0 && zz < NZ;
                    tile[iz][iy][ix] = inside ? GLOBAL_READ(zz, yy, xx) : (REAL)0;
#endif
                }
                barrier(CLK_LOCAL_MEM_FENCE);
#endif
                if (ROWS_WRITTEN(z, y)) {
                    for (int b = 0; b < BX; b += VX) {
                        const int x = bx0 + lx * BX + b;
#if RIM
#if CLAMP
                        /* XEDGE_PATHS: the clamp boundary's code for a vector twice, xe_
                           (the vector touches an x edge) a constant in each copy */
#pragma unroll
                        for (int xe_ = 0; xe_ < 2; ++xe_)
                            if (xe_ == (int)XEDGE(x))
#endif
                        {
                            /* every vector whole (VCL): no branch around the terms, one
                               stretch of code for every block; measured on the H100 at
                               512^3 (benchmarks/results/onestep/vec-edges/): heat3d,
                               WX 32, WY 8, BX = VX = 2, CZ 4, 0.421 -> 0.380 ms. The
                               BZ x BY rows' terms are one stretch too, so each row of
                               input they share is loaded once. */
                            const int xv = x / VX;
#if RIN
                            /* the interior path: a block whose rows and their neighbour
                               rows lie inside reads through one pointer per field; one at
                               a y or z rim computes its rows one at a time (measured on
                               the H200 at 512^3: benchmarks/results/h200-limit/) */
                            if (RIM_ROWS_INSIDE(y, z)) {
                                const int z0_ = z;
                                const int y0_ = y;
                                __global const VE *s_ = (__global const VE *)(SRC + S_FIRST(z0_, y0_));
                                __global VO *d_ = (__global VO *)(DST + IDX(z0_, y0_, 0));
#if SEP
                                VT rows_[BZ + 2 * RZ][BY + 2 * RY];
#pragma unroll
                                for (int jz = 0; jz < BZ + 2 * RZ; ++jz) {
#pragma unroll
                                    for (int jy = 0; jy < BY + 2 * RY; ++jy) {
                                        const int oz_ = jz - RZ;
                                        const int oy_ = jy - RY;
                                        VT acc = (VT)((REAL)0);
                                        SEP_X_TERMS(IN_SEP_X)
                                        rows_[jz][jy] = acc;
                                    }
                                }
                                VT planes_[BZ + 2 * RZ][BY];
#pragma unroll
                                for (int jz = 0; jz < BZ + 2 * RZ; ++jz) {
#pragma unroll
                                    for (int iy = 0; iy < BY; ++iy) {
                                        VT acc = (VT)((REAL)0);
                                        SEP_Y_TERMS(SEP_VECTOR_Y)
                                        planes_[jz][iy] = acc;
                                    }
                                }
#endif
#pragma unroll
                                for (int iz = 0; iz < BZ; ++iz) {
#pragma unroll
                                    for (int iy = 0; iy < BY; ++iy) {
                                        const int oz_ = iz;
                                        const int oy_ = iy;
                                        VT acc = (VT)((REAL)0);
#if SEP
                                        SEP_Z_TERMS(SEP_VECTOR_Z)
#else
                                        STENCIL_TERMS(IN_TERM_Q)
#endif
                                        EXTRA_TERMS(IN_EXTRA)
                                        ADD_CONSTANT(acc);
                                        if (x >= RX && x + VX <= NX - RX) {
                                            (d_ + xv)[IN_ROW(0, 0)] = VOUT(acc);
                                        } else { /* a vector at the x rim: its lanes */
                                            __global OUT_ELEM *l_ = DST + IDX(z0_ + oz_, y0_ + oy_, x);
                                            STORE_X_RIM(l_, acc, z0_ + oz_, y0_ + oy_, x);
                                        }
                                    }
                                }
                            } else {
                                /* a block at a y or z rim: one output row at a time (the
                                   loop kept rolled), so this path's registers are one
                                   row's, not the block's (a kernel's register count is
                                   its most demanding path's, and it sets how many
                                   work-groups an SM holds); the same terms, clamps and
                                   sums in the same order as the block's path */
                                UNROLL_BY(1)
                                for (int r_ = 0; r_ < BZ * BY; ++r_) {
                                    const int iz = r_ / BY;
                                    const int iy = r_ % BY;
                                    const int z_ = z + iz;
                                    const int y_ = y + iy;
                                    if (!(BY * BZ == 1 ||
                                          (z_ >= LOZ && z_ < HIZ && y_ >= LOY && y_ < HIY))) {
                                        continue;
                                    }
                                    VT out_;
#if SEP
                                    /* rl_[kz][ky]: the x-sum of input row (z_ + kz - RZ,
                                       y_ + ky - RY); pl_[kz]: their y-sum */
                                    VT rl_[2 * RZ + 1][2 * RY + 1];
#pragma unroll
                                    for (int kz = 0; kz < 2 * RZ + 1; ++kz) {
#pragma unroll
                                        for (int ky = 0; ky < 2 * RY + 1; ++ky) {
                                            const int z = z_ + kz - RZ;
                                            const int y = y_ + ky - RY;
                                            VT acc = (VT)((REAL)0);
                                            SEP_X_TERMS(SEP_VECTOR_X)
                                            rl_[kz][ky] = acc;
                                        }
                                    }
                                    VT pl_[2 * RZ + 1];
#pragma unroll
                                    for (int kz = 0; kz < 2 * RZ + 1; ++kz) {
                                        VT acc = (VT)((REAL)0);
                                        SEP_Y_TERMS(ROLLED_SEP_Y)
                                        pl_[kz] = acc;
                                    }
#endif
                                    {
                                        const int z = z_;
                                        const int y = y_;
                                        VT acc = (VT)((REAL)0);
#if SEP
                                        SEP_Z_TERMS(ROLLED_SEP_Z)
#else
                                        STENCIL_TERMS(VECTOR_TERM_Q)
#endif
                                        EXTRA_TERMS(VECTOR_EXTRA)
                                        ADD_CONSTANT(acc);
                                        out_ = acc;
                                    }
                                    if (x >= RX && x + VX <= NX - RX) {
                                        ((__global VO *)(DST + IDX(z_, y_, 0)))[xv] = VOUT(out_);
                                    } else {
                                        __global OUT_ELEM *d_ = DST + IDX(z_, y_, x);
                                        STORE_X_RIM(d_, out_, z_, y_, x);
                                    }
                                }
                            } /* RIM_ROWS_INSIDE */
#else
                            VT accs[BZ][BY];
#if SEP
                            /* separable weights, axis by axis: each of the (BZ + 2 RZ) x
                               (BY + 2 RY) input rows' x-terms summed once (u), the row
                               sums combined in y (v) for each of the block's rows, then
                               in z (s) */
                            VT rows_[BZ + 2 * RZ][BY + 2 * RY];
#pragma unroll
                            for (int jz = 0; jz < BZ + 2 * RZ; ++jz) {
#pragma unroll
                                for (int jy = 0; jy < BY + 2 * RY; ++jy) {
                                    const int z_ = z + jz - RZ;
                                    const int y_ = y + jy - RY;
                                    {
                                        const int z = z_;
                                        const int y = y_;
                                        VT acc = (VT)((REAL)0);
                                        SEP_X_TERMS(SEP_VECTOR_X)
                                        rows_[jz][jy] = acc;
                                    }
                                }
                            }
                            VT planes_[BZ + 2 * RZ][BY];
#pragma unroll
                            for (int jz = 0; jz < BZ + 2 * RZ; ++jz) {
#pragma unroll
                                for (int iy = 0; iy < BY; ++iy) {
                                    VT acc = (VT)((REAL)0);
                                    SEP_Y_TERMS(SEP_VECTOR_Y)
                                    planes_[jz][iy] = acc;
                                }
                            }
#endif
#pragma unroll
                            for (int iz = 0; iz < BZ; ++iz) {
#pragma unroll
                                for (int iy = 0; iy < BY; ++iy) {
                                    const int z_ = z + iz;
                                    const int y_ = y + iy;
                                    {
                                        const int z = z_;
                                        const int y = y_;
                                        VT acc = (VT)((REAL)0);
#if SEP
                                        SEP_Z_TERMS(SEP_VECTOR_Z)
#else
                                        STENCIL_TERMS(VECTOR_TERM_Q)
#endif
                                        EXTRA_TERMS(VECTOR_EXTRA)
                                        ADD_CONSTANT(acc);
                                        accs[iz][iy] = acc;
                                    }
                                }
                            }
#pragma unroll
                            for (int iz = 0; iz < BZ; ++iz) {
#pragma unroll
                                for (int iy = 0; iy < BY; ++iy) {
                                    const int z_ = z + iz;
                                    const int y_ = y + iy;
                                    if (BY * BZ == 1 ||
                                        (z_ >= LOZ && z_ < HIZ && y_ >= LOY && y_ < HIY)) {
                                        if (x >= RX && x + VX <= NX - RX) {
                                            ((__global VO *)(DST + IDX(z_, y_, 0)))[xv] =
                                                VOUT(accs[iz][iy]);
                                        } else {
                                            __global OUT_ELEM *d_ = DST + IDX(z_, y_, x);
                                            STORE_X_RIM(d_, accs[iz][iy], z_, y_, x);
                                        }
                                    }
                                }
                            }
#endif
                        }
#elif VX > 1
                        if (x >= RX && x + VX <= NX - RX) {
                            /* the vectors read lie in the row: x >= RX and x + VX <=
                               NX - RX hold for x and NX rounded to whole vectors */
                            const int xv = x / VX;
                            VT acc = (VT)((REAL)0);
                            STENCIL_TERMS(VECTOR_TERM_Q)
                            EXTRA_TERMS(VECTOR_EXTRA)
                            ADD_CONSTANT(acc);
                            ((__global VO *)(DST + IDX(z, y, 0)))[xv] = VOUT(acc);
                        } else {
                            /* a vector that touches the boundary: lane by lane */
                            for (int lane = 0; lane < VX; ++lane) {
                                const int xs = x + lane;
                                if (xs >= LOX && xs < HIX) {
                                    REAL acc = (REAL)0;
                                    STENCIL_TERMS(SCALAR_TERM_Q)
                                    EXTRA_TERMS(SCALAR_EXTRA)
                                    ADD_CONSTANT(acc);
                                    DST[IDX(z, y, xs)] = STORE(acc);
                                }
                            }
                        }
#else
                        const int xs = x;
                        if (xs >= LOX && xs < HIX) {
                            REAL acc = (REAL)0;
#if CLAMP
                            if (INSIDE(z, y, xs)) {
                                STENCIL_TERMS(INSIDE_TERM_Q)
                                EXTRA_TERMS(INSIDE_EXTRA)
                            } else {
                                STENCIL_TERMS(SCALAR_TERM_Q)
                                EXTRA_TERMS(SCALAR_EXTRA)
                            }
#else
                            STENCIL_TERMS(SCALAR_TERM_Q)
                            EXTRA_TERMS(SCALAR_EXTRA)
#endif
                            ADD_CONSTANT(acc);
                            DST[IDX(z, y, xs)] = STORE(acc);
                        }
#endif
                    }
                }
            }
        }
    }
}
#endif /* TB > 1, STREAM (2D, 3D) */
