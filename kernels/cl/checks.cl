// Checks on floating-point matrices (kept apart from basic.cl, which is
// also compiled for int). Views as in basic.cl.

#define IN_VIEW(i, j, view) ((i) == (j) || ((i) > (j) && ((view) & 1)) || ((i) < (j) && ((view) & 2)))

// The checks record the first offending element's linear index (column-major)
// with atomic_min into `first`, which the host initialises to INT_MAX.

__kernel void check_nan(const __global T* a, __global int* first, int rows, int cols, int view_a) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols || !IN_VIEW(i, j, view_a)) {
    return;
  }
  if (isnan(a[i + rows * j])) {
    atomic_min(first, i + rows * j);
  }
}

// Whether a_ij and its mirror a_ji differ: |a_ij - a_ji| must not exceed
// tolerance * max(|a_ij|, |a_ji|, 1), and both are finite or neither is.
inline bool asymmetric(T lower, T upper, T tolerance) {
  const T scale = fmax(fmax(fabs(lower), fabs(upper)), (T)1);
  // An infinite element beside a finite mirror: the tolerance (inf) would accept it.
  return !(fabs(lower - upper) <= tolerance * scale) || isfinite(lower) != isfinite(upper);
}

// Symmetry by 32 x 32 tile pairs. Work-group (SYMMETRY_TILE, SYMMETRY_ROWS)
// takes the tile pair (group 0, group 1) when group 0 >= group 1 (the others
// return at once): the mirror tile is read along its columns into local
// memory, so that both reads of global memory are coalesced, and compared
// from there transposed. The first asymmetric element below the diagonal
// goes to `first_asymmetric`. With `out` (else 0), the lower tiles are also
// copied there (whole tiles on the diagonal; the tiles above are not
// written) and the lower triangle is checked to be finite
// (`first_non_finite`).
#define SYMMETRY_TILE 32
#define SYMMETRY_ROWS 8

inline void symmetric_tile_pair(const __global T* a, __global T* out, __global int* first_non_finite, __global int* first_asymmetric, int n, T tolerance, __local T (*mirror)[SYMMETRY_TILE + 1]) {
  const int tile_row = get_group_id(0);
  const int tile_col = get_group_id(1);
  if (tile_col > tile_row) {
    return;
  }
  // mirror[c][r]: element (r, c) of the mirror tile.
  const int r = get_local_id(0);
  for (int c = get_local_id(1); c < SYMMETRY_TILE; c += SYMMETRY_ROWS) {
    const int i = tile_col * SYMMETRY_TILE + r;
    const int j = tile_row * SYMMETRY_TILE + c;
    mirror[c][r] = (i < n && j < n) ? a[i + n * j] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int c = get_local_id(1); c < SYMMETRY_TILE; c += SYMMETRY_ROWS) {
    const int i = tile_row * SYMMETRY_TILE + r;
    const int j = tile_col * SYMMETRY_TILE + c;
    if (i < n && j < n) {
      const T lower = a[i + n * j];
      if (out) {
        out[i + n * j] = lower;
        if (i >= j && !isfinite(lower)) {
          atomic_min(first_non_finite, i + n * j);
        }
      }
      // a_ji is element (c, r) of the mirror tile.
      if (i > j && asymmetric(lower, mirror[r][c], tolerance)) {
        atomic_min(first_asymmetric, i + n * j);
      }
    }
  }
}

__kernel void check_symmetric(const __global T* a, __global int* first, int n, T tolerance) {
  // One column of padding keeps the transposed reads off a single bank.
  __local T mirror[SYMMETRY_TILE][SYMMETRY_TILE + 1];
  symmetric_tile_pair(a, 0, 0, first, n, tolerance, mirror);
}

// Cholesky's input checks and its working copy in one pass over a.
__kernel void copy_lower_check_symmetric(const __global T* a, __global T* out, __global int* first_non_finite, __global int* first_asymmetric, int n, T tolerance) {
  __local T mirror[SYMMETRY_TILE][SYMMETRY_TILE + 1];
  symmetric_tile_pair(a, out, first_non_finite, first_asymmetric, n, tolerance, mirror);
}

__kernel void check_diagonal_zeros(const __global T* a, __global int* first, int rows, int cols) {
  const int i = get_global_id(0);
  if (i >= min(rows, cols)) {
    return;
  }
  if (a[i + rows * i] == 0) {
    atomic_min(first, i + rows * i);
  }
}

// NaN, inf or -inf inside the view.
__kernel void check_finite(const __global T* a, __global int* first, int rows, int cols, int view_a) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols || !IN_VIEW(i, j, view_a)) {
    return;
  }
  if (!isfinite(a[i + rows * j])) {
    atomic_min(first, i + rows * j);
  }
}

// out = a, element by element, checking the part inside `view_checked` for
// NaN and inf on the way: a leaf that copies its input anyway checks it
// with no pass of its own.
__kernel void copy_check_finite(const __global T* a, __global T* out, __global int* first, int rows, int cols, int view_checked) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  const T value = a[i + rows * j];
  out[i + rows * j] = value;
  if (IN_VIEW(i, j, view_checked) && !isfinite(value)) {
    atomic_min(first, i + rows * j);
  }
}
