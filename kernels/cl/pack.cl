// Packed triangular storage (paper section 2.2): only the triangle of an
// n x n column-major matrix, column by column.
// Lower: column j holds rows j..n-1 and starts at j * n - j * (j - 1) / 2.
// Upper: column j holds rows 0..j and starts at j * (j + 1) / 2.
// `view` is 1 for lower and 2 for upper, as in View::bits().

__kernel void pack(__global T* packed, const __global T* unpacked, int n, int view) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) {
    return;
  }
  if (view == 1 && i >= j) {
    packed[j * n - j * (j - 1) / 2 + i - j] = unpacked[i + n * j];
  } else if (view == 2 && i <= j) {
    packed[j * (j + 1) / 2 + i] = unpacked[i + n * j];
  }
}

__kernel void unpack(__global T* unpacked, const __global T* packed, int n, int view) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) {
    return;
  }
  T value = 0;
  if (view == 1 && i >= j) {
    value = packed[j * n - j * (j - 1) / 2 + i - j];
  } else if (view == 2 && i <= j) {
    value = packed[j * (j + 1) / 2 + i];
  }
  unpacked[i + n * j] = value;
}
