// Blocked substitution: solves op(S) X = B for a triangular op(S), where S is
// n x n (column-major) and op(S) is S or its transpose, B and X are n x m.
// O(n^2 m) work, against the O(n^3) of forming the inverse: the solve a GP
// log density needs with its one right-hand side.
//
// One launch per diagonal block of SOLVE_BLOCK rows, walked down (lower
// op(S), forward substitution) or up (upper op(S), backward). In the launch
// for the block starting at k0, every work-group
//  1. reads the block's right-hand side, already updated by every earlier
//     block, and solves the small triangular system in local memory;
//  2. subtracts the block's contribution from its own SOLVE_BLOCK rows of
//     the rows still unsolved: b[rows] -= op(S)[rows, block] * x[block].
// Work-group 0 also writes the block of X. Step 1 reads rows of `b` that no
// work-group writes in the same launch, so the launches need no other
// synchronisation than their order.

#ifndef SOLVE_BLOCK
#define SOLVE_BLOCK 32
#endif
#ifndef SOLVE_COLS
#define SOLVE_COLS 8
#endif

// tile[r][c] = op(S)[row0 + r][col0 + c] for r < rows, c < cols; consecutive
// work items read consecutive addresses of S whichever way it is read.
inline void load_op_tile(__local T (*tile)[SOLVE_BLOCK + 1], const __global T* s, int n, int row0, int col0, int rows, int cols, int transposed) {
  const int thread = get_local_id(0) + SOLVE_BLOCK * get_local_id(1);
  for (int e = thread; e < SOLVE_BLOCK * SOLVE_BLOCK; e += SOLVE_BLOCK * SOLVE_COLS) {
    const int fast = e % SOLVE_BLOCK;
    const int slow = e / SOLVE_BLOCK;
    const int r = transposed ? slow : fast;
    const int c = transposed ? fast : slow;
    if (r < rows && c < cols) {
      const size_t row = transposed ? col0 + c : row0 + r;
      const size_t col = transposed ? row0 + r : col0 + c;
      tile[r][c] = s[row + n * col];
    }
  }
}

__kernel void tri_solve_step(const __global T* s, __global T* b, __global T* x, int n, int m, int k0, int transposed, int upper) {
  __local T diagonal[SOLVE_BLOCK][SOLVE_BLOCK + 1];
  __local T panel[SOLVE_BLOCK][SOLVE_BLOCK + 1];
  __local T solution[SOLVE_BLOCK][SOLVE_COLS];
  const int r = get_local_id(0);
  const int c = get_local_id(1);
  const int col = get_group_id(1) * SOLVE_COLS + c;
  const int size = min(SOLVE_BLOCK, n - k0);

  load_op_tile(diagonal, s, n, k0, k0, size, size, transposed);
  if (r < size && col < m) {
    solution[r][c] = b[k0 + r + (size_t)n * col];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 0; step < size; step++) {
    const int j = upper ? size - 1 - step : step;
    if (r == j && col < m) {
      solution[j][c] /= diagonal[j][j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int below = upper ? r < j : (r > j && r < size);
    if (below && col < m) {
      solution[r][c] -= diagonal[r][j] * solution[j][c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (get_group_id(0) == 0 && r < size && col < m) {
    x[k0 + r + (size_t)n * col] = solution[r][c];
  }

  const int group = get_group_id(0);
  const int row0 = upper ? group * SOLVE_BLOCK : k0 + size + group * SOLVE_BLOCK;
  const int rows = min(SOLVE_BLOCK, (upper ? k0 : n) - row0);
  if (rows > 0) {
    load_op_tile(panel, s, n, row0, k0, rows, size, transposed);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (r < rows && col < m) {
      T update = 0;
      for (int k = 0; k < size; k++) {
        update += panel[r][k] * solution[k][c];
      }
      b[row0 + r + (size_t)n * col] -= update;
    }
  }
}
