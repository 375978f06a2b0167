#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

__kernel void calculate(
    __global const double* restrict var1_global,
    int var1_rows,
    int var1_view,
    __global double* restrict var3_global,
    int var3_rows,
    int rows,
    int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  double var1 = 0;
  if (in_view(i, j, var1_view)) {
    var1 = var1_global[i + var1_rows * j];
  }
  double var2 = var1 + var1;
  var3_global[i + var3_rows * j] = var2;
}
