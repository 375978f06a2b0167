//! Filling code templates: `{x}`, `{y}`, `{z}` name operands, `{F}` is the
//! float suffix (`""` for double, `"f"` for float).

use clfuse_core::ClType;

/// Replaces the placeholders of `template`.
///
/// In `float` kernels floating literals of the template get an `f` suffix,
/// so that a float kernel never computes in double.
pub fn expand(template: &str, real: &str, operands: &[&str]) -> String {
    let mut out = template.replace("{F}", if real == "float" { "f" } else { "" });
    if real == "float" {
        out = crate::device_functions::suffix_float_literals(&out);
    }
    for (name, value) in ["{x}", "{y}", "{z}"].iter().zip(operands) {
        out = out.replace(name, value);
    }
    out
}

/// `var` converted from `From` to `To` with a C cast, or unchanged.
pub fn convert<From: ClType, To: ClType>(var: &str) -> String {
    if From::CL_NAME == To::CL_NAME {
        var.to_string()
    } else {
        format!("({}){var}", To::CL_NAME)
    }
}

/// The floating type a real-valued function of `Self` returns (`i32 -> f64`).
pub trait RealOf: ClType {
    /// The floating type.
    type Real: ClType;
}

impl RealOf for f64 {
    type Real = f64;
}
impl RealOf for f32 {
    type Real = f32;
}
impl RealOf for i32 {
    type Real = f64;
}
