#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

inline double inv_logit(double x) {
  double e = exp(-fabs(x));
  return x < 0 ? e / (1 + e) : 1 / (1 + e);
}

inline double log1p_exp(double x) {
  return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

__kernel void calculate(
    int var1,
    __global const double* restrict var2_global,
    int var2_rows,
    int var2_view,
    __global const int* restrict var6_global,
    int var6_rows,
    int var6_view,
    int var7,
    int var9,
    int var12,
    __global const double* restrict var15_global,
    int var15_rows,
    int var15_view,
    double var18,
    double var21,
    int var23,
    int var25,
    __global int* restrict var34_global,
    int var34_rows,
    __global int* restrict var35_global,
    int var35_rows,
    __global double* restrict var37_global,
    int var37_rows,
    __local double* var38_local,
    __local double* var40_local,
    __local double* var41_local,
    int var42,
    __global double* restrict var43_global,
    int var43_rows,
    int var44,
    __global int* restrict var45_global,
    int var45_rows,
    __global double* restrict var46_global,
    int var46_rows,
    __global double* restrict var68_global,
    int var68_rows,
    __local double* var69_local,
    int rows,
    int cols,
    int block_rows) {
  const int j = get_global_id(1);
  const int lid = get_local_id(0);
  const int lsize = get_local_size(0);
  const int tile_row = lid % block_rows;
  const int tile_col = lid / block_rows;
  const int tile_col_step = lsize / block_rows;
  double var3[10];
  double var13[10];
  #pragma unroll
  for (int k = 0; k < 10; k++) {
    const int var14 = tile_col + tile_col_step * k;
    var13[k] = 0;
    if (var14 < var1) {
      double var16 = 0;
      if (in_view(var14, 0, var15_view)) {
        var16 = var15_global[var14 + var15_rows * 0];
      }
      var13[k] = var16;
    }
  }
  double var36 = 0;
  double var47[10] = {0};
  double var67 = 0;
  for (int block = get_group_id(0) * block_rows; block < rows; block += get_num_groups(0) * block_rows) {
    const int rows_here = min(block_rows, rows - block);
    #pragma unroll
    for (int k = 0; k < 10; k++) {
      const int row = block + tile_row;
      const int col = tile_col + tile_col_step * k;
      var3[k] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    }
    if (tile_row < rows_here && j < cols) {
      const int i = block + tile_row;
      int var6 = 0;
      if (in_view(i, j, var6_view)) {
        var6 = var6_global[i + var6_rows * j];
      }
      int var8 = var6 >= var7;
      int var10 = var6 <= var9;
      int var11 = var8 && var10;
      double var17 = 0;
      #pragma unroll
      for (int k = 0; k < 10; k++) {
        var17 += var3[k] * var13[k];
      }
      double var19 = var17 + var18;
      double var20 = fabs(var19);
      int var22 = var20 < var21;
      int var24 = var23 * var6;
      int var26 = var24 - var25;
      double var27 = var26 * var19;
      double var28 = -var27;
      double var29 = inv_logit(var28);
      double var30 = var26 * var29;
      double var31 = -var27;
      double var32 = log1p_exp(var31);
      double var33 = -var32;
      #pragma unroll
      for (int k = 0; k < 10; k++) {
        var47[k] += var3[k] * var30;
      }
      if (!(var11)) {
        atomic_min(&var34_global[0], i + rows * j);
      }
      if (!(var22)) {
        atomic_min(&var35_global[0], i + rows * j);
      }
      var36 = var36 + var30;
      var67 = var67 + var33;
    }
  }
  var38_local[lid] = var36;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int var39 = lsize / 2; var39 > 0; var39 /= 2) {
    if (lid < var39) {
      var38_local[lid] = var38_local[lid] + var38_local[lid + var39];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && j < cols) {
    var37_global[get_group_id(0) + get_num_groups(0) * j] = var38_local[0];
  }
  var41_local[lid * 8 + 0] = var47[0];
  var41_local[lid * 8 + 1] = var47[1];
  var41_local[lid * 8 + 2] = var47[2];
  var41_local[lid * 8 + 3] = var47[3];
  var41_local[lid * 8 + 4] = var47[4];
  var41_local[lid * 8 + 5] = var47[5];
  var41_local[lid * 8 + 6] = var47[6];
  var41_local[lid * 8 + 7] = var47[7];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var48 = tile_col_step * 8;
    const int var49 = max(1, lsize / var48);
    for (int var50 = lid; var50 < var48 * var49; var50 += lsize) {
      const int var51 = var50 % var48;
      const int var52 = var50 / var48;
      const int var53 = var51 / 8;
      const int var54 = var51 % 8;
      double var55 = 0;
      for (int var56 = var52; var56 < block_rows; var56 += var49) {
        var55 += var41_local[(var53 * block_rows + var56) * 8 + var54];
      }
      var41_local[lsize * 8 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var41_local[lsize * 8 + var52 * var48 + var51];
      }
      const int var58 = var51 / 8 + tile_col_step * (var51 % 8);
      if (var58 < var42) {
        var43_global[get_group_id(0) + var43_rows * var58] = var57;
      }
    }
  }
  var41_local[lid * 2 + 0] = var47[8];
  var41_local[lid * 2 + 1] = var47[9];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var48 = tile_col_step * 2;
    const int var49 = max(1, lsize / var48);
    for (int var50 = lid; var50 < var48 * var49; var50 += lsize) {
      const int var51 = var50 % var48;
      const int var52 = var50 / var48;
      const int var53 = var51 / 2;
      const int var54 = var51 % 2;
      double var55 = 0;
      for (int var56 = var52; var56 < block_rows; var56 += var49) {
        var55 += var41_local[(var53 * block_rows + var56) * 2 + var54];
      }
      var41_local[lsize * 2 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var41_local[lsize * 2 + var52 * var48 + var51];
      }
      const int var58 = var51 / 2 + tile_col_step * (8 + var51 % 2);
      if (var58 < var42) {
        var43_global[get_group_id(0) + var43_rows * var58] = var57;
      }
    }
  }
  {
    // The last group to finish adds every group's sums into the
    // target: their writes are made visible before each group
    // counts itself done.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
      bool var59 = var44 && get_num_groups(0) == 1;
      if (var44 && get_num_groups(0) > 1) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        var59 = atomic_inc(&var45_global[0]) == get_num_groups(0) - 1;
      }
      var41_local[0] = var59;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool var59 = var41_local[0] != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int var61 = max(1, lsize / max(1, var42));
    if (var59) {
      // Read past any cache that may hold stale sums.
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      volatile __global const double* var60 = var43_global;
      for (int var62 = lid; var62 < var42 * var61; var62 += lsize) {
        const int var63 = var62 % var42;
        double var64 = 0;
        for (int var65 = var62 / var42; var65 < get_num_groups(0); var65 += var61) {
          var64 += var60[var65 + var43_rows * var63];
        }
        if (var61 == 1) {
          var46_global[var63] = var64;
        } else {
          var41_local[var62] = var64;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (var59 && var61 > 1) {
      for (int var63 = lid; var63 < var42; var63 += lsize) {
        double var64 = 0;
        for (int var66 = 0; var66 < var61; var66++) {
          var64 += var41_local[var63 + var42 * var66];
        }
        var46_global[var63] = var64;
      }
    }
    if (var59 && lid == 0 && get_num_groups(0) > 1) {
      var45_global[0] = 0;
    }
  }
  var69_local[lid] = var67;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int var70 = lsize / 2; var70 > 0; var70 /= 2) {
    if (lid < var70) {
      var69_local[lid] = var69_local[lid] + var69_local[lid + var70];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && j < cols) {
    var68_global[get_group_id(0) + get_num_groups(0) * j] = var69_local[0];
  }
}
