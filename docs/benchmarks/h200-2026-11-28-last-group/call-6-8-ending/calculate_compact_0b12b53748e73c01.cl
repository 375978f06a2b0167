// Compacted: scalars from a table, and each buffer passed at several
// parameters once.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

__kernel void calculate(
    __global const double* restrict var2_global,
    __global const double* restrict var7_global,
    __global const double* restrict var11_global,
    __global const double* restrict var17_global,
    __global const double* restrict var24_global,
    __global double* restrict var64_global,
    __global int* restrict var65_global,
    __global double* restrict var66_global,
    __global double* restrict var67_global,
    __global double* restrict var68_global,
    __local double* var69_local,
    __local double* var70_local,
    __local double* var71_local,
    __global double* restrict var73_global,
    __global double* restrict var75_global,
    __global int* restrict var96_global,
    __constant int* restrict scalar_ints,
    __constant double* restrict scalar_doubles) {
  int var1 = scalar_ints[0];
  int var2_rows = scalar_ints[1];
  int var2_view = scalar_ints[2];
  double var6 = scalar_doubles[0];
  int var7_rows = scalar_ints[3];
  int var7_view = scalar_ints[4];
  int var8 = scalar_ints[5];
  int var11_rows = scalar_ints[6];
  int var11_view = scalar_ints[7];
  int var13 = scalar_ints[8];
  int var15 = scalar_ints[9];
  int var16 = scalar_ints[10];
  int var17_rows = scalar_ints[11];
  int var17_view = scalar_ints[12];
  int var19 = scalar_ints[13];
  int var24_rows = scalar_ints[14];
  int var24_view = scalar_ints[15];
  int var26 = scalar_ints[16];
  double var47 = scalar_doubles[1];
  double var49 = scalar_doubles[2];
  double var51 = scalar_doubles[3];
  double var55 = scalar_doubles[4];
  double var58 = scalar_doubles[5];
  int var64_rows = scalar_ints[17];
  int var65_rows = scalar_ints[18];
  int var66_rows = scalar_ints[19];
  int var67_rows = scalar_ints[20];
  int var68_rows = scalar_ints[21];
  int var72 = scalar_ints[22];
  int var73_rows = scalar_ints[23];
  int var74 = scalar_ints[24];
  int var75_rows = scalar_ints[25];
  int var96_rows = scalar_ints[26];
  int var97 = scalar_ints[27];
  int rows = scalar_ints[28];
  int cols = scalar_ints[29];
  int block_rows = scalar_ints[30];

  const int j = get_global_id(1);
  const int lid = get_local_id(0);
  const int lsize = get_local_size(0);
  const int tile_row = lid % block_rows;
  const int tile_col = lid / block_rows;
  const int tile_col_step = lsize / block_rows;
  double var3[24];
  double var9[24];
  #pragma unroll
  for (int k = 0; k < 24; k++) {
    const int var10 = tile_col + tile_col_step * k;
    var9[k] = 0;
    if (var10 < var1) {
      double var12 = 0;
      if (in_view(var10, 0, var11_view)) {
        var12 = var11_global[var10 + var11_rows * 0];
      }
      var9[k] = var12;
    }
  }
  double var25 = 0;
  if (in_view(0, 0, var24_view)) {
    var25 = var24_global[0 + var24_rows * 0];
  }
  int var27 = (0 < var24_rows && 0 < var26) ? 0 + var24_rows * 0 : -1;
  double var28 = var25;
  double var29 = 1 / var28;
  double var31 = 1 / var28;
  double var39 = var6;
  double var42 = log(var28);
  double var43 = 1 / var28;
  double var54 = var25;
  int var56 = var54 >= var55;
  double var57 = var25;
  int var59 = var57 <= var58;
  int var60 = var56 && var59;
  double var61 = 0;
  double var62 = 0;
  double var63 = 0;
  double var76[24] = {0};
  for (int block = get_group_id(0) * block_rows; block < rows; block += get_num_groups(0) * block_rows) {
    const int rows_here = min(block_rows, rows - block);
    #pragma unroll
    for (int k = 0; k < 24; k++) {
      const int row = block + tile_row;
      const int col = tile_col + tile_col_step * k;
      var3[k] = (row < rows && col < var1 && in_view(row, col, var2_view)) ? var2_global[row + var2_rows * col] : 0;
    }
    if (tile_row < rows_here && j < cols) {
      const int i = block + tile_row;
      double var7 = 0;
      if (in_view(i, j, var7_view)) {
        var7 = var7_global[i + var7_rows * j];
      }
      double var14 = 0;
      #pragma unroll
      for (int k = 0; k < 24; k++) {
        var14 += var3[k] * var9[k];
      }
      double var18 = 0;
      if (in_view((var15 ? 0 : i), (var16 ? 0 : j), var17_view)) {
        var18 = var17_global[(var15 ? 0 : i) + var17_rows * (var16 ? 0 : j)];
      }
      int var20 = (0 <= (var15 ? 0 : i) && (var15 ? 0 : i) < var17_rows && 0 <= (var16 ? 0 : j) && (var16 ? 0 : j) < var19) ? (var15 ? 0 : i) + var17_rows * (var16 ? 0 : j) : -1;
      double var21 = var14 + var18;
      double var22 = var7 - var21;
      double var23 = -1;
      double var30 = var22 * var29;
      double var32 = -var30 * var29;
      double var33 = var31 * var23;
      double var34 = var30 * var30;
      double var35 = 2 * var30;
      double var36 = var35 * var33;
      double var37 = var35 * var32;
      double var38 = var6 * var34;
      double var40 = var39 * var36;
      double var41 = var39 * var37;
      double var44 = var38 - var42;
      double var45 = -1;
      double var46 = var41 + var45 * var43;
      double var48 = var44 - var47;
      int var50 = var7 >= var49;
      int var52 = var7 <= var51;
      int var53 = var50 && var52;
      #pragma unroll
      for (int k = 0; k < 24; k++) {
        var76[k] += var3[k] * var40;
      }
      var61 += var48;
      var62 += var40;
      var63 += var46;
      if (!(var53)) {
        atomic_min(&var96_global[var97 + 0], i + rows * j);
      }
      if (!(var60)) {
        atomic_min(&var96_global[var97 + 1], i + rows * j);
      }
    }
  }
  {
    // The work-group's 3 scalar sum(s), through one tree.
    var69_local[0 * lsize + lid] = var61;
    var69_local[1 * lsize + lid] = var62;
    var69_local[2 * lsize + lid] = var63;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = lsize / 2; step > 0; step /= 2) {
      if (lid < step) {
        for (int slot = 0; slot < 3; slot++) {
          var69_local[slot * lsize + lid] += var69_local[slot * lsize + lid + step];
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (get_num_groups(0) == 1) {
      // One work-group: its sums are the totals.
      if (lid == 0) {
        var66_global[0] = var69_local[0 * lsize];
        var67_global[0] = var69_local[1 * lsize];
        var68_global[0] = var69_local[2 * lsize];
      }
    } else {
      for (int slot = lid; slot < 3; slot += lsize) {
        var64_global[slot * get_num_groups(0) + get_group_id(0)] = var69_local[slot * lsize];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      // The last group to finish adds every group's sums: their writes
      // are made visible before each group counts itself done.
      if (lid == 0) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        var69_local[0] = atomic_inc(&var65_global[0]) == get_num_groups(0) - 1;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      const bool last_group = var69_local[0] != 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (last_group) {
        // Read past any cache that may hold stale sums.
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        volatile __global const double* all_sums = var64_global;
        for (int slot = 0; slot < 3; slot++) {
          double total = 0;
          for (int group = lid; group < get_num_groups(0); group += lsize) {
            total += all_sums[slot * get_num_groups(0) + group];
          }
          var69_local[slot * lsize + lid] = total;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int step = lsize / 2; step > 0; step /= 2) {
          if (lid < step) {
            for (int slot = 0; slot < 3; slot++) {
              var69_local[slot * lsize + lid] += var69_local[slot * lsize + lid + step];
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) {
          var66_global[0] = var69_local[0 * lsize];
          var67_global[0] = var69_local[1 * lsize];
          var68_global[0] = var69_local[2 * lsize];
          var65_global[0] = 0;
        }
      }
    }
  }
  var71_local[lid * 8 + 0] = var76[0];
  var71_local[lid * 8 + 1] = var76[1];
  var71_local[lid * 8 + 2] = var76[2];
  var71_local[lid * 8 + 3] = var76[3];
  var71_local[lid * 8 + 4] = var76[4];
  var71_local[lid * 8 + 5] = var76[5];
  var71_local[lid * 8 + 6] = var76[6];
  var71_local[lid * 8 + 7] = var76[7];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var77 = tile_col_step * 8;
    const int var78 = max(1, lsize / var77);
    for (int var79 = lid; var79 < var77 * var78; var79 += lsize) {
      const int var80 = var79 % var77;
      const int var81 = var79 / var77;
      const int var82 = var80 / 8;
      const int var83 = var80 % 8;
      double var84 = 0;
      for (int var85 = var81; var85 < block_rows; var85 += var78) {
        var84 += var71_local[(var82 * block_rows + var85) * 8 + var83];
      }
      var71_local[lsize * 8 + var79] = var84;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var80 = lid; var80 < var77; var80 += lsize) {
      double var86 = 0;
      for (int var81 = 0; var81 < var78; var81++) {
        var86 += var71_local[lsize * 8 + var81 * var77 + var80];
      }
      const int var87 = var80 / 8 + tile_col_step * (var80 % 8);
      if (var87 < var72) {
        var73_global[get_group_id(0) + var73_rows * var87] = var86;
      }
    }
  }
  var71_local[lid * 8 + 0] = var76[8];
  var71_local[lid * 8 + 1] = var76[9];
  var71_local[lid * 8 + 2] = var76[10];
  var71_local[lid * 8 + 3] = var76[11];
  var71_local[lid * 8 + 4] = var76[12];
  var71_local[lid * 8 + 5] = var76[13];
  var71_local[lid * 8 + 6] = var76[14];
  var71_local[lid * 8 + 7] = var76[15];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var77 = tile_col_step * 8;
    const int var78 = max(1, lsize / var77);
    for (int var79 = lid; var79 < var77 * var78; var79 += lsize) {
      const int var80 = var79 % var77;
      const int var81 = var79 / var77;
      const int var82 = var80 / 8;
      const int var83 = var80 % 8;
      double var84 = 0;
      for (int var85 = var81; var85 < block_rows; var85 += var78) {
        var84 += var71_local[(var82 * block_rows + var85) * 8 + var83];
      }
      var71_local[lsize * 8 + var79] = var84;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var80 = lid; var80 < var77; var80 += lsize) {
      double var86 = 0;
      for (int var81 = 0; var81 < var78; var81++) {
        var86 += var71_local[lsize * 8 + var81 * var77 + var80];
      }
      const int var87 = var80 / 8 + tile_col_step * (8 + var80 % 8);
      if (var87 < var72) {
        var73_global[get_group_id(0) + var73_rows * var87] = var86;
      }
    }
  }
  var71_local[lid * 8 + 0] = var76[16];
  var71_local[lid * 8 + 1] = var76[17];
  var71_local[lid * 8 + 2] = var76[18];
  var71_local[lid * 8 + 3] = var76[19];
  var71_local[lid * 8 + 4] = var76[20];
  var71_local[lid * 8 + 5] = var76[21];
  var71_local[lid * 8 + 6] = var76[22];
  var71_local[lid * 8 + 7] = var76[23];
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    const int var77 = tile_col_step * 8;
    const int var78 = max(1, lsize / var77);
    for (int var79 = lid; var79 < var77 * var78; var79 += lsize) {
      const int var80 = var79 % var77;
      const int var81 = var79 / var77;
      const int var82 = var80 / 8;
      const int var83 = var80 % 8;
      double var84 = 0;
      for (int var85 = var81; var85 < block_rows; var85 += var78) {
        var84 += var71_local[(var82 * block_rows + var85) * 8 + var83];
      }
      var71_local[lsize * 8 + var79] = var84;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int var80 = lid; var80 < var77; var80 += lsize) {
      double var86 = 0;
      for (int var81 = 0; var81 < var78; var81++) {
        var86 += var71_local[lsize * 8 + var81 * var77 + var80];
      }
      const int var87 = var80 / 8 + tile_col_step * (16 + var80 % 8);
      if (var87 < var72) {
        var73_global[get_group_id(0) + var73_rows * var87] = var86;
      }
    }
  }
  {
    // The last group to finish adds every group's sums into the
    // target: their writes are made visible before each group
    // counts itself done.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
      bool var88 = var74 && get_num_groups(0) == 1;
      if (var74 && get_num_groups(0) > 1) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        var88 = atomic_inc(&var65_global[1]) == get_num_groups(0) - 1;
      }
      var71_local[0] = var88;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool var88 = var71_local[0] != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int var90 = max(1, lsize / max(1, var72));
    if (var88) {
      // Read past any cache that may hold stale sums.
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      volatile __global const double* var89 = var73_global;
      for (int var91 = lid; var91 < var72 * var90; var91 += lsize) {
        const int var92 = var91 % var72;
        double var93 = 0;
        for (int var94 = var91 / var72; var94 < get_num_groups(0); var94 += var90) {
          var93 += var89[var94 + var73_rows * var92];
        }
        if (var90 == 1) {
          var75_global[var92] = var93;
        } else {
          var71_local[var91] = var93;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (var88 && var90 > 1) {
      for (int var92 = lid; var92 < var72; var92 += lsize) {
        double var93 = 0;
        for (int var95 = 0; var95 < var90; var95++) {
          var93 += var71_local[var92 + var72 * var95];
        }
        var75_global[var92] = var93;
      }
    }
    if (var88 && lid == 0 && get_num_groups(0) > 1) {
      var65_global[1] = 0;
    }
  }
}
