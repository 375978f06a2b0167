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

// |a_ij - a_ji| must not exceed tolerance * max(|a_ij|, |a_ji|, 1), and both
// are finite or neither is.
__kernel void check_symmetric(const __global T* a, __global int* first, int n, T tolerance) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n || i <= j) {
    return;
  }
  const T lower = a[i + n * j];
  const T upper = a[j + n * i];
  const T scale = fmax(fmax(fabs(lower), fabs(upper)), (T)1);
  // An infinite element beside a finite mirror: the tolerance (inf) would accept it.
  if (!(fabs(lower - upper) <= tolerance * scale) || isfinite(lower) != isfinite(upper)) {
    atomic_min(first, i + n * j);
  }
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
