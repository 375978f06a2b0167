//! Code-generation helpers for the chain rule inside a step's forward
//! kernel: a node's local derivative as a variable, and tangents computed
//! inside a branch made visible after it.

use crate::generator::{Generator, InsertionPoint};
use crate::rev::{Dual, Occurrence};

/// The local derivative `template` (operands `{x}`, `{y}`, result `{res}`)
/// as a variable, or the literal `1`.
pub fn local_derivative(
    g: &mut Generator,
    cl_type: &'static str,
    template: &str,
    res: &str,
    operands: &[&str],
) -> String {
    let code = crate::templates::expand(&template.replace("{res}", res), cl_type, operands);
    if code == "1" {
        return code;
    }
    g.declare_pure(cl_type, &code)
}

/// Moves the tangents of `dual`, computed inside a branch, into variables
/// declared at `point` before it (one per variable element, shared by the
/// branches), so that they are visible after the branch. The holders start
/// at 0 (and scattered indices at -1): a branch not taken contributes nothing.
pub fn hoist(
    g: &mut Generator,
    point: &mut InsertionPoint,
    cl_type: &'static str,
    dual: &Dual,
    hoisted: &mut Vec<(Occurrence, String)>,
) {
    for (occurrence, tangent) in &dual.tangents {
        let existing = hoisted
            .iter()
            .find(|(o, _)| o.same_element(occurrence))
            .cloned();
        let (holder, flat) = match existing {
            Some((o, holder)) => (holder, o.flat),
            None => {
                let holder = g.fresh();
                g.insert_statement(point, &format!("{cl_type} {holder} = 0;"));
                let flat = g.fresh();
                g.insert_statement(point, &format!("int {flat} = -1;"));
                let mut moved = occurrence.clone();
                moved.flat = flat.clone();
                hoisted.push((moved, holder.clone()));
                (holder, flat)
            }
        };
        g.statement(&format!("{holder} = {tangent};"));
        g.statement(&format!("{flat} = {};", occurrence.flat));
    }
}
