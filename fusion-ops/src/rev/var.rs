//! Variables: a device value and a device adjoint of the same shape.

use crate::assign::AssignExt;
use crate::binder::{Binder, Identity};
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape};
use crate::rev::dual::{Dual, Occurrence};
use crate::rev::{Depends, Variable, tape};
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, Error, IntoOperand, KernelArg, MatrixCl, Result, View};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The shared state of a [`Var`].
pub struct VarData<T: ClType> {
    pub(crate) value: MatrixCl<T>,
    adjoint: MatrixCl<T>,
    /// Whether the adjoint's buffer holds its values. Until something is
    /// added, the adjoint is zero and its buffer unwritten: the first
    /// reverse kernel that covers every element writes it instead of
    /// adding (no fill, no read), and a step whose result's adjoint is
    /// still zero contributes nothing and is skipped.
    written: Cell<bool>,
    /// Why the adjoint could not be allocated or zeroed, reported by the
    /// first fallible call that uses the variable.
    failure: RefCell<Option<String>>,
    /// The tape step that computed the value (none for an independent variable).
    pub(crate) step: Cell<Option<tape::StepId>>,
}

/// A differentiable matrix: a device value and a device adjoint of the same
/// shape. Cloning a `Var` clones a handle (both refer to one variable).
///
/// A `Var` belongs to the thread that made it (the tape is thread-local).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::Var;
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?);
/// let total = colwise_sum(elt_multiply(&x, &x)).eval()?; // a 1 x 1 Var
/// total.grad()?;
/// assert_eq!(total.value().to_vec()?, vec![5.0]);
/// assert_eq!(x.adjoint().to_vec()?, vec![2.0, 4.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub struct Var<T: ClType = f64>(pub(crate) Rc<VarData<T>>);

impl<T: ClType> Clone for Var<T> {
    fn clone(&self) -> Self {
        Var(Rc::clone(&self.0))
    }
}

impl<T: ClType> std::fmt::Debug for Var<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Var")
            .field("type", &T::CL_NAME)
            .field("rows", &self.0.value.rows())
            .field("cols", &self.0.value.cols())
            .finish()
    }
}

impl<T: ClType> Var<T> {
    /// An independent variable with value `value` and a zero adjoint.
    ///
    /// If the adjoint cannot be allocated, the variable reports that error
    /// from the first fallible call using it (`eval`, `grad`) and its
    /// [`adjoint`](Self::adjoint) is empty.
    pub fn new(value: MatrixCl<T>) -> Self {
        Self::computed(value, None)
    }

    pub(crate) fn computed(value: MatrixCl<T>, step: Option<tape::StepId>) -> Self {
        let (adjoint, failure) = match MatrixCl::uninitialized(value.rows(), value.cols()) {
            Ok(adjoint) => (adjoint, None),
            Err(e) => (MatrixCl::empty(), Some(e.to_string())),
        };
        let var = Var(Rc::new(VarData {
            value,
            adjoint,
            written: Cell::new(false),
            failure: RefCell::new(failure),
            step: Cell::new(step),
        }));
        tape::register(&var);
        var
    }

    /// The value.
    pub fn value(&self) -> &MatrixCl<T> {
        &self.0.value
    }

    /// The adjoint: after [`grad`](Self::grad) of a result, the derivative
    /// of that result with respect to this variable.
    pub fn adjoint(&self) -> &MatrixCl<T> {
        // A zero adjoint is filled when it is first looked at. Should the
        // fill fail (a lost device), the variable reports it from its next
        // fallible call.
        if let Err(e) = self.0.settled_adjoint() {
            *self.0.failure.borrow_mut() = Some(e.to_string());
        }
        &self.0.adjoint
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.0.value.rows()
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.0.value.cols()
    }

    /// Runs the reverse pass from this `1 x 1` result: its adjoint becomes 1
    /// (added, as every adjoint is) and each recorded step that led to it,
    /// newest first, adds its operands' adjoints with one kernel.
    pub fn grad(&self) -> Result<()> {
        if (self.rows(), self.cols()) != (1, 1) {
            return Err(Error::InvalidArgument {
                function: "Var::grad",
                argument: "self",
                reason: format!(
                    "the result is {} x {}; only a 1 x 1 result has a gradient",
                    self.rows(),
                    self.cols()
                ),
            });
        }
        self.usable("Var::grad")?;
        self.0.seed()?;
        tape::reverse_range(0, self.0.step.get())
    }

    /// Whether two handles refer to the same variable.
    pub fn same(&self, other: &Var<T>) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn usable(&self, function: &'static str) -> Result<()> {
        match &*self.0.failure.borrow() {
            None => Ok(()),
            Some(reason) => Err(Error::InvalidArgument {
                function,
                argument: "var",
                reason: format!("its adjoint could not be allocated: {reason}"),
            }),
        }
    }
}

impl<T: ClType> VarData<T> {
    /// The adjoint as a reverse step reads it, or `None` while it is zero
    /// (the step then has nothing to pass on).
    pub(crate) fn nonzero_adjoint(&self) -> Option<&MatrixCl<T>> {
        self.written.get().then_some(&self.adjoint)
    }

    /// The adjoint with its buffer written (zeros filled in if nothing was
    /// added yet).
    pub(crate) fn settled_adjoint(&self) -> Result<&MatrixCl<T>> {
        if !self.written.get() {
            self.adjoint.fill(T::default())?;
            self.written.set(true);
        }
        Ok(&self.adjoint)
    }

    /// Sets the adjoint to zero without device work (marks it unwritten).
    pub(crate) fn clear_adjoint(&self) {
        self.written.set(false);
    }

    /// Sets the adjoint to one: the seed of a reverse pass.
    pub(crate) fn seed(&self) -> Result<()> {
        self.adjoint.fill(T::one())?;
        self.written.set(true);
        Ok(())
    }

    /// Adds `contribution` (same shape) into the adjoint with one fused
    /// kernel; into a zero adjoint, the contribution is assigned.
    pub(crate) fn add_to_adjoint(&self, contribution: &MatrixCl<T>) -> Result<()> {
        if self.written.get() {
            self.adjoint.add_assign(contribution)
        } else {
            self.adjoint.assign(contribution)?;
            self.written.set(true);
            Ok(())
        }
    }
}

/// What a step needs of a variable of any element type: its identity, its
/// shape and its adjoint as a kernel argument.
pub trait Differentiable {
    /// The buffer id of its value.
    fn value_id(&self) -> u64;
    /// Rows and columns.
    fn shape(&self) -> (usize, usize);
    /// The OpenCL C element type.
    fn cl_type(&self) -> &'static str;
    /// Its adjoint as a reverse kernel's argument, and whether the kernel
    /// is to write it (`=`) rather than add to it: only when it is still
    /// zero and `covers_all` (the kernel writes every element). A zero
    /// adjoint that the kernel covers in part is filled with zeros first.
    fn adjoint_arg(&self, covers_all: bool) -> Result<(KernelArg<'_>, bool)>;
    /// Sets its adjoint to zero (no device work: the buffer is marked unwritten).
    fn zero_adjoint(&self) -> Result<()>;
    /// Fails if its adjoint could not be allocated.
    fn usable(&self, function: &'static str) -> Result<()>;
}

impl std::fmt::Debug for dyn Differentiable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variable")
            .field("buffer", &self.value_id())
            .field("shape", &self.shape())
            .finish()
    }
}

impl<T: ClType> Differentiable for VarData<T> {
    fn value_id(&self) -> u64 {
        self.value.buffer_id()
    }
    fn shape(&self) -> (usize, usize) {
        (self.value.rows(), self.value.cols())
    }
    fn cl_type(&self) -> &'static str {
        T::CL_NAME
    }
    fn adjoint_arg(&self, covers_all: bool) -> Result<(KernelArg<'_>, bool)> {
        let overwrite = covers_all && !self.written.get();
        if overwrite {
            self.written.set(true);
        } else {
            self.settled_adjoint()?;
        }
        Ok((
            KernelArg::buffer(&self.adjoint, Access::ReadWrite),
            overwrite,
        ))
    }
    fn zero_adjoint(&self) -> Result<()> {
        self.clear_adjoint();
        Ok(())
    }
    fn usable(&self, function: &'static str) -> Result<()> {
        match &*self.failure.borrow() {
            None => Ok(()),
            Some(reason) => Err(Error::InvalidArgument {
                function,
                argument: "var",
                reason: format!("its adjoint could not be allocated: {reason}"),
            }),
        }
    }
}

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
        let handle: Rc<dyn Differentiable> = var.0.clone();
        b.annotate(Rc::new(handle));
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

            fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
                let $var = self;
                Ok(generate_dual($get, g, at))
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

            fn variable(&self) -> Option<&Var<T>> {
                let $var = self;
                Some($get)
            }
        }
    };
}

var_operation!(VarLoad<'_, T>, node => node.0, VarLoad<'static, T>);
var_operation!(OwnedVarLoad<T>, node => &node.0, VarLoad<'static, T>);
