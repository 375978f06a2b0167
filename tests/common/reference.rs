//! Plain-Rust CPU references for the element-wise functions.
#![allow(dead_code)]

pub fn inv_logit(x: f64) -> f64 {
    if x < 0.0 {
        let e = x.exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}
pub fn logit(x: f64) -> f64 {
    (x / (1.0 - x)).ln()
}
pub fn log1p_exp(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}
pub fn log_inv_logit(x: f64) -> f64 {
    -log1p_exp(-x)
}
pub fn log1m_inv_logit(x: f64) -> f64 {
    -log1p_exp(x)
}
pub fn log1m_exp(x: f64) -> f64 {
    if x > 0.0 {
        f64::NAN
    } else if x > -std::f64::consts::LN_2 {
        (-x.exp_m1()).ln()
    } else {
        (-x.exp()).ln_1p()
    }
}
pub fn log1m(x: f64) -> f64 {
    (-x).ln_1p()
}
pub fn phi(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}
/// `log Φ(x)`: from `libm::erfc` down to -35, below by the continued
/// fraction of the Mills ratio `Φ(x)/φ(x) = 1/(t + 1/(t + 2/(t + ...)))`,
/// `t = -x` (not the kernel's asymptotic series).
pub fn log_phi(x: f64) -> f64 {
    if x > 0.0 {
        (-0.5 * libm::erfc(x / std::f64::consts::SQRT_2)).ln_1p()
    } else if x > -35.0 {
        (0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)).ln()
    } else {
        let t = -x;
        let mut f = t;
        for k in (1..=200).rev() {
            f = t + k as f64 / f;
        }
        -0.5 * x * x - 0.918_938_533_204_672_8 - f.ln()
    }
}
pub fn phi_approx(x: f64) -> f64 {
    inv_logit(0.07056 * x.powi(3) + 1.5976 * x)
}
pub fn inv_phi(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}
pub fn digamma(x: f64) -> f64 {
    statrs::function::gamma::digamma(x)
}
/// Series sum with an Euler–Maclaurin tail (independent of the kernel's recurrence).
pub fn trigamma(x: f64) -> f64 {
    if x < 0.0 {
        let s = (std::f64::consts::PI * x).sin();
        return -trigamma(1.0 - x) + std::f64::consts::PI.powi(2) / (s * s);
    }
    let n = 100_000.0;
    let mut sum = 0.0;
    let mut k = 0.0;
    while k < n {
        sum += 1.0 / ((x + k) * (x + k));
        k += 1.0;
    }
    let t = x + n;
    sum + 1.0 / t + 1.0 / (2.0 * t * t) + 1.0 / (6.0 * t * t * t)
}
pub fn lbeta(a: f64, b: f64) -> f64 {
    libm::lgamma(a) + libm::lgamma(b) - libm::lgamma(a + b)
}
pub fn binomial_coefficient_log(n: f64, k: f64) -> f64 {
    if k == 0.0 || n == k {
        0.0
    } else {
        libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0)
    }
}
pub fn lmultiply(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 {
        0.0
    } else {
        a * b.ln()
    }
}
pub fn log_diff_exp(x: f64, y: f64) -> f64 {
    if x <= y {
        if x < f64::INFINITY && x == y {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        }
    } else {
        x + log1m_exp(y - x)
    }
}
pub fn log_sum_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ((a - m).exp() + (b - m).exp()).ln()
}
pub fn fdim(a: f64, b: f64) -> f64 {
    if a > b { a - b } else { 0.0 }
}
pub fn inv_cloglog(x: f64) -> f64 {
    -(-x.exp()).exp_m1()
}
pub fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}
pub fn log_inv_logit_diff(x: f64, y: f64) -> f64 {
    (inv_logit(x) - inv_logit(y)).ln()
}
/// `x 2^n` with `n` truncated toward zero, as C's `(int)` cast.
pub fn ldexp(x: f64, n: f64) -> f64 {
    x * 2f64.powi(n as i32)
}
