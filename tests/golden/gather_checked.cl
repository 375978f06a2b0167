#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

__kernel void calculate(
    __global const int* restrict var1_global,
    int var1_rows,
    int var1_view,
    int var2,
    int var3,
    int var4,
    __global int* restrict var5_global,
    int var5_rows,
    int var6,
    __global const double* restrict var8_global,
    int var8_rows,
    int var8_view,
    double var10,
    __global double* restrict var12_global,
    int var12_rows,
    int rows,
    int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  int var1 = 0;
  if (in_view(i, j, var1_view)) {
    var1 = var1_global[i + var1_rows * j];
  }
  double var7 = 0;
  if (var1 >= 0 && var1 < var3 && var2 >= 0 && var2 < var4) {
    double var9 = 0;
    if (in_view(var1, var2, var8_view)) {
      var9 = var8_global[var1 + var8_rows * var2];
    }
    var7 = var9;
  } else {
    // An index out of range: read 0, and report the first such element (flag 0: a bad row index, 1: a bad column index).
    atomic_min(&var5_global[var1 >= 0 && var1 < var3 ? 1 : 0], i + var6 * j);
  }
  double var11 = var7 * var10;
  var12_global[i + var12_rows * j] = var11;
}
