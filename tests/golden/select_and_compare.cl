#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

__kernel void calculate(
    __global const double* restrict var1_global,
    int var1_rows,
    int var1_view,
    double var2,
    __global double* restrict var7_global,
    int var7_rows,
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
  int var3 = var1 < var2;
  double var4 = -var1;
  double var5 = sqrt(var1);
  double var6 = var3 ? var4 : var5;
  var7_global[i + var7_rows * j] = var6;
}
