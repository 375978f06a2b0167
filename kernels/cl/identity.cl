// Writes the identity into a rows x cols column-major matrix.
__kernel void identity_kernel(__global T* a, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  a[i + rows * j] = i == j ? 1 : 0;
}
