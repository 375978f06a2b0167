//! Reading a variable in an expression: `&var` becomes a [`VarLoad`] leaf,
//! whose value is its buffer and whose tangent at each element it reads is
//! 1 (or its view's indicator); a variable stored as a node's precomputed
//! result is read the same way.

use crate::binder::{Binder, Identity};
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape};
use crate::precomputed::Precomputed;
use crate::rev::dual::{Dual, Occurrence};
use crate::rev::handle::VarHandle;
use crate::rev::var::Var;
use crate::rev::{Depends, Differentiable, Variable};
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, IntoOperand, MatrixCl, Result, View};
use std::rc::Rc;

/// A variable read by an expression: the node `&var` becomes.
#[derive(Debug, Clone)]
pub struct VarLoad<'a, T: ClType>(pub &'a Var<T>);

impl<'a, T: ClType> IntoOperand for &'a Var<T> {
    type Operand = VarLoad<'a, T>;
    fn into_operand(self) -> VarLoad<'a, T> {
        VarLoad(self)
    }
}

impl<T: ClType> IntoOperand for Var<T> {
    type Operand = OwnedVarLoad<T>;
    fn into_operand(self) -> OwnedVarLoad<T> {
        OwnedVarLoad(self)
    }
}

/// A variable moved into an expression (`var.exp()` rather than `(&var).exp()`).
#[derive(Debug, Clone)]
pub struct OwnedVarLoad<T: ClType>(pub Var<T>);

/// The key of the extra argument a variable binds: its column count (the
/// forward kernel checks scattered indices against it).
pub(crate) fn cols_key(id: u64) -> String {
    format!("cols of buffer {id}")
}

pub(crate) fn generate_value<T: ClType>(var: &Var<T>, g: &mut Generator, at: &Index) -> String {
    let value = Load(MatrixRef::Borrowed(&var.0.value)).generate(g, at);
    g.keyed_param(&cols_key(var.0.value.buffer_id()), "int");
    value
}

pub(crate) fn generate_dual<T: ClType>(var: &Var<T>, g: &mut Generator, at: &Index) -> Dual {
    let value = generate_value(var, g, at);
    let identity = Identity::Buffer(var.0.value.buffer_id());
    let base = g.buffer(identity, T::CL_NAME, true);
    // A variable seen whole has derivative 1 at every element it reads (a
    // number, so a step whose partial it stays stores nothing); one with a
    // triangular view has 0 outside it. `bind_var` keys the two apart.
    let tangent = if var.0.value.view() == View::Entire {
        "1".to_string()
    } else {
        g.declare(
            T::CL_NAME,
            &format!("in_view({}, {}, {base}_view)", at.i, at.j),
        )
    };
    let cols = g.keyed_param(&cols_key(var.0.value.buffer_id()), "int");
    // Bounds that a literal index meets already are left out.
    let (i, j) = (&at.i, &at.j);
    let mut bounds = Vec::new();
    for (index, limit) in [(i, format!("{base}_rows")), (j, cols.clone())] {
        if index != "0" {
            bounds.push(format!("0 <= {index}"));
        }
        bounds.push(format!("{index} < {limit}"));
    }
    let flat = g.declare(
        "int",
        &format!("({}) ? {i} + {base}_rows * {j} : -1", bounds.join(" && ")),
    );
    let occurrence = Occurrence {
        var: var.0.clone(),
        base,
        at: at.clone(),
        flat,
        through: None,
    };
    Dual {
        value,
        tangents: vec![(occurrence, tangent)],
    }
}

/// The [`Dual`] of a product `x · v` read inline (its value already
/// generated into `value`): one occurrence of `v` through `x` (buffer
/// `x_id`) at the product's row, with coefficient 1 (see `rev::inline`).
pub(crate) fn product_dual<T: ClType>(
    v: &Var<T>,
    x_id: u64,
    value: String,
    g: &mut Generator,
    at: &Index,
) -> Dual {
    let base = g.buffer(Identity::Buffer(v.0.value.buffer_id()), T::CL_NAME, true);
    let occurrence = Occurrence {
        var: v.0.clone(),
        base,
        at: at.clone(),
        flat: "-1".into(),
        through: Some(x_id),
    };
    Dual {
        value,
        tangents: vec![(occurrence, "1".into())],
    }
}

pub(crate) fn bind_var<'a, T: ClType>(var: &'a Var<T>, b: &mut Binder<'a>) {
    let identity = Identity::Buffer(var.0.value.buffer_id());
    let first = !b.seen(identity);
    b.structure(u32::from(var.0.value.view() == View::Entire));
    b.matrix(&var.0.value, Access::Read, true);
    if first {
        b.int(var.cols() as i32);
        let handle: Rc<dyn VarHandle> = var.0.clone();
        b.annotate(Rc::new(handle));
    }
}

/// A variable stored where the engine keeps a node evaluated ahead (the
/// node was recorded as a step of its own): kernels read its value and bind
/// it as a variable.
impl<T: ClType> Precomputed for Var<T> {
    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        generate_value(self, g, at)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        bind_var(self, b)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

macro_rules! var_operation {
    ($node:ty, $var:ident => $get:expr, $key:ty) => {
        impl<T: ClType> Depends for $node {
            type Dependence = Variable;
        }

        impl<T: ClType> Operation for $node {
            type Scalar = T;
            type Key = $key;

            fn shape(&self) -> Result<Shape> {
                let $var = self;
                let var: &Var<T> = $get;
                var.usable("eval")?;
                Ok(Some((var.rows(), var.cols())))
            }

            fn view(&self) -> View {
                let $var = self;
                let var: &Var<T> = $get;
                var.0.value.view()
            }

            fn generate(&self, g: &mut Generator, at: &Index) -> String {
                let $var = self;
                generate_value($get, g, at)
            }

            fn bind<'b>(&'b self, b: &mut Binder<'b>) {
                let $var = self;
                bind_var($get, b)
            }

            fn matrix(&self) -> Option<&MatrixCl<T>> {
                let $var = self;
                let var: &Var<T> = $get;
                Some(&var.0.value)
            }
        }

        impl<T: ClType> Differentiable for $node {
            fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
                let $var = self;
                Ok(generate_dual($get, g, at))
            }

            fn variable(&self) -> Option<&Var<T>> {
                let $var = self;
                Some($get)
            }
        }
    };
}

var_operation!(VarLoad<'_, T>, node => node.0, VarLoad<'static, T>);
var_operation!(OwnedVarLoad<T>, node => &node.0, VarLoad<'static, T>);

impl<T: ClType> crate::logic::CastMethod for &Var<T> {}
