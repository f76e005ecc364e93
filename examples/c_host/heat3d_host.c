/* A C application using a gtune bundle: heat3d tuned at several sizes, chosen at run
 * time for this device and size by gtune_select, built with OpenCL, run for a few
 * time steps and checked against a plain C loop.
 *
 *   gtune run stencils/heat3d.cl --size 64x64x64
 *   gtune export stencils/heat3d.cl --sizes all -o tuned/
 *   cc -std=c99 -O2 -I tuned -o heat3d_host examples/c_host/heat3d_host.c -lOpenCL
 *   ./heat3d_host tuned/ 64 64 64 [steps] [platform] [device]
 *
 * (examples/c_host/Makefile does the build: make BUNDLE=tuned/.) The first line it
 * prints says what it chose: "choice: exact|nearest|default config N (...)". It exits
 * with 0 when the result matches the reference, 1 when it does not, 2 on an error.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat3d_bundle.h"

#define CHECK(call)                                                              \
    do {                                                                         \
        cl_int err_ = (call);                                                    \
        if (err_ != CL_SUCCESS) {                                                \
            fprintf(stderr, "error: %s failed with OpenCL error %d\n", #call, (int)err_); \
            exit(2);                                                             \
        }                                                                        \
    } while (0)

static const char *const HOW[] = {"exact", "nearest", "default"};

/* One explicit heat3d step as the original kernel computes it: interior points
   u' = 1/4 u + 1/8 (sum of the 6 neighbours); the boundary keeps the input. */
static void reference_step(const float *src, float *dst, long nx, long ny, long nz) {
    long x, y, z;
    memcpy(dst, src, (size_t)(nx * ny * nz) * sizeof(float));
    for (z = 1; z < nz - 1; z++)
        for (y = 1; y < ny - 1; y++)
            for (x = 1; x < nx - 1; x++) {
                long i = (z * ny + y) * nx + x;
                float n = src[i - 1] + src[i + 1] + src[i - nx] + src[i + nx] +
                          src[i - nx * ny] + src[i + nx * ny];
                dst[i] = 0.25f * src[i] + 0.125f * n;
            }
}

static char *read_file(const char *folder, const char *name, size_t *length) {
    char path[4096];
    FILE *f;
    char *text;
    long n;
    snprintf(path, sizeof path, "%s/%s", folder, name);
    f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
        fprintf(stderr, "error: %s: cannot read the kernel source\n", path);
        exit(2);
    }
    rewind(f);
    text = malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "error: %s: cannot read the kernel source\n", path);
        exit(2);
    }
    text[n] = '\0';
    fclose(f);
    *length = (size_t)n;
    return text;
}

static cl_device_id pick_device(int platform, int device) {
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    cl_uint np = 0, nd = 0;
    CHECK(clGetPlatformIDs(16, platforms, &np));
    if (platform < 0 || (cl_uint)platform >= np) {
        fprintf(stderr, "error: no OpenCL platform %d (%u found)\n", platform, np);
        exit(2);
    }
    CHECK(clGetDeviceIDs(platforms[platform], CL_DEVICE_TYPE_ALL, 16, devices, &nd));
    if (device < 0 || (cl_uint)device >= nd) {
        fprintf(stderr, "error: no device %d on platform %d (%u found)\n", device, platform, nd);
        exit(2);
    }
    return devices[device];
}

static cl_kernel build(cl_context ctx, cl_device_id dev, const char *folder,
                       const gtune_choice *c) {
    size_t length;
    cl_int err;
    char *source = read_file(folder, c->source_file, &length);
    const char *sources[1];
    cl_program program;
    cl_kernel kernel;
    sources[0] = source;
    program = clCreateProgramWithSource(ctx, 1, sources, &length, &err);
    CHECK(err);
    if (clBuildProgram(program, 1, &dev, c->build_options, NULL, NULL) != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        log[sizeof log - 1] = '\0';
        fprintf(stderr, "error: %s does not build: %s\n", c->source_file, log);
        exit(2);
    }
    kernel = clCreateKernel(program, c->kernel_name, &err);
    CHECK(err);
    clReleaseProgram(program);
    free(source);
    return kernel;
}

/* Runs `steps` steps on the device from `u0`; the result is left in `out`. */
static void run_device(cl_device_id dev, const char *folder, const gtune_choice *c,
                       const float *u0, float *out, long cells, int steps) {
    cl_int err;
    size_t bytes = (size_t)cells * sizeof(float);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem buf[2];
    int s;
    CHECK(err);
    queue = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    kernel = build(ctx, dev, folder, c);
    /* both start as u0: the boundary, which the kernel never writes, stays u0's */
    buf[0] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)u0, &err);
    CHECK(err);
    buf[1] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)u0, &err);
    CHECK(err);
    for (s = 0; s < steps; s++) {
        CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &buf[s % 2]));
        CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &buf[(s + 1) % 2]));
        CHECK(clEnqueueNDRangeKernel(queue, kernel, c->work_dim, NULL, c->global_size,
                                     c->has_local ? c->local_size : NULL, 0, NULL, NULL));
    }
    CHECK(clEnqueueReadBuffer(queue, buf[steps % 2], CL_TRUE, 0, bytes, out, 0, NULL, NULL));
    clReleaseMemObject(buf[0]);
    clReleaseMemObject(buf[1]);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
}

int main(int argc, char **argv) {
    const char *folder;
    long nx, ny, nz, cells, i;
    int steps, k, s;
    char name[256];
    cl_device_id dev;
    gtune_choice c;
    float *u0, *a, *b, *out;
    double worst = 0.0;
    if (argc < 5) {
        fprintf(stderr, "usage: %s BUNDLE_DIR NX NY NZ [STEPS] [PLATFORM] [DEVICE]\n", argv[0]);
        return 2;
    }
    folder = argv[1];
    nx = atol(argv[2]);
    ny = atol(argv[3]);
    nz = atol(argv[4]);
    steps = argc > 5 ? atoi(argv[5]) : 4;
    dev = pick_device(argc > 6 ? atoi(argv[6]) : 0, argc > 7 ? atoi(argv[7]) : 0);
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
    name[sizeof name - 1] = '\0';

    c = gtune_select(name, nx, ny, nz);
    if (c.how == GTUNE_NONE || steps < 1) {
        fprintf(stderr, "error: nothing to run for %ldx%ldx%ld on %s\n", nx, ny, nz, name);
        return 2;
    }
    printf("choice: %s config %d (%s) on %s at %ldx%ldx%ld:", HOW[c.how], c.config,
           c.source_file, name, nx, ny, nz);
    for (k = 0; k < c.n_values; k++) printf(" %s=%ld", c.param_names[k], c.values[k]);
    printf("\nlaunch: global %zu %zu %zu, local %zu %zu %zu, options \"%s\"\n",
           c.global_size[0], c.global_size[1], c.global_size[2], c.local_size[0],
           c.local_size[1], c.local_size[2], c.build_options);
    for (k = 0; k < c.n_values; k++) {
        if (strcmp(c.param_names[k], "IMAGE") == 0 && c.values[k] != 0) {
            fprintf(stderr, "error: this example passes buffers; config %d reads an image\n",
                    c.config);
            return 2;
        }
    }
    if (!c.legal) {
        fprintf(stderr, "error: config %d does not fit %ldx%ldx%ld\n", c.config, nx, ny, nz);
        return 2;
    }

    cells = nx * ny * nz;
    u0 = malloc((size_t)cells * sizeof(float));
    a = malloc((size_t)cells * sizeof(float));
    b = malloc((size_t)cells * sizeof(float));
    out = malloc((size_t)cells * sizeof(float));
    if (!u0 || !a || !b || !out) return 2;
    srand(1);
    for (i = 0; i < cells; i++) u0[i] = (float)rand() / (float)RAND_MAX;
    run_device(dev, folder, &c, u0, out, cells, steps);

    memcpy(a, u0, (size_t)cells * sizeof(float));
    for (s = 0; s < steps; s++) {
        reference_step(a, b, nx, ny, nz);
        memcpy(a, b, (size_t)cells * sizeof(float));
    }
    for (i = 0; i < cells; i++) {
        double d = fabs((double)out[i] - (double)a[i]);
        if (d > worst || d != d) worst = d != d ? INFINITY : d;
    }
    printf("steps: %d, max |device - reference| = %.3g (%s)\n", steps, worst,
           worst <= 1e-5 ? "ok" : "MISMATCH");
    free(u0);
    free(a);
    free(b);
    free(out);
    return worst <= 1e-5 ? 0 : 1;
}
