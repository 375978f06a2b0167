//! A generated value together with its derivatives.
//!
//! In a recorded step's forward kernel every node emits its value and, for
//! each variable element the value depends on, the derivative of the value
//! with respect to that element (a tangent). Tangents flow up the tree by
//! the chain rule; at the top they are the step's local partials, stored
//! for the reverse kernel (see `forward.rs`).

use crate::generator::{Generator, Index};
use crate::rev::handle::VarHandle;
use std::rc::Rc;

/// One element of a variable a value depends on: which variable, read at
/// which index (an OpenCL C expression of the work item's position).
#[derive(Clone)]
pub struct Occurrence {
    /// The variable.
    pub var: Rc<dyn VarHandle>,
    /// The parameter base name of its value buffer (`<base>_rows` is its row count).
    pub base: String,
    /// Where it is read.
    pub at: Index,
    /// The variable holding the flat index read (-1 when out of range or
    /// not read), for a scattered partial.
    pub flat: String,
    /// `Some(id)` when the variable `v` is read through the row-wise
    /// product `x · v` computed inline, `x` the constant matrix with buffer
    /// `id`: the tangent is then the coefficient of the product's row
    /// `at.i`, and the derivative with respect to `v_k` is that coefficient
    /// times `x[at.i, k]` (see `rev::inline`).
    pub through: Option<u64>,
}

impl std::fmt::Debug for Occurrence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Occurrence")
            .field("buffer", &self.var.value_id())
            .field("at", &self.at)
            .field("through", &self.through)
            .finish()
    }
}

impl Occurrence {
    /// Whether both are the same element read the same way.
    pub(crate) fn same_element(&self, other: &Occurrence) -> bool {
        self.var.value_id() == other.var.value_id()
            && self.at == other.at
            && self.through == other.through
    }
}

/// A value and its tangents (`∂value/∂element` for each [`Occurrence`]).
#[derive(Debug, Clone)]
pub struct Dual {
    /// The OpenCL C expression (usually a variable) holding the value.
    pub value: String,
    /// The derivatives, one per distinct variable element.
    pub tangents: Vec<(Occurrence, String)>,
}

impl Dual {
    /// A value that depends on no variable.
    pub fn constant(value: String) -> Self {
        Dual {
            value,
            tangents: Vec::new(),
        }
    }

    /// Whether the value depends on a variable.
    pub fn is_variable(&self) -> bool {
        !self.tangents.is_empty()
    }

    /// The tangents of `Σ derivative_k · operand_k` (the chain rule for a
    /// node whose local derivatives with respect to its operands are
    /// `derivative_k`), merging contributions to the same element.
    pub fn chain(
        g: &mut Generator,
        cl_type: &'static str,
        parts: &[(&Dual, &str)],
    ) -> Vec<(Occurrence, String)> {
        let mut terms: Vec<(Occurrence, Vec<String>)> = Vec::new();
        for (operand, derivative) in parts {
            for (occurrence, tangent) in &operand.tangents {
                let term = product(derivative, tangent);
                match terms.iter_mut().find(|(o, _)| o.same_element(occurrence)) {
                    Some((_, sum)) => sum.push(term),
                    None => terms.push((occurrence.clone(), vec![term])),
                }
            }
        }
        // Equal sums share one variable (a broadcast scalar and the vector
        // it is added to have the same tangent), so that a step stores
        // their partial once.
        let mut declared: Vec<(String, String)> = Vec::new();
        terms
            .into_iter()
            .map(|(occurrence, sum)| {
                let sum = sum.join(" + ");
                let plain = sum.chars().all(|c| c.is_alphanumeric() || c == '_');
                // A number stays a literal (the step then stores no
                // partial) and a variable stays itself.
                let tangent = if number(&sum).is_some() || plain {
                    sum
                } else if let Some((_, var)) = declared.iter().find(|(text, _)| *text == sum) {
                    var.clone()
                } else {
                    let var = g.declare_pure(cl_type, &sum);
                    declared.push((sum, var.clone()));
                    var
                };
                (occurrence, tangent)
            })
            .collect()
    }

    /// The tangents of a value chosen by `condition` between `then` and
    /// `otherwise` (no derivative through the condition).
    pub fn select(
        g: &mut Generator,
        cl_type: &'static str,
        condition: &str,
        then: &Dual,
        otherwise: &Dual,
    ) -> Vec<(Occurrence, String)> {
        let mut out: Vec<(Occurrence, String, String)> = Vec::new();
        for (occurrence, tangent) in &then.tangents {
            out.push((occurrence.clone(), tangent.clone(), "0".into()));
        }
        for (occurrence, tangent) in &otherwise.tangents {
            match out.iter_mut().find(|(o, _, _)| o.same_element(occurrence)) {
                Some((_, _, other)) => *other = tangent.clone(),
                None => out.push((occurrence.clone(), "0".into(), tangent.clone())),
            }
        }
        out.into_iter()
            .map(|(occurrence, a, b)| {
                let tangent = g.declare(cl_type, &format!("{condition} ? {a} : {b}"));
                (occurrence, tangent)
            })
            .collect()
    }
}

/// The value of a tangent that is a plain decimal number (`1`, `-0.5`),
/// not a variable or an expression.
pub(crate) fn number(code: &str) -> Option<f64> {
    let plain = code
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | '+'));
    if plain { code.parse().ok() } else { None }
}

/// `a * b`, leaving out a factor `1` and bracketing compound factors.
fn product(a: &str, b: &str) -> String {
    let factor = |s: &str| {
        if s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            s.to_string()
        } else {
            format!("({s})")
        }
    };
    match (a, b) {
        ("1", b) => factor(b),
        (a, "1") => factor(a),
        (a, b) => format!("{} * {}", factor(a), factor(b)),
    }
}
