// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}

inline float log1p_expf(float x) {
  return fmax(x, 0.0f) + log1p(exp(-fabs(x)));
}

inline float inv_logitf(float x) {
  float e = exp(-fabs(x));
  return x < 0 ? e / (1 + e) : 1 / (1 + e);
}

inline float log_sum_expf(float a, float b) {
  if (a == -INFINITY) {
    return b;
  }
  if (a == INFINITY && b == INFINITY) {
    return INFINITY;
  }
  if (a > b) {
    return a + log1p_expf(b - a);
  }
  return b + log1p_expf(a - b);
}

__kernel void calculate(
    __global const float* restrict var1_global,
    int var1_rows,
    int var1_view,
    float var4,
    __global float* restrict var7_global,
    int var7_rows,
    int rows,
    int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) {
    return;
  }
  float var1 = 0;
  if (in_view(i, j, var1_view)) {
    var1 = var1_global[i + var1_rows * j];
  }
  float var2 = log1p_expf(var1);
  float var3 = inv_logitf(var1);
  float var5 = var3 * var4;
  float var6 = log_sum_expf(var2, var5);
  var7_global[i + var7_rows * j] = var6;
}
