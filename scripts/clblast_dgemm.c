/* CLBlast DGEMM on the default OpenCL device, for BENCHMARKS.md's
 * comparison with fusion's GEMM. Build and run:
 *   gcc -O2 scripts/clblast_dgemm.c -lclblast -lOpenCL -o /tmp/clblast_dgemm && /tmp/clblast_dgemm 256 512 1024
 * Prints: n, median seconds of 9 runs (after a warm-up), GFLOP/s. */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  cl_platform_id platform;
  cl_device_id device;
  cl_int err = clGetPlatformIDs(1, &platform, NULL);
  err |= clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "OpenCL setup failed: %d\n", err);
    return 1;
  }
  for (int arg = 1; arg < argc; arg++) {
    const size_t n = (size_t)atoi(argv[arg]);
    double* host = malloc(n * n * sizeof(double));
    for (size_t i = 0; i < n * n; i++) host[i] = (double)(i % 101) / 50.0 - 1.0;
    cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * sizeof(double), host, &err);
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * sizeof(double), host, &err);
    cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, n * n * sizeof(double), NULL, &err);
    double times[9];
    for (int rep = -1; rep < 9; rep++) {
      double start = now();
      CLBlastStatusCode status = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n,
                                              1.0, a, 0, n, b, 0, n, 0.0, c, 0, n, &queue, NULL);
      clFinish(queue);
      if (status != CLBlastSuccess) {
        fprintf(stderr, "CLBlastDgemm failed: %d\n", status);
        return 1;
      }
      if (rep >= 0) times[rep] = now() - start;
    }
    qsort(times, 9, sizeof(double), cmp);
    printf("%zu %.6f %.2f\n", n, times[4], 2.0 * n * n * n / times[4] / 1e9);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    free(host);
  }
  return 0;
}
