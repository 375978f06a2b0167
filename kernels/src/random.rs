//! Counter-based random numbers (Philox4x32-10): the OpenCL C source every
//! random kernel includes, the key that selects a stream, and the host's
//! copy of the same functions (the device's draws, bit for bit in the
//! integers, for tests and for host-side steps that must follow one seed).

use std::f64::consts::PI;

/// The OpenCL C of the generator and its distributions (`cl/philox.cl`):
/// `random_bits`, `random_uniform`, `random_normal`, `random_gumbel`,
/// `random_gamma`, `random_beta`, each a pure function of
/// `(key, stream, i, j, draw)`.
pub const PHILOX_SOURCE: &str = include_str!("../cl/philox.cl");

/// Which random numbers a draw produces: the 64-bit `seed` (Philox's key)
/// and a `stream` that tells apart the draws made with one seed. Element
/// `(i, j)` of a draw with this key uses the counter `(i, j, draw, stream)`,
/// so two keys that differ in seed or stream give independent numbers and
/// the same key gives the same numbers, on any device, in any kernel.
///
/// ```
/// use clfuse_kernels::RandomKey;
/// let key = RandomKey::new(42);
/// assert_ne!(key.next_stream(), key);
/// assert_eq!(key.with_stream(7).stream, 7);
/// assert_eq!(key.uniform(3, 4, 0), key.uniform(3, 4, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RandomKey {
    /// Philox's 64-bit key.
    pub seed: u64,
    /// The stream within the seed.
    pub stream: u32,
}

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds (Random123's `philox4x32_10`).
///
/// ```
/// // Random123's known-answer vector for a zero counter and key.
/// let out = clfuse_kernels::philox4x32_10([0; 4], [0; 2]);
/// assert_eq!(out, [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
pub fn philox4x32_10(mut counter: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            key[0] = key[0].wrapping_add(W0);
            key[1] = key[1].wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(counter[0]);
        let p1 = u64::from(M1) * u64::from(counter[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        counter = [
            hi1 ^ counter[1] ^ key[0],
            lo1,
            hi0 ^ counter[3] ^ key[1],
            lo0,
        ];
    }
    counter
}

/// 52 random bits as a double strictly inside (0, 1), as `bits_to_uniform`.
fn bits_to_uniform(hi: u32, lo: u32) -> f64 {
    let m = (u64::from(hi >> 6) << 26) | u64::from(lo >> 6);
    (m as f64 + 0.5) * 2f64.powi(-52)
}

/// Draws per gamma variate (see `GAMMA_LANE` in `cl/philox.cl`).
const GAMMA_LANE: u32 = 0x4000_0000;
const GAMMA_MAX_ATTEMPTS: u32 = 1024;

impl RandomKey {
    /// Stream 0 of `seed`.
    pub fn new(seed: u64) -> Self {
        RandomKey { seed, stream: 0 }
    }

    /// The same seed, stream `stream`.
    pub fn with_stream(self, stream: u32) -> Self {
        RandomKey { stream, ..self }
    }

    /// The same seed, the following stream (wrapping).
    pub fn next_stream(self) -> Self {
        self.with_stream(self.stream.wrapping_add(1))
    }

    /// The key's two words as the `int` kernel arguments the device
    /// functions take (`seed_lo`, `seed_hi`, `stream`), bits unchanged.
    pub fn kernel_words(self) -> [i32; 3] {
        [
            self.seed as u32 as i32,
            (self.seed >> 32) as u32 as i32,
            self.stream as i32,
        ]
    }

    /// The four words of element `(i, j)`'s draw `draw`.
    pub fn bits(self, i: u32, j: u32, draw: u32) -> [u32; 4] {
        philox4x32_10(
            [i, j, draw, self.stream],
            [self.seed as u32, (self.seed >> 32) as u32],
        )
    }

    /// Uniform on (0, 1), as `random_uniform`.
    pub fn uniform(self, i: u32, j: u32, draw: u32) -> f64 {
        let r = self.bits(i, j, draw);
        bits_to_uniform(r[0], r[1])
    }

    /// Standard normal, as `random_normal` (Box-Muller, cosine branch).
    pub fn normal(self, i: u32, j: u32, draw: u32) -> f64 {
        let r = self.bits(i, j, draw);
        let (u1, u2) = (bits_to_uniform(r[0], r[1]), bits_to_uniform(r[2], r[3]));
        (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
    }

    /// Standard Gumbel, as `random_gumbel`.
    pub fn gumbel(self, i: u32, j: u32, draw: u32) -> f64 {
        -(-self.uniform(i, j, draw).ln()).ln()
    }

    /// Gamma(`shape`, 1) on lane `lane`, as `random_gamma` (Marsaglia and
    /// Tsang; NaN for a shape that is not positive and finite).
    pub fn gamma(self, i: u32, j: u32, lane: u32, shape: f64) -> f64 {
        if shape.is_nan() || shape <= 0.0 || shape.is_infinite() {
            return f64::NAN;
        }
        let base = lane.wrapping_mul(GAMMA_LANE);
        let boosted = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = boosted - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        for t in 0..GAMMA_MAX_ATTEMPTS {
            let z = self.normal(i, j, base + 2 * t);
            let v = 1.0 + c * z;
            if v <= 0.0 {
                continue;
            }
            let v3 = v * v * v;
            let u = self.uniform(i, j, base + 2 * t + 1);
            if u.ln() < 0.5 * z * z + d - d * v3 + d * v3.ln() {
                let mut g = d * v3;
                if shape < 1.0 {
                    g *= self.uniform(i, j, base + GAMMA_LANE - 1).powf(1.0 / shape);
                }
                return g;
            }
        }
        f64::NAN
    }

    /// Beta(`a`, `b`), as `random_beta`.
    pub fn beta(self, i: u32, j: u32, a: f64, b: f64) -> f64 {
        let x = self.gamma(i, j, 0, a);
        let y = self.gamma(i, j, 1, b);
        x / (x + y)
    }
}
