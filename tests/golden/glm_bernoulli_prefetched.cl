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
    __global double* restrict var60_global,
    int var60_rows,
    __local double* var61_local,
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
  double var47[25] = {0};
  double var59 = 0;
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
        var47[k] += var3[k] * var33;
      }
      if (tile_col == 0) {
        if (!(var11)) {
          atomic_min(&var37_global[0], i + rows * j);
        }
        if (!(var25)) {
          atomic_min(&var38_global[0], i + rows * j);
        }
        var39 = var39 + var33;
        var59 = var59 + var36;
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
  var44_local[lid * 8 + 0] = var47[0];
  var44_local[lid * 8 + 1] = var47[1];
  var44_local[lid * 8 + 2] = var47[2];
  var44_local[lid * 8 + 3] = var47[3];
  var44_local[lid * 8 + 4] = var47[4];
  var44_local[lid * 8 + 5] = var47[5];
  var44_local[lid * 8 + 6] = var47[6];
  var44_local[lid * 8 + 7] = var47[7];
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
        var55 += var44_local[(var53 * block_rows + var56) * 8 + var54];
      }
      var44_local[lsize * 8 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var44_local[lsize * 8 + var52 * var48 + var51];
      }
      const int var58 = var51 / 8 + tile_col_step * (var51 % 8);
      if (var58 < var45) {
        var46_global[get_group_id(0) + var46_rows * var58] = var57;
      }
    }
  }
  var44_local[lid * 8 + 0] = var47[8];
  var44_local[lid * 8 + 1] = var47[9];
  var44_local[lid * 8 + 2] = var47[10];
  var44_local[lid * 8 + 3] = var47[11];
  var44_local[lid * 8 + 4] = var47[12];
  var44_local[lid * 8 + 5] = var47[13];
  var44_local[lid * 8 + 6] = var47[14];
  var44_local[lid * 8 + 7] = var47[15];
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
        var55 += var44_local[(var53 * block_rows + var56) * 8 + var54];
      }
      var44_local[lsize * 8 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var44_local[lsize * 8 + var52 * var48 + var51];
      }
      const int var58 = var51 / 8 + tile_col_step * (8 + var51 % 8);
      if (var58 < var45) {
        var46_global[get_group_id(0) + var46_rows * var58] = var57;
      }
    }
  }
  var44_local[lid * 8 + 0] = var47[16];
  var44_local[lid * 8 + 1] = var47[17];
  var44_local[lid * 8 + 2] = var47[18];
  var44_local[lid * 8 + 3] = var47[19];
  var44_local[lid * 8 + 4] = var47[20];
  var44_local[lid * 8 + 5] = var47[21];
  var44_local[lid * 8 + 6] = var47[22];
  var44_local[lid * 8 + 7] = var47[23];
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
        var55 += var44_local[(var53 * block_rows + var56) * 8 + var54];
      }
      var44_local[lsize * 8 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var44_local[lsize * 8 + var52 * var48 + var51];
      }
      const int var58 = var51 / 8 + tile_col_step * (16 + var51 % 8);
      if (var58 < var45) {
        var46_global[get_group_id(0) + var46_rows * var58] = var57;
      }
    }
  }
  var44_local[lid * 1 + 0] = var47[24];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var48 = tile_col_step * 1;
    const int var49 = max(1, lsize / var48);
    for (int var50 = lid; var50 < var48 * var49; var50 += lsize) {
      const int var51 = var50 % var48;
      const int var52 = var50 / var48;
      const int var53 = var51 / 1;
      const int var54 = var51 % 1;
      double var55 = 0;
      for (int var56 = var52; var56 < block_rows; var56 += var49) {
        var55 += var44_local[(var53 * block_rows + var56) * 1 + var54];
      }
      var44_local[lsize * 1 + var50] = var55;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var51 = lid; var51 < var48; var51 += lsize) {
      double var57 = 0;
      for (int var52 = 0; var52 < var49; var52++) {
        var57 += var44_local[lsize * 1 + var52 * var48 + var51];
      }
      const int var58 = var51 / 1 + tile_col_step * (24 + var51 % 1);
      if (var58 < var45) {
        var46_global[get_group_id(0) + var46_rows * var58] = var57;
      }
    }
  }
  var61_local[lid] = var59;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int var62 = lsize / 2; var62 > 0; var62 /= 2) {
    if (lid < var62) {
      var61_local[lid] = var61_local[lid] + var61_local[lid + var62];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && j < cols) {
    var60_global[get_group_id(0) + get_num_groups(0) * j] = var61_local[0];
  }
}
