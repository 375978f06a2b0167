//! OpenCL C helper functions that element-wise operations call.
//!
//! Each is written once as a template over `REAL`; `_F` in a name becomes
//! nothing for `double` and `f` for `float` (C's `exp`/`expf` convention), and
//! floating literals get an `f` suffix in the `float` instance so that float
//! kernels never need fp64. A kernel includes only the helpers it uses.

/// Instantiates `template` for `real` (`"double"` or `"float"`).
pub fn instantiate(template: &str, real: &str) -> String {
    let is_float = real == "float";
    let text = template
        .replace("REAL", real)
        .replace("_F", if is_float { "f" } else { "" });
    if is_float {
        suffix_float_literals(&text)
    } else {
        text
    }
}

/// Appends `f` to every floating literal (`0.5`, `1e-3`, `2.0e10`).
pub(crate) fn suffix_float_literals(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts_number = c.is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts_number {
            out.push(c as char);
            i += 1;
            continue;
        }
        let start = i;
        let mut is_floating = false;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            is_floating |= bytes[i] == b'.';
            i += 1;
        }
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            is_floating = true;
            i += 1;
            if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
                i += 1;
            }
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        out.push_str(&text[start..i]);
        if is_floating {
            out.push('f');
        }
    }
    out
}

// The logistic helpers all work from exp(-|x|) (never overflows) and
// select instead of branching: work items do not diverge, and a kernel that
// calls several of them on one value computes the exponential once.
pub const INV_LOGIT: &str = "
inline REAL inv_logit_F(REAL x) {
  REAL e = exp(-fabs(x));
  return x < 0 ? e / (1 + e) : 1 / (1 + e);
}";

pub const LOGIT: &str = "
inline REAL logit_F(REAL x) {
  return log(x / (1 - x));
}";

pub const LOG1P_EXP: &str = "
inline REAL log1p_exp_F(REAL x) {
  return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}";

pub const LOG_INV_LOGIT: &str = "
inline REAL log_inv_logit_F(REAL x) {
  return fmin(x, 0.0) - log1p(exp(-fabs(x)));
}";

pub const LOG1M_INV_LOGIT: &str = "
inline REAL log1m_inv_logit_F(REAL x) {
  return -fmax(x, 0.0) - log1p(exp(-fabs(x)));
}";

pub const LOG1M_EXP: &str = "
inline REAL log1m_exp_F(REAL x) {
  if (x > 0) {
    return NAN;
  }
  if (x > -0.693147) {
    return log(-expm1(x));
  }
  return log1p(-exp(x));
}";

pub const LOG1M: &str = "
inline REAL log1m_F(REAL x) {
  return log1p(-x);
}";

pub const PHI: &str = "
inline REAL Phi_F(REAL x) {
  if (x < -37.5) {
    return 0;
  }
  if (x < -5.0) {
    return 0.5 * erfc(-0.7071067811865476 * x);
  }
  if (x > 8.25) {
    return 1;
  }
  return 0.5 * (1 + erf(0.7071067811865476 * x));
}";

/// The asymptotic series of the Mills ratio, `S(x) = -x Φ(x) / φ(x)` for
/// `x ≤ -10`: `1 - 1/x² + 3/x⁴ - 15/x⁶ + ...` to twenty terms (the next is
/// below 1e-16 at `x = -10`; the smallest term of the divergent series is
/// near `k = x²/2`), in Horner form.
pub const MILLS_SERIES: &str = "
inline REAL mills_series_F(REAL x) {
  REAL r = 1 / (x * x);
  REAL s = 1;
  for (int k = 20; k >= 1; k--) {
    s = 1 - (2 * k - 1) * r * s;
  }
  return s;
}";

/// `log Φ(x)`: `log1p(-erfc(x/√2)/2)` above 0 (where `Φ` is near 1),
/// `log(erfc(-x/√2)/2)` down to -10, and below that the asymptotic form
/// `-x²/2 - log(-x) - log √(2π) + log S(x)`, which `erfc` would underflow
/// long before (at -38 in double, -14 in float).
pub const LOG_PHI: &str = "
inline REAL log_phi_F(REAL x) {
  if (x > 0) {
    return log1p(-0.5 * erfc(0.7071067811865476 * x));
  }
  if (x > -10) {
    return log(0.5 * erfc(-0.7071067811865476 * x));
  }
  return -0.5 * x * x - log(-x) - 0.9189385332046728 + log(mills_series_F(x));
}";

/// `d/dx log Φ(x) = φ(x)/Φ(x)`: directly above -10, and below as the
/// inverse Mills ratio `-x / S(x)` (no underflowing quotient).
pub const LOG_PHI_DERIVATIVE: &str = "
inline REAL log_phi_derivative_F(REAL x) {
  if (x > -10) {
    return 0.7978845608028654 * exp(-0.5 * x * x) / erfc(-0.7071067811865476 * x);
  }
  return -x / mills_series_F(x);
}";

pub const PHI_APPROX: &str = "
inline REAL Phi_approx_F(REAL x) {
  return inv_logit_F(0.07056 * x * x * x + 1.5976 * x);
}";

/// Acklam's rational approximation refined by one Halley step.
pub const INV_PHI: &str = "
inline REAL inv_Phi_F(REAL p) {
  if (p < 0 || p > 1) {
    return NAN;
  }
  if (p == 0) {
    return -INFINITY;
  }
  if (p == 1) {
    return INFINITY;
  }
  REAL x;
  if (p < 0.02425) {
    REAL q = sqrt(-2.0 * log(p));
    x = (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
          - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00)
        / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
          + 3.754408661907416e+00) * q + 1.0);
  } else if (p <= 0.97575) {
    REAL q = p - 0.5;
    REAL r = q * q;
    x = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r - 2.759285104469687e+02) * r
          + 1.383577518672690e+02) * r - 3.066479806614716e+01) * r + 2.506628277459239e+00) * q
        / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r - 1.556989798598866e+02) * r
          + 6.680131188771972e+01) * r - 1.328068155288572e+01) * r + 1.0);
  } else {
    REAL q = sqrt(-2.0 * log1p(-p));
    x = -(((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e+00) * q
          - 2.549732539343734e+00) * q + 4.374664141464968e+00) * q + 2.938163982698783e+00)
        / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e+00) * q
          + 3.754408661907416e+00) * q + 1.0);
  }
  REAL e = 0.5 * erfc(-0.7071067811865476 * x) - p;
  REAL u = e * 2.5066282746310002 * exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}";

/// Recurrence up to 10, then the asymptotic series; reflection below 0.
pub const DIGAMMA: &str = "
inline REAL digamma_F(REAL x) {
  if (x <= 0 && floor(x) == x) {
    return NAN;
  }
  REAL result = 0;
  if (x < 0) {
    result = -3.14159265358979323846 / tan(3.14159265358979323846 * x);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  REAL inv = 1 / x;
  REAL inv2 = inv * inv;
  REAL series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))));
  return result + log(x) - 0.5 * inv - series;
}";

pub const TRIGAMMA: &str = "
inline REAL trigamma_positive_F(REAL x) {
  REAL result = 0;
  while (x < 10) {
    result += 1 / (x * x);
    x += 1;
  }
  REAL inv = 1 / x;
  REAL inv2 = inv * inv;
  REAL series = inv * (1 + inv * (0.5 + inv * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 * (1.0 / 30 - inv2 * 5.0 / 66))))));
  return result + series;
}

inline REAL trigamma_F(REAL x) {
  if (x <= 0 && floor(x) == x) {
    return NAN;
  }
  if (x < 0) {
    REAL s = sin(3.14159265358979323846 * x);
    return -trigamma_positive_F(1 - x) + 9.869604401089358 / (s * s);
  }
  return trigamma_positive_F(x);
}";

/// ψ''(x), trigamma's derivative: the recurrence ψ''(x) = ψ''(x + 1) - 2 / x³
/// up to x ≥ 10, then the asymptotic series (the derivative of trigamma's);
/// for x < 0 the derivative of the reflection formula,
/// ψ''(x) = ψ''(1 - x) - 2π³ cos(πx) / sin³(πx).
pub const TETRAGAMMA: &str = "
inline REAL tetragamma_positive_F(REAL x) {
  REAL result = 0;
  while (x < 10) {
    result -= 2 / (x * x * x);
    x += 1;
  }
  REAL inv = 1 / x;
  REAL inv2 = inv * inv;
  REAL series = -inv2 * (1 + inv * (1 + inv * (0.5 - inv2 * (1.0 / 6 - inv2 * (1.0 / 6 - inv2 * (0.3 - inv2 * 5.0 / 6))))));
  return result + series;
}

inline REAL tetragamma_F(REAL x) {
  if (x <= 0 && floor(x) == x) {
    return NAN;
  }
  if (x < 0) {
    REAL s = sin(3.14159265358979323846 * x);
    REAL c = cos(3.14159265358979323846 * x);
    return tetragamma_positive_F(1 - x) - 62.01255336059963 * c / (s * s * s);
  }
  return tetragamma_positive_F(x);
}";

pub const LBETA: &str = "
inline REAL lbeta_F(REAL a, REAL b) {
  return lgamma(a) + lgamma(b) - lgamma(a + b);
}";

pub const BINOMIAL_COEFFICIENT_LOG: &str = "
inline REAL binomial_coefficient_log_F(REAL n, REAL k) {
  if (k == 0 || n == k) {
    return 0;
  }
  return -log1p(n) - lbeta_F(n - k + 1, k + 1);
}";

pub const LMULTIPLY: &str = "
inline REAL lmultiply_F(REAL a, REAL b) {
  if (a == 0 && b == 0) {
    return 0;
  }
  return a * log(b);
}";

pub const LOG_DIFF_EXP: &str = "
inline REAL log_diff_exp_F(REAL x, REAL y) {
  if (x <= y) {
    return (x < INFINITY && x == y) ? -INFINITY : NAN;
  }
  return x + log1m_exp_F(y - x);
}";

/// `log(inv_logit(x) - inv_logit(y))` for `x > y`, without the difference:
/// `x - log1p_exp(x) + log1m_exp(y - x) - log1p_exp(y)` (Stan's form).
pub const LOG_INV_LOGIT_DIFF: &str = "
inline REAL log_inv_logit_diff_F(REAL x, REAL y) {
  return x - log1p_exp_F(x) + log1m_exp_F(y - x) - log1p_exp_F(y);
}";

pub const LOG_SUM_EXP: &str = "
inline REAL log_sum_exp_F(REAL a, REAL b) {
  if (a == -INFINITY) {
    return b;
  }
  if (a == INFINITY && b == INFINITY) {
    return INFINITY;
  }
  if (a > b) {
    return a + log1p_exp_F(b - a);
  }
  return b + log1p_exp_F(a - b);
}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_instances_suffix_literals_and_names() {
        let s = instantiate(
            "inline REAL f_F(REAL x) { return 0.5 * x + 1e-3 + 2 + var10; }",
            "float",
        );
        assert_eq!(
            s,
            "inline float ff(float x) { return 0.5f * x + 1e-3f + 2 + var10; }"
        );
        let d = instantiate("inline REAL f_F(REAL x) { return 0.5 * x; }", "double");
        assert_eq!(d, "inline double f(double x) { return 0.5 * x; }");
    }
}
