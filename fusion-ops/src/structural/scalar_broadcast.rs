//! A `1 x 1` operand (or a number) repeated over a whole grid: its one
//! element is read, and every pure function of it computed, once per work
//! item before the element loop instead of once per element (see
//! [`Generator::declare_pure`]). A density's scalar parameters reach its
//! kernel this way, so `log(sigma)` or `lgamma(nu / 2)` costs nothing per
//! element.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::hoisted::Hoisted;
use crate::operation::{HeldProduct, Operation, Shape};
use clfuse_core::{ClType, Error, Expr, IntoOperand, Result, View};

/// A `1 x 1` operand repeated over `rows x cols`: the node built by
/// [`scalar_broadcast()`].
#[derive(Debug, Clone)]
pub struct ScalarBroadcast<E> {
    /// The operand (evaluated apart when it contains a reduction).
    pub inner: Hoisted<E>,
    /// Rows of the result.
    pub rows: usize,
    /// Columns of the result.
    pub cols: usize,
}

/// `a`, a `1 x 1` matrix or expression or a number, as a `rows x cols`
/// matrix of its one value. Unlike [`optional_broadcast`](crate::optional_broadcast)
/// the operand must be `1 x 1`, and the kernel reads it once per work item.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let sigma = MatrixCl::from_slice(1, 1, &[2.0f64])?;
/// let y = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 4.0])?;
/// let z = elt_divide(&y, scalar_broadcast(log(&sigma), 3, 1)).eval()?;
/// let l = 2.0f64.ln();
/// assert_eq!(z.to_vec()?, vec![1.0 / l, 2.0 / l, 4.0 / l]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn scalar_broadcast<A: IntoOperand>(
    a: A,
    rows: usize,
    cols: usize,
) -> Expr<ScalarBroadcast<A::Operand>> {
    Expr(ScalarBroadcast {
        inner: Hoisted::new(a.into_operand()),
        rows,
        cols,
    })
}

/// Where a `1 x 1` operand is read.
pub(crate) fn only_element() -> Index {
    Index::new("0", "0")
}

/// `value` as a name that is the same for every element.
pub(crate) fn uniform_name<T: ClType>(g: &mut Generator, value: String) -> String {
    if g.is_uniform(&value) {
        value
    } else {
        g.declare_uniform(T::CL_NAME, &value)
    }
}

impl<E: Operation> Operation for ScalarBroadcast<E> {
    type Scalar = E::Scalar;
    type Key = ScalarBroadcast<E::Key>;

    fn shape(&self) -> Result<Shape> {
        match self.inner.shape()? {
            None | Some((1, 1)) => Ok(Some((self.rows, self.cols))),
            Some(other) => Err(Error::DimensionMismatch {
                operation: "scalar_broadcast needs a 1 x 1 operand".into(),
                lhs: (1, 1),
                rhs: other,
            }),
        }
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, _at: &Index) -> String {
        let value = g.before_elements(|g| self.inner.generate(g, &only_element()));
        uniform_name::<E::Scalar>(g, value)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}
