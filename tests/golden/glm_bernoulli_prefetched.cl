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
    __global const double* restrict var16_global,
    int var16_rows,
    int var16_view,
    double var21,
    double var24,
    int var26,
    int var28,
    __global int* restrict var37_global,
    int var37_rows,
    __global int* restrict var38_global,
    int var38_rows,
    __global double* restrict var40_global,
    int var40_rows,
    __local double* var41_local,
    __local double* var43_local,
    __local double* var44_local,
    int var45,
    __global double* restrict var46_global,
    int var46_rows,
    int var47,
    __global int* restrict var48_global,
    int var48_rows,
    __global double* restrict var49_global,
    int var49_rows,
    __global double* restrict var71_global,
    int var71_rows,
    __local double* var72_local,
    int rows,
    int cols,
    int block_rows) {
  const int j = get_global_id(1);
  const int lid = get_local_id(0);
  const int lsize = get_local_size(0);
  const int tile_row = lid % block_rows;
  const int tile_col = lid / block_rows;
  const int tile_col_step = lsize / block_rows;
  double var3[25];
  double var4[25];
  {
    const int row = get_group_id(0) * block_rows + tile_row;
    int col = tile_col;
    var4[0] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[1] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[2] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[3] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[4] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[5] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[6] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[7] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[8] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[9] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[10] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[11] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[12] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[13] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[14] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[15] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[16] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[17] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[18] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[19] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[20] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[21] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[22] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[23] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    col += tile_col_step;
    var4[24] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
  }
  const int first_row = get_group_id(0) * block_rows + tile_row;
  int var6_next = (first_row < rows && j < cols && in_view(first_row, j, var6_view)) ? var6_global[first_row + var6_rows * j] : 0;
  double var14[25];
  #pragma unroll
  for (int k = 0; k < 25; k++) {
    const int var15 = tile_col + tile_col_step * k;
    var14[k] = 0;
    if (var15 < var1) {
      double var17 = 0;
      if (in_view(var15, 0, var16_view)) {
        var17 = var16_global[var15 + var16_rows * 0];
      }
      var14[k] = var17;
    }
  }
  __local double var13[512];
  double var39 = 0;
  double var50[25] = {0};
  double var70 = 0;
  for (int block = get_group_id(0) * block_rows, parity = 0; block < rows; block += get_num_groups(0) * block_rows, parity ^= 1) {
    const int rows_here = min(block_rows, rows - block);
    #pragma unroll
    for (int k = 0; k < 25; k++) {
      var3[k] = var4[k];
    }
    const int var5 = block + get_num_groups(0) * block_rows;
    #pragma unroll
    for (int k = 0; k < 25; k++) {
      const int row = var5 + tile_row;
      const int col = tile_col + tile_col_step * k;
      var4[k] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    }
    const int next_row = block + get_num_groups(0) * block_rows + tile_row;
    const int var6 = var6_next;
    var6_next = (next_row < rows && j < cols && in_view(next_row, j, var6_view)) ? var6_global[next_row + var6_rows * j] : 0;
    double var18 = 0;
    #pragma unroll
    for (int k = 0; k < 25; k++) {
      var18 += var3[k] * var14[k];
    }
    var13[lid + 256 * parity] = var18;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tile_row < rows_here && j < cols) {
      const int i = block + tile_row;
      int var8 = var6 >= var7;
      int var10 = var6 <= var9;
      int var11 = var8 && var10;
      double var19 = 0;
      for (int var20 = 0; var20 < tile_col_step; var20++) {
        var19 += var13[tile_row + block_rows * var20 + 256 * parity];
      }
      double var22 = var19 + var21;
      double var23 = fabs(var22);
      int var25 = var23 < var24;
      int var27 = var26 * var6;
      int var29 = var27 - var28;
      double var30 = var29 * var22;
      double var31 = -var30;
      double var32 = inv_logit(var31);
      double var33 = var29 * var32;
      double var34 = -var30;
      double var35 = log1p_exp(var34);
      double var36 = -var35;
      #pragma unroll
      for (int k = 0; k < 25; k++) {
        var50[k] += var3[k] * var33;
      }
      if (tile_col == 0) {
        if (!(var11)) {
          atomic_min(&var37_global[0], i + rows * j);
        }
        if (!(var25)) {
          atomic_min(&var38_global[0], i + rows * j);
        }
        var39 = var39 + var33;
        var70 = var70 + var36;
      }
    }
  }
  var41_local[lid] = var39;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int var42 = lsize / 2; var42 > 0; var42 /= 2) {
    if (lid < var42) {
      var41_local[lid] = var41_local[lid] + var41_local[lid + var42];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && j < cols) {
    var40_global[get_group_id(0) + get_num_groups(0) * j] = var41_local[0];
  }
  var44_local[lid * 8 + 0] = var50[0];
  var44_local[lid * 8 + 1] = var50[1];
  var44_local[lid * 8 + 2] = var50[2];
  var44_local[lid * 8 + 3] = var50[3];
  var44_local[lid * 8 + 4] = var50[4];
  var44_local[lid * 8 + 5] = var50[5];
  var44_local[lid * 8 + 6] = var50[6];
  var44_local[lid * 8 + 7] = var50[7];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var51 = tile_col_step * 8;
    const int var52 = max(1, lsize / var51);
    for (int var53 = lid; var53 < var51 * var52; var53 += lsize) {
      const int var54 = var53 % var51;
      const int var55 = var53 / var51;
      const int var56 = var54 / 8;
      const int var57 = var54 % 8;
      double var58 = 0;
      for (int var59 = var55; var59 < block_rows; var59 += var52) {
        var58 += var44_local[(var56 * block_rows + var59) * 8 + var57];
      }
      var44_local[lsize * 8 + var53] = var58;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var54 = lid; var54 < var51; var54 += lsize) {
      double var60 = 0;
      for (int var55 = 0; var55 < var52; var55++) {
        var60 += var44_local[lsize * 8 + var55 * var51 + var54];
      }
      const int var61 = var54 / 8 + tile_col_step * (var54 % 8);
      if (var61 < var45) {
        var46_global[get_group_id(0) + var46_rows * var61] = var60;
      }
    }
  }
  var44_local[lid * 8 + 0] = var50[8];
  var44_local[lid * 8 + 1] = var50[9];
  var44_local[lid * 8 + 2] = var50[10];
  var44_local[lid * 8 + 3] = var50[11];
  var44_local[lid * 8 + 4] = var50[12];
  var44_local[lid * 8 + 5] = var50[13];
  var44_local[lid * 8 + 6] = var50[14];
  var44_local[lid * 8 + 7] = var50[15];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var51 = tile_col_step * 8;
    const int var52 = max(1, lsize / var51);
    for (int var53 = lid; var53 < var51 * var52; var53 += lsize) {
      const int var54 = var53 % var51;
      const int var55 = var53 / var51;
      const int var56 = var54 / 8;
      const int var57 = var54 % 8;
      double var58 = 0;
      for (int var59 = var55; var59 < block_rows; var59 += var52) {
        var58 += var44_local[(var56 * block_rows + var59) * 8 + var57];
      }
      var44_local[lsize * 8 + var53] = var58;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var54 = lid; var54 < var51; var54 += lsize) {
      double var60 = 0;
      for (int var55 = 0; var55 < var52; var55++) {
        var60 += var44_local[lsize * 8 + var55 * var51 + var54];
      }
      const int var61 = var54 / 8 + tile_col_step * (8 + var54 % 8);
      if (var61 < var45) {
        var46_global[get_group_id(0) + var46_rows * var61] = var60;
      }
    }
  }
  var44_local[lid * 8 + 0] = var50[16];
  var44_local[lid * 8 + 1] = var50[17];
  var44_local[lid * 8 + 2] = var50[18];
  var44_local[lid * 8 + 3] = var50[19];
  var44_local[lid * 8 + 4] = var50[20];
  var44_local[lid * 8 + 5] = var50[21];
  var44_local[lid * 8 + 6] = var50[22];
  var44_local[lid * 8 + 7] = var50[23];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var51 = tile_col_step * 8;
    const int var52 = max(1, lsize / var51);
    for (int var53 = lid; var53 < var51 * var52; var53 += lsize) {
      const int var54 = var53 % var51;
      const int var55 = var53 / var51;
      const int var56 = var54 / 8;
      const int var57 = var54 % 8;
      double var58 = 0;
      for (int var59 = var55; var59 < block_rows; var59 += var52) {
        var58 += var44_local[(var56 * block_rows + var59) * 8 + var57];
      }
      var44_local[lsize * 8 + var53] = var58;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var54 = lid; var54 < var51; var54 += lsize) {
      double var60 = 0;
      for (int var55 = 0; var55 < var52; var55++) {
        var60 += var44_local[lsize * 8 + var55 * var51 + var54];
      }
      const int var61 = var54 / 8 + tile_col_step * (16 + var54 % 8);
      if (var61 < var45) {
        var46_global[get_group_id(0) + var46_rows * var61] = var60;
      }
    }
  }
  var44_local[lid * 1 + 0] = var50[24];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var51 = tile_col_step * 1;
    const int var52 = max(1, lsize / var51);
    for (int var53 = lid; var53 < var51 * var52; var53 += lsize) {
      const int var54 = var53 % var51;
      const int var55 = var53 / var51;
      const int var56 = var54 / 1;
      const int var57 = var54 % 1;
      double var58 = 0;
      for (int var59 = var55; var59 < block_rows; var59 += var52) {
        var58 += var44_local[(var56 * block_rows + var59) * 1 + var57];
      }
      var44_local[lsize * 1 + var53] = var58;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var54 = lid; var54 < var51; var54 += lsize) {
      double var60 = 0;
      for (int var55 = 0; var55 < var52; var55++) {
        var60 += var44_local[lsize * 1 + var55 * var51 + var54];
      }
      const int var61 = var54 / 1 + tile_col_step * (24 + var54 % 1);
      if (var61 < var45) {
        var46_global[get_group_id(0) + var46_rows * var61] = var60;
      }
    }
  }
  {
    // The last group to finish adds every group's sums into the
    // target: their writes are made visible before each group
    // counts itself done.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
      bool var62 = var47 && get_num_groups(0) == 1;
      if (var47 && get_num_groups(0) > 1) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        var62 = atomic_inc(&var48_global[0]) == get_num_groups(0) - 1;
      }
      var44_local[0] = var62;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool var62 = var44_local[0] != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int var64 = max(1, lsize / max(1, var45));
    if (var62) {
      // Read past any cache that may hold stale sums.
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      volatile __global const double* var63 = var46_global;
      for (int var65 = lid; var65 < var45 * var64; var65 += lsize) {
        const int var66 = var65 % var45;
        double var67 = 0;
        for (int var68 = var65 / var45; var68 < get_num_groups(0); var68 += var64) {
          var67 += var63[var68 + var46_rows * var66];
        }
        if (var64 == 1) {
          var49_global[var66] = var67;
        } else {
          var44_local[var65] = var67;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (var62 && var64 > 1) {
      for (int var66 = lid; var66 < var45; var66 += lsize) {
        double var67 = 0;
        for (int var69 = 0; var69 < var64; var69++) {
          var67 += var44_local[var66 + var45 * var69];
        }
        var49_global[var66] = var67;
      }
    }
    if (var62 && lid == 0 && get_num_groups(0) > 1) {
      var48_global[0] = 0;
    }
  }
  var72_local[lid] = var70;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int var73 = lsize / 2; var73 > 0; var73 /= 2) {
    if (lid < var73) {
      var72_local[lid] = var72_local[lid] + var72_local[lid + var73];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && j < cols) {
    var71_global[get_group_id(0) + get_num_groups(0) * j] = var72_local[0];
  }
}
