// Cholesky decomposition of a small block (paper section 3.3.1): the
// classic column-by-column algorithm in ONE work-group, in place on the
// n x n block of `a` at `offset` (leading dimension `lda`); only the lower
// triangle is read and written. Work items share each step's column and
// trailing update and synchronise after every step.
//
// A pivot that is not positive (or NaN) stops every work item and records
// its global index (`index_base` + k) with atomic_min in `first_failure`.

__kernel void cholesky_block(__global T* a, __global int* first_failure, int n, int offset, int lda, int index_base) {
  __local int failed;
  const int lid = get_local_id(0);
  const int threads = get_local_size(0);
  __global T* block = a + offset;
  if (lid == 0) {
    failed = *first_failure < index_base + n;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // An earlier block already failed: everything after it is meaningless.
  if (failed) {
    return;
  }
  for (int k = 0; k < n; k++) {
    if (lid == 0) {
      const T pivot = block[k + lda * k];
      if (!(pivot > 0)) {
        failed = 1;
        atomic_min(first_failure, index_base + k);
      } else {
        block[k + lda * k] = sqrt(pivot);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (failed) {
      return;
    }
    const T diagonal = block[k + lda * k];
    for (int i = k + 1 + lid; i < n; i += threads) {
      block[i + lda * k] /= diagonal;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    // Trailing update of the lower triangle (i >= j > k), all elements in
    // parallel: element e of the (n - k - 1)² square, column by column.
    const int rest = n - k - 1;
    for (int e = lid; e < rest * rest; e += threads) {
      const int i = k + 1 + e % rest;
      const int j = k + 1 + e / rest;
      if (i >= j) {
        block[i + lda * j] -= block[i + lda * k] * block[j + lda * k];
      }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// The same for blocks of at most CHOLESKY_LOCAL rows, factored in local
// memory: the block is read once, every step synchronises on local memory
// only, and the result is written once.
#ifndef CHOLESKY_LOCAL
#define CHOLESKY_LOCAL 64
#endif
__kernel void cholesky_block_local(__global T* a, __global int* first_failure, int n, int offset, int lda, int index_base) {
  __local T block[CHOLESKY_LOCAL * CHOLESKY_LOCAL];
  __local int failed;
  const int lid = get_local_id(0);
  const int threads = get_local_size(0);
  __global T* source = a + offset;
  if (lid == 0) {
    failed = *first_failure != INT_MAX;
  }
  for (int j = 0; j < n; j++) {
    for (int i = j + lid; i < n; i += threads) {
      block[i + CHOLESKY_LOCAL * j] = source[i + lda * j];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (failed) {
    return;
  }
  for (int k = 0; k < n; k++) {
    if (lid == 0) {
      const T pivot = block[k + CHOLESKY_LOCAL * k];
      if (!(pivot > 0)) {
        failed = 1;
        atomic_min(first_failure, index_base + k);
      } else {
        block[k + CHOLESKY_LOCAL * k] = sqrt(pivot);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (failed) {
      return;
    }
    const T diagonal = block[k + CHOLESKY_LOCAL * k];
    for (int i = k + 1 + lid; i < n; i += threads) {
      block[i + CHOLESKY_LOCAL * k] /= diagonal;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int rest = n - k - 1;
    for (int e = lid; e < rest * rest; e += threads) {
      const int i = k + 1 + e % rest;
      const int j = k + 1 + e / rest;
      if (i >= j) {
        block[i + CHOLESKY_LOCAL * j] -= block[i + CHOLESKY_LOCAL * k] * block[j + CHOLESKY_LOCAL * k];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int j = 0; j < n; j++) {
    for (int i = j + lid; i < n; i += threads) {
      source[i + lda * j] = block[i + CHOLESKY_LOCAL * j];
    }
  }
}
