// Seed 004's massive mixture: n points (x, n x P, column-major) under k
// multivariate normal components with full covariances.
//
// A component is given by the Cholesky factor L of its precision matrix
// (inverse covariance = L Lᵀ), packed as COMPONENT_STRIDE doubles:
//   the upper triangle of Lᵀ by rows (Lᵀ[a][b] = L[b][a], b >= a),
//   the offsets Lᵀμ (P),
//   the constant log π - P/2 log 2π + Σ log L[a][a] (1),
// so that log(π N(x | μ, Σ)) = constant - ½ ‖Lᵀx - Lᵀμ‖². The kernels stage
// COMPONENT_BLOCK components at a time in local memory (every work item
// reads the same component at once: a broadcast) and keep ROWS_PER_ITEM
// rows of x in registers, so each staged value serves several rows.
//
// Compile-time: P, LOCAL_SIZE, COMPONENT_BLOCK and ROWS_PER_ITEM (the
// density kernels), STATISTICS_BLOCK (the statistics).

#define TRIANGLE (P * (P + 1) / 2)
#define COMPONENT_STRIDE (TRIANGLE + P + 1)
// The largest Gumbel noise bits_to_uniform allows: -log(-log(1 - 2^-53)).
#define GUMBEL_MAX 36.8

// Stages components [first, first + count) into `staged`.
inline void stage_components(__local double* staged, const __global double* components, int first, int count) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = get_local_id(0); e < count * COMPONENT_STRIDE; e += LOCAL_SIZE) {
    staged[e] = components[first * COMPONENT_STRIDE + e];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// log(π_c N(x | μ_c, Σ_c)) of the work item's rows for the staged component
// at `c`: each staged value is read once and serves every row.
inline void component_log_densities(const __local double* c, double x[ROWS_PER_ITEM][P],
                                    double density[ROWS_PER_ITEM]) {
  double quadratic[ROWS_PER_ITEM];
  double y[ROWS_PER_ITEM];
#pragma unroll
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    quadratic[r] = 0;
  }
  int e = 0;
#pragma unroll
  for (int a = 0; a < P; a++) {
    const double offset = c[TRIANGLE + a];
#pragma unroll
    for (int r = 0; r < ROWS_PER_ITEM; r++) {
      y[r] = -offset;
    }
#pragma unroll
    for (int b = a; b < P; b++) {
      const double u = c[e++];
#pragma unroll
      for (int r = 0; r < ROWS_PER_ITEM; r++) {
        y[r] = fma(u, x[r][b], y[r]);
      }
    }
#pragma unroll
    for (int r = 0; r < ROWS_PER_ITEM; r++) {
      quadratic[r] = fma(y[r], y[r], quadratic[r]);
    }
  }
  const double log_constant = c[TRIANGLE + P];
#pragma unroll
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    density[r] = fma(-0.5, quadratic[r], log_constant);
  }
}

// The rows a work item takes: ROWS_PER_ITEM of them, LOCAL_SIZE apart
// (so that each load of x is coalesced).
#define ROW(r) ((int)get_group_id(0) * LOCAL_SIZE * ROWS_PER_ITEM + (r) * LOCAL_SIZE + (int)get_local_id(0))

inline void load_rows(const __global double* x, int n, double rows[ROWS_PER_ITEM][P]) {
#pragma unroll
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    const int i = min(ROW(r), n - 1);
#pragma unroll
    for (int a = 0; a < P; a++) {
      rows[r][a] = x[i + (size_t)n * a];
    }
  }
}

// The indicator step of the Gibbs sampler, fused with the E-step: for each
// row, every component's log density and a categorical draw among them by
// Gumbel-max (the counter of (i, c) is that of categorical_logit_rng's, so
// both draw the same z from the same logits). The n x k probabilities are
// never written; `chosen` gets the drawn component's log density (its sum
// is the complete-data log likelihood). A component whose density plus the
// largest possible noise cannot beat the row's best draws no noise.
__kernel void mixture_indicators(const __global double* x, const __global double* components,
                                 __global int* z, __global double* chosen, int n, int k,
                                 int seed_lo, int seed_hi, int stream) {
  __local double staged[COMPONENT_BLOCK * COMPONENT_STRIDE];
  const uint2 key = (uint2)((uint)seed_lo, (uint)seed_hi);
  double rows[ROWS_PER_ITEM][P];
  load_rows(x, n, rows);
  double best[ROWS_PER_ITEM];
  double best_density[ROWS_PER_ITEM];
  int choice[ROWS_PER_ITEM];
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    best[r] = -INFINITY;
    best_density[r] = NAN;
    choice[r] = -1;
  }
  for (int first = 0; first < k; first += COMPONENT_BLOCK) {
    const int count = min(COMPONENT_BLOCK, k - first);
    stage_components(staged, components, first, count);
    for (int c = 0; c < count; c++) {
      double density[ROWS_PER_ITEM];
      component_log_densities(staged + c * COMPONENT_STRIDE, rows, density);
#pragma unroll
      for (int r = 0; r < ROWS_PER_ITEM; r++) {
        if (density[r] + GUMBEL_MAX > best[r]) {
          const double perturbed = density[r] + random_gumbel(key, (uint)stream, (uint)ROW(r), (uint)(first + c), 0);
          if (perturbed > best[r]) {
            best[r] = perturbed;
            best_density[r] = density[r];
            choice[r] = first + c;
          }
        }
      }
    }
  }
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    const int i = ROW(r);
    if (i < n) {
      z[i] = choice[r];
      chosen[i] = best_density[r];
    }
  }
}

// The E-step alone: the n x k log responsibilities log π_c(x_i) (each row
// normalised by its log-sum-exp, kept in one pass by a running maximum),
// and each row's log density log g(x_i).
__kernel void mixture_log_responsibilities(const __global double* x, const __global double* components,
                                           __global double* responsibilities, __global double* row_log_density,
                                           int n, int k) {
  __local double staged[COMPONENT_BLOCK * COMPONENT_STRIDE];
  double rows[ROWS_PER_ITEM][P];
  load_rows(x, n, rows);
  double max[ROWS_PER_ITEM];
  double sum[ROWS_PER_ITEM];
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    max[r] = -INFINITY;
    sum[r] = 0;
  }
  for (int first = 0; first < k; first += COMPONENT_BLOCK) {
    const int count = min(COMPONENT_BLOCK, k - first);
    stage_components(staged, components, first, count);
    for (int c = 0; c < count; c++) {
      double density[ROWS_PER_ITEM];
      component_log_densities(staged + c * COMPONENT_STRIDE, rows, density);
#pragma unroll
      for (int r = 0; r < ROWS_PER_ITEM; r++) {
        const int i = ROW(r);
        if (i < n) {
          responsibilities[i + (size_t)n * (first + c)] = density[r];
        }
        if (density[r] > max[r]) {
          sum[r] = sum[r] * exp(max[r] - density[r]) + 1;
          max[r] = density[r];
        } else if (density[r] > -INFINITY) {
          sum[r] += exp(density[r] - max[r]);
        }
      }
    }
  }
  for (int r = 0; r < ROWS_PER_ITEM; r++) {
    const int i = ROW(r);
    if (i >= n) {
      continue;
    }
    const double total = max[r] + log(sum[r]);
    row_log_density[i] = total;
    for (int c = 0; c < k; c++) {
      responsibilities[i + (size_t)n * c] -= total;
    }
  }
}

// Sufficient statistics per component, from the indicators: for component
// c and statistic s (STATISTICS of them: 1, then x_a, then x_a x_b for
// a <= b by rows), Σ over the rows with z_i = c of feature s of x_i. Work
// group (chunk, block) walks its chunk LOCAL_SIZE rows at a time, copies
// the rows whose component is in its block into local memory (packed, in
// order), and adds them to its STATISTICS_BLOCK x STATISTICS accumulators; work item s owns column s, so
// nothing is shared and no atomics are needed, and the order of additions
// is fixed (the same sums on every run). `partial` holds one k x STATISTICS
// matrix per chunk (summed afterwards by add_batch).
#define STATISTICS (1 + P + TRIANGLE)

__kernel void mixture_statistics(const __global double* x, const __global int* z, __global double* partial,
                                 int n, int k, int rows_per_chunk) {
  __local double accumulators[STATISTICS_BLOCK * STATISTICS];
  __local double tile[LOCAL_SIZE * P];
  __local int tile_component[LOCAL_SIZE];
  // The tile's rows in this block, in order: an exclusive scan of the
  // flags gives each its place, so the additions keep their order.
  __local int place[LOCAL_SIZE];
  __local int in_block[LOCAL_SIZE];
  const int s = get_local_id(0);
  const int chunk = get_group_id(0);
  const int first = get_group_id(1) * STATISTICS_BLOCK;
  // Statistic s is the product of the row's elements fa and fb (-1: none).
  int fa = -1;
  int fb = -1;
  if (s >= 1 && s <= P) {
    fa = s - 1;
  } else if (s > P && s < STATISTICS) {
    int e = s - 1 - P;
    fa = 0;
    while (e >= P - fa) {
      e -= P - fa;
      fa++;
    }
    fb = fa + e;
  }
  for (int e = s; e < STATISTICS_BLOCK * STATISTICS; e += LOCAL_SIZE) {
    accumulators[e] = 0;
  }
  const int begin = chunk * rows_per_chunk;
  const int end = min(n, begin + rows_per_chunk);
  for (int start = begin; start < end; start += LOCAL_SIZE) {
    const int rows = min(LOCAL_SIZE, end - start);
    const int c = s < rows ? z[start + s] - first : -1;
    const int mine = c >= 0 && c < STATISTICS_BLOCK;
    barrier(CLK_LOCAL_MEM_FENCE);
    place[s] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = 1; step < LOCAL_SIZE; step *= 2) {
      const int add = s >= step ? place[s - step] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      place[s] += add;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int matched = place[LOCAL_SIZE - 1];
    if (mine) {
      const int m = place[s] - 1;
      in_block[m] = c;
      for (int a = 0; a < P; a++) {
        tile[m * P + a] = x[start + s + (size_t)n * a];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (s < STATISTICS) {
      for (int m = 0; m < matched; m++) {
        double f = fa < 0 ? 1.0 : tile[m * P + fa];
        if (fb >= 0) {
          f *= tile[m * P + fb];
        }
        accumulators[in_block[m] * STATISTICS + s] += f;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (s < STATISTICS) {
    for (int c = 0; c < STATISTICS_BLOCK && first + c < k; c++) {
      partial[(size_t)chunk * k * STATISTICS + (size_t)(first + c) * STATISTICS + s] = accumulators[c * STATISTICS + s];
    }
  }
}

// The features of the statistics, one row per point: 1, x_a, then x_a x_b
// for a <= b by rows (n x STATISTICS, column-major), so that responsibility
// -weighted statistics are one product featuresᵀ · responsibilities.
__kernel void mixture_features(const __global double* x, __global double* features, int n) {
  const int i = get_global_id(0);
  if (i >= n) {
    return;
  }
  double row[P];
#pragma unroll
  for (int a = 0; a < P; a++) {
    row[a] = x[i + (size_t)n * a];
  }
  features[i] = 1.0;
  int s = 1;
#pragma unroll
  for (int a = 0; a < P; a++) {
    features[i + (size_t)n * s++] = row[a];
  }
#pragma unroll
  for (int a = 0; a < P; a++) {
#pragma unroll
    for (int b = a; b < P; b++) {
      features[i + (size_t)n * s++] = row[a] * row[b];
    }
  }
}
