// Batched lower-triangular inverse (paper section 3.2, seed "OpenCL kernels"):
//  1. diag_inv inverts the BLOCK x BLOCK blocks on the diagonal, one
//     work-group per block, starting from batch_identity's identities;
//  2. for sizes s = BLOCK, 2 BLOCK, 4 BLOCK, ... the pairs of inverted
//     diagonal blocks C1 (s x s) and C2 (s2 x s2) below them give the block
//     between them: C3 = -C2 * A3 * C1, in two batched multiplies:
//     inv_lower_tri_multiply (temp = C2 * A3) and
//     neg_rect_lower_tri_multiply (C3 = -temp * C1).
// Everything happens in place in `a` (n x n, column-major); the last block and
// the last pair may be smaller, so any n works.

#ifndef BLOCK
#define BLOCK 32
#endif
#ifndef TRI_TS
#define TRI_TS 32
#endif
#ifndef TRI_WPT
#define TRI_WPT 4
#endif
#define TRI_RTS (TRI_TS / TRI_WPT)

// One work-group (BLOCK work items) per diagonal block; work item `col`
// solves L_block x = e_col by forward substitution into its column of the
// block's identity in `inv`, then the inverse replaces the block in `a`.
__kernel void diag_inv(__global T* a, __global T* inv, int n) {
  __local T block[BLOCK][BLOCK + 1];
  const int b = get_group_id(0);
  const int col = get_local_id(0);
  const int offset = b * BLOCK;
  const int size = min(BLOCK, n - offset);
  for (int r = 0; r < size; r++) {
    if (col < size) {
      block[r][col] = a[(offset + r) + n * (offset + col)];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global T* x = inv + b * BLOCK * BLOCK + BLOCK * col;
  if (col < size) {
    for (int r = col; r < size; r++) {
      T sum = x[r];
      for (int k = col; k < r; k++) {
        sum -= block[r][k] * x[k];
      }
      x[r] = sum / block[r][r];
    }
    for (int r = 0; r < size; r++) {
      a[(offset + r) + n * (offset + col)] = r >= col ? x[r] : 0;
    }
  }
}

// c (rows x cols) = sign * op1 (rows x depth) * op2 (depth x cols), where the
// lower-triangular operand (op1 when `first_is_lower`, else op2) bounds the
// k range of each tile. Work-group: TRI_RTS x TRI_RTS threads, each
// accumulating a TRI_WPT x TRI_WPT block of a TRI_TS x TRI_TS tile.
inline void tri_tile_multiply(const __global T* op1, int ld1, const __global T* op2, int ld2, __global T* c, int ldc, int rows, int cols, int depth, int first_is_lower, T sign, __local T (*tile1)[TRI_TS], __local T (*tile2)[TRI_TS]) {
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int thread = tx + TRI_RTS * ty;
  const int row0 = get_group_id(0) * TRI_TS;
  const int col0 = get_group_id(1) * TRI_TS;
  int k_begin = 0;
  int k_end = depth;
  if (first_is_lower) {
    k_end = min(k_end, row0 + TRI_TS);
  } else {
    k_begin = min(col0, depth);
  }
  T acc[TRI_WPT][TRI_WPT];
  for (int r = 0; r < TRI_WPT; r++) {
    for (int s = 0; s < TRI_WPT; s++) {
      acc[r][s] = 0;
    }
  }
  for (int k0 = k_begin; k0 < k_end; k0 += TRI_TS) {
    for (int l = thread; l < TRI_TS * TRI_TS; l += TRI_RTS * TRI_RTS) {
      const int ii = l % TRI_TS;
      const int kk = l / TRI_TS;
      const int i = row0 + ii;
      const int k = k0 + kk;
      const bool zero = first_is_lower && k > i;
      tile1[kk][ii] = (i < rows && k < k_end && !zero) ? op1[i + ld1 * k] : 0;
    }
    for (int l = thread; l < TRI_TS * TRI_TS; l += TRI_RTS * TRI_RTS) {
      const int kk = l % TRI_TS;
      const int jj = l / TRI_TS;
      const int j = col0 + jj;
      const int k = k0 + kk;
      const bool zero = !first_is_lower && k < j;
      tile2[kk][jj] = (j < cols && k < k_end && !zero) ? op2[k + ld2 * j] : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TRI_TS; kk++) {
      T reg1[TRI_WPT];
      T reg2[TRI_WPT];
      for (int r = 0; r < TRI_WPT; r++) {
        reg1[r] = tile1[kk][tx + r * TRI_RTS];
      }
      for (int s = 0; s < TRI_WPT; s++) {
        reg2[s] = tile2[kk][ty + s * TRI_RTS];
      }
      for (int r = 0; r < TRI_WPT; r++) {
        for (int s = 0; s < TRI_WPT; s++) {
          acc[r][s] = fma(reg1[r], reg2[s], acc[r][s]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int r = 0; r < TRI_WPT; r++) {
    const int i = row0 + tx + r * TRI_RTS;
    for (int s = 0; s < TRI_WPT; s++) {
      const int j = col0 + ty + s * TRI_RTS;
      if (i < rows && j < cols) {
        c[i + ldc * j] = sign * acc[r][s];
      }
    }
  }
}

// Pair p (get_global_id(2)) starts at base = 2 * s * p: C1 is the s x s block
// at (base, base), C2 the s2 x s2 block at (base + s, base + s) and A3 the
// s2 x s block at (base + s, base). temp_p (s2 x s) = C2 * A3.
__kernel void inv_lower_tri_multiply(const __global T* a, __global T* temp, int n, int s) {
  __local T tile1[TRI_TS][TRI_TS];
  __local T tile2[TRI_TS][TRI_TS];
  const int base = 2 * s * get_global_id(2);
  const int s2 = min(s, n - base - s);
  if (s2 <= 0) {
    return;
  }
  const __global T* c2 = a + (base + s) + n * (base + s);
  const __global T* a3 = a + (base + s) + n * base;
  tri_tile_multiply(c2, n, a3, n, temp + get_global_id(2) * s * s, s2, s2, s, s2, 1, 1, tile1, tile2);
}

// C3 (the s2 x s block at (base + s, base)) = -temp_p * C1.
__kernel void neg_rect_lower_tri_multiply(__global T* a, const __global T* temp, int n, int s) {
  __local T tile1[TRI_TS][TRI_TS];
  __local T tile2[TRI_TS][TRI_TS];
  const int base = 2 * s * get_global_id(2);
  const int s2 = min(s, n - base - s);
  if (s2 <= 0) {
    return;
  }
  const __global T* c1 = a + base + n * base;
  __global T* c3 = a + (base + s) + n * base;
  tri_tile_multiply(temp + get_global_id(2) * s * s, s2, c1, n, c3, n, s2, s, s, 0, -1, tile1, tile2);
}
