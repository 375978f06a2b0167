// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the
// generator of Random123, cuRAND and JAX's `rbg`). A draw is a pure
// function of (key, counter): no state is stored or shared between work
// items, so any element can be drawn by any kernel in any order and the
// stream is reproducible by seed on every device.
//
// The counter of element (i, j) of a draw is (i, j, draw, stream): `stream`
// tells the draws of one key apart (a new one per random leaf), `draw` the
// numbers one element consumes (a rejection sampler's attempts). The key is
// the 64-bit seed. Shared by the generated kernels (random leaves) and the
// hand-written ones (mixture.cl); kernels/src/random.rs is the host's copy.

inline uint4 philox4x32_10(uint4 counter, uint2 key) {
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      key.x += 0x9E3779B9u;
      key.y += 0xBB67AE85u;
    }
    const uint hi0 = mul_hi(0xD2511F53u, counter.x);
    const uint lo0 = 0xD2511F53u * counter.x;
    const uint hi1 = mul_hi(0xCD9E8D57u, counter.z);
    const uint lo1 = 0xCD9E8D57u * counter.z;
    counter = (uint4)(hi1 ^ counter.y ^ key.x, lo1, hi0 ^ counter.w ^ key.y, lo0);
  }
  return counter;
}

inline uint4 random_bits(uint2 key, uint stream, uint i, uint j, uint draw) {
  return philox4x32_10((uint4)(i, j, draw, stream), key);
}

// 52 random bits as a double strictly inside (0, 1): (m + 1/2) / 2^52, so a
// logarithm of it (or of 1 minus it) is always finite.
inline double bits_to_uniform(uint hi, uint lo) {
  const ulong m = ((ulong)(hi >> 6) << 26) | (ulong)(lo >> 6);
  return ((double)m + 0.5) * 0x1p-52;
}

inline double random_uniform(uint2 key, uint stream, uint i, uint j, uint draw) {
  const uint4 r = random_bits(key, stream, i, j, draw);
  return bits_to_uniform(r.x, r.y);
}

// Box-Muller from the four words of one counter (the cosine branch).
inline double random_normal(uint2 key, uint stream, uint i, uint j, uint draw) {
  const uint4 r = random_bits(key, stream, i, j, draw);
  const double u1 = bits_to_uniform(r.x, r.y);
  const double u2 = bits_to_uniform(r.z, r.w);
  return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
}

inline double random_gumbel(uint2 key, uint stream, uint i, uint j, uint draw) {
  return -log(-log(random_uniform(key, stream, i, j, draw)));
}

// Draws reserved for one gamma variate: attempt t of the rejection loop uses
// draws lane + 2t (its normal) and lane + 2t + 1 (its acceptance uniform);
// the last draw of the lane is the uniform that boosts a shape below one.
#define GAMMA_LANE 0x40000000u
#define GAMMA_MAX_ATTEMPTS 1024

// Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 through
// Gamma(shape + 1) * U^(1 / shape). A shape that is not positive and finite
// gives NaN, as does (with probability below 1e-300) running out of attempts.
inline double random_gamma(uint2 key, uint stream, uint i, uint j, uint lane, double shape) {
  if (!(shape > 0.0) || isinf(shape)) {
    return NAN;
  }
  const uint base = lane * GAMMA_LANE;
  const double boosted = shape < 1.0 ? shape + 1.0 : shape;
  const double d = boosted - 1.0 / 3.0;
  const double c = 1.0 / sqrt(9.0 * d);
  for (uint t = 0; t < GAMMA_MAX_ATTEMPTS; t++) {
    const double z = random_normal(key, stream, i, j, base + 2 * t);
    const double v = 1.0 + c * z;
    if (v <= 0.0) {
      continue;
    }
    const double v3 = v * v * v;
    const double u = random_uniform(key, stream, i, j, base + 2 * t + 1);
    if (log(u) < 0.5 * z * z + d - d * v3 + d * log(v3)) {
      double g = d * v3;
      if (shape < 1.0) {
        g *= pow(random_uniform(key, stream, i, j, base + GAMMA_LANE - 1), 1.0 / shape);
      }
      return g;
    }
  }
  return NAN;
}

// Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) on two lanes.
inline double random_beta(uint2 key, uint stream, uint i, uint j, double a, double b) {
  const double x = random_gamma(key, stream, i, j, 0, a);
  const double y = random_gamma(key, stream, i, j, 1, b);
  return x / (x + y);
}
