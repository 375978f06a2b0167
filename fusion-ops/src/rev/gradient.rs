//! One gradient evaluation as a function call: zero the inputs' adjoints,
//! record `f`, run its steps in reverse, read the result, drop the steps.

use crate::rev::{Var, tape};
use clfuse_core::{Error, MatrixCl, Result};

/// The value of `f()` (a `1 x 1` result of `inputs`) and its gradient with
/// respect to each input, like JAX's `value_and_grad`: the inputs'
/// adjoints are zeroed, `f` runs, the steps it recorded run in reverse, and
/// those steps are dropped again, so calling this in a loop keeps memory
/// flat. The gradients are copies; the inputs' adjoints hold them too.
/// The in-kernel checks of `f`'s steps are read with the value, once; when
/// one failed, `f` runs again with each check read after its kernel, which
/// returns the exact error (so `f` may run twice: it is `FnMut`).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let (value, grads) = rev::value_and_grad(&[&x], || colwise_sum(square(&x)).eval())?;
/// assert_eq!(value, 10.0);
/// assert_eq!(grads[0].to_vec()?, vec![2.0, 6.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn value_and_grad(
    inputs: &[&Var<f64>],
    f: impl FnMut() -> Result<Var<f64>>,
) -> Result<(f64, Vec<MatrixCl<f64>>)> {
    let value = value_in_adjoints("value_and_grad", inputs, f)?;
    let grads = inputs
        .iter()
        .map(|input| input.adjoint().try_clone())
        .collect::<Result<Vec<_>>>()?;
    Ok((value, grads))
}

/// [`value_and_grad`] with each gradient left in its input's
/// [`adjoint`](Var::adjoint) instead of copied out: the cheapest form for
/// long parameter vectors that stay on the device. The reverse pass is the
/// last over `f`'s steps, so a density with vector parameters (a `1 x 1`
/// step reading them at each element) writes their gradients straight into
/// their adjoints from its forward kernel, and the call's one wait is the
/// value's read (with the checks' verdicts).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let value = rev::value_and_grad_in_adjoints(&[&x], || colwise_sum(square(&x)).eval())?;
/// assert_eq!(value, 10.0);
/// assert_eq!(x.adjoint().to_vec()?, vec![2.0, 6.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn value_and_grad_in_adjoints(
    inputs: &[&Var<f64>],
    f: impl FnMut() -> Result<Var<f64>>,
) -> Result<f64> {
    value_in_adjoints("value_and_grad_in_adjoints", inputs, f)
}

/// The value of `f()`, its gradients left in the inputs' adjoints; errors
/// name `function`.
fn value_in_adjoints(
    function: &'static str,
    inputs: &[&Var<f64>],
    mut f: impl FnMut() -> Result<Var<f64>>,
) -> Result<f64> {
    let mut value = f64::NAN;
    let owner = inputs.first().map_or(0, |v| v.value().buffer_id());
    with_deferred_checks(function, owner, || {
        differentiate(function, inputs, &mut f, |result| {
            let Some(host) = read_with_verdicts(result, None, &mut 0)? else {
                return Ok(false);
            };
            value = host.first().copied().unwrap_or(f64::NAN);
            Ok(true)
        })
    })?;
    Ok(value)
}

/// [`value_and_grad`] for a sampler: one column of parameters `theta`,
/// whose gradient is written to `gradient`, and the value returned. The
/// value and the gradient come to the host together, in one read of one
/// buffer that one fused kernel fills (`append_row` of the two): a
/// sampler pays one round trip per evaluation: the verdicts of the
/// in-kernel checks come in that same read (see [`value_and_grad`]).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let theta = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let mut gradient = [0.0; 2];
/// let value = rev::value_and_grad_to_host(&theta, || colwise_sum(square(&theta)).eval(), &mut gradient)?;
/// assert_eq!((value, gradient), (10.0, [2.0, 6.0]));
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn value_and_grad_to_host(
    theta: &Var<f64>,
    mut f: impl FnMut() -> Result<Var<f64>>,
    gradient: &mut [f64],
) -> Result<f64> {
    const F: &str = "value_and_grad_to_host";
    check_column(F, theta, gradient)?;
    let host = columns(F, theta, 1, &mut f, &mut ReadLayout::default())?;
    split_value(F, &host, gradient)
}

/// Checks that `theta` is a column and `gradient` as long.
pub(crate) fn check_column(
    function: &'static str,
    theta: &Var<f64>,
    gradient: &[f64],
) -> Result<()> {
    if theta.cols() != 1 || theta.rows() != gradient.len() {
        return Err(Error::InvalidArgument {
            function,
            argument: "gradient",
            reason: format!(
                "theta must be a column and gradient as long: theta is {} x {}, gradient has {}",
                theta.rows(),
                theta.cols(),
                gradient.len()
            ),
        });
    }
    Ok(())
}

/// Checks a batch's output lengths against `theta` (`dim x batch`);
/// returns `(dim, batch)`.
pub(crate) fn check_batch(
    function: &'static str,
    theta: &Var<f64>,
    values: &[f64],
    gradients: &[f64],
) -> Result<(usize, usize)> {
    let (dim, batch) = (theta.rows(), theta.cols());
    if values.len() != batch || gradients.len() != dim * batch {
        return Err(Error::InvalidArgument {
            function,
            argument: "values",
            reason: format!(
                "theta is {dim} x {batch}: values needs {batch} entries and gradients {}, got {} and {}",
                dim * batch,
                values.len(),
                gradients.len()
            ),
        });
    }
    Ok((dim, batch))
}

/// The value (returned) and gradient (written) of one evaluation's column
/// `[value; gradient]`.
pub(crate) fn split_value(
    function: &'static str,
    host: &[f64],
    gradient: &mut [f64],
) -> Result<f64> {
    let (first, rest) = host.split_first().ok_or_else(|| Error::InvalidArgument {
        function,
        argument: "f",
        reason: "returned an empty result".into(),
    })?;
    if rest.len() != gradient.len() {
        return Err(Error::SizeMismatch {
            function,
            argument: "gradient",
            expected: rest.len(),
            actual: gradient.len(),
        });
    }
    gradient.copy_from_slice(rest);
    Ok(*first)
}

/// How one evaluation's read was laid out, for a replay of it to read the
/// same way: how many times `f` ran (a failed deferred check runs it
/// again), and how many check verdicts came with the columns.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ReadLayout {
    pub(crate) evaluations: usize,
    pub(crate) verdicts: usize,
}

/// The columns `[value; gradient]` of `f`'s `batch` entries with respect
/// to the matching columns of `theta`, read back in one transfer (with the
/// verdicts of the deferred checks, see [`value_and_grad`]).
pub(crate) fn columns(
    function: &'static str,
    theta: &Var<f64>,
    batch: usize,
    f: &mut impl FnMut() -> Result<Var<f64>>,
    layout: &mut ReadLayout,
) -> Result<Vec<f64>> {
    let mut columns = Vec::new();
    with_deferred_checks(function, theta.value().buffer_id(), || {
        layout.evaluations += 1;
        differentiate_batch(function, &[theta], batch, &mut *f, |result| {
            let read = read_with_verdicts(result, Some(theta), &mut layout.verdicts)?;
            let Some(host) = read else {
                return Ok(false);
            };
            columns = host;
            Ok(true)
        })
    })?;
    Ok(columns)
}

/// Runs `evaluate` with the checks of its steps deferred to its final
/// read ([`deferred_checks`](crate::deferred_checks)), which returns
/// whether they all passed; when one failed, `evaluate` runs again with
/// immediate checks, which stop it at the failing step with its error.
/// A sampler's evaluation thus waits for the device once, not once per
/// checked step. `owner` (the parameters' buffer) has its flags of its own.
fn with_deferred_checks(
    function: &'static str,
    owner: u64,
    mut evaluate: impl FnMut() -> Result<bool>,
) -> Result<()> {
    if crate::deferred_checks::deferring(owner, &mut evaluate)? {
        return Ok(());
    }
    if crate::deferred_checks::immediate(&mut evaluate)? {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        function,
        argument: "f",
        reason:
            "a deferred check failed but passed when run again (does f depend on more than theta?)"
                .into(),
    })
}

/// The result's values and `theta`'s adjoint (when given), column by
/// column (value first), read back in one transfer together with the
/// verdicts of the deferred checks (appended as more rows): `None` when
/// one of those failed.
/// `verdicts` is set to how many came with it.
fn read_with_verdicts(
    result: &Var<f64>,
    theta: Option<&Var<f64>>,
    verdicts: &mut usize,
) -> Result<Option<Vec<f64>>> {
    use crate::structural::{append_row, block};
    let claimed = crate::deferred_checks::claimed();
    *verdicts = claimed.as_ref().map_or(0, |c| c.used);
    match (theta, claimed) {
        // Nothing deferred and only the value: read it as it is.
        (None, None) => result.value().to_vec().map(Some),
        (None, Some(c)) => read_rows(block(result.value(), 0, 0, 1, result.cols()), Some(c)),
        (Some(theta), c) => read_rows(append_row(result.value(), theta.adjoint()), c),
    }
}

/// [`read_with_verdicts`] of the rows of `e`, with the `claimed` slots.
fn read_rows<E>(
    e: clfuse_core::Expr<E>,
    claimed: Option<crate::deferred_checks::Claimed>,
) -> Result<Option<Vec<f64>>>
where
    E: crate::operation::Operation<Scalar = f64>,
{
    use crate::structural::{append_row, block, optional_broadcast};
    let (rows, cols) = e.0.shape()?.unwrap_or((1, 1));
    let Some(claimed) = claimed else {
        return crate::driver::eval_direct(e.0)?.to_vec().map(Some);
    };
    let verdicts = crate::logic::cast::<f64, _>(block(&claimed.flags, 0, 0, claimed.used, 1));
    let all = append_row(e, optional_broadcast(verdicts, claimed.used, cols));
    let host = crate::driver::eval_direct(all.0)?.to_vec()?;
    Ok(split_verdicts(&host, rows, claimed.used))
}

/// The columns of `rows` values each of a read whose columns carry
/// `verdicts` more rows: `None` when a verdict says a check failed.
pub(crate) fn split_verdicts(host: &[f64], rows: usize, verdicts: usize) -> Option<Vec<f64>> {
    if verdicts == 0 {
        return Some(host.to_vec());
    }
    let column = rows + verdicts;
    let slots: Vec<i32> = host
        .get(rows..column)
        .unwrap_or_default()
        .iter()
        .map(|&v| v as i32)
        .collect();
    if !crate::deferred_checks::verdict(&slots) {
        return None;
    }
    Some(
        host.chunks_exact(column)
            .flat_map(|c| c[..rows].iter().copied())
            .collect(),
    )
}

/// [`value_and_grad_to_host`] for a batch of independent evaluations,
/// such as several chains of one model: column `k` of `theta` (`dim x K`)
/// is one parameter vector, and `f` returns the `K` log densities as a
/// `1 x K` row whose entry `k` depends on column `k` of `theta` alone. One
/// reverse pass from all `K` entries at once then gives each column its
/// own gradient (the others' entries do not depend on it). The values go
/// to `values` (`K`), the gradients to `gradients` (`dim x K`,
/// column-major), read back together in one transfer.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// // Two parameter vectors of a standard normal, one per column.
/// let theta = Var::new(MatrixCl::from_slice(2, 2, &[1.0f64, 3.0, -1.0, 0.5])?);
/// let (mut values, mut gradients) = ([0.0; 2], [0.0; 4]);
/// rev::batch_value_and_grad_to_host(
///     &theta,
///     || colwise_sum(-0.5f64 * square(&theta)).eval(),
///     &mut values,
///     &mut gradients,
/// )?;
/// assert_eq!(values, [-5.0, -0.625]);
/// assert_eq!(gradients, [-1.0, -3.0, 1.0, -0.5]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn batch_value_and_grad_to_host(
    theta: &Var<f64>,
    mut f: impl FnMut() -> Result<Var<f64>>,
    values: &mut [f64],
    gradients: &mut [f64],
) -> Result<()> {
    const F: &str = "batch_value_and_grad_to_host";
    let (dim, batch) = check_batch(F, theta, values, gradients)?;
    let host = columns(F, theta, batch, &mut f, &mut ReadLayout::default())?;
    split_batch(&host, dim, values, gradients);
    Ok(())
}

/// Splits a batch's columns `[value; gradient]` into `values` and
/// `gradients` (lengths checked by the caller).
pub(crate) fn split_batch(host: &[f64], dim: usize, values: &mut [f64], gradients: &mut [f64]) {
    for (k, column) in host.chunks_exact(dim + 1).enumerate() {
        values[k] = column[0];
        gradients[k * dim..(k + 1) * dim].copy_from_slice(&column[1..]);
    }
}

/// Zeroes the inputs' adjoints, records `f`, runs the reverse pass of the
/// steps it recorded, hands the result to `read`, and drops those steps.
fn differentiate<R>(
    function: &'static str,
    inputs: &[&Var<f64>],
    f: impl FnOnce() -> Result<Var<f64>>,
    read: impl FnOnce(&Var<f64>) -> Result<R>,
) -> Result<R> {
    differentiate_batch(function, inputs, 1, f, read)
}

/// [`differentiate`] from a `1 x batch` result, every entry seeded with 1.
fn differentiate_batch<R>(
    function: &'static str,
    inputs: &[&Var<f64>],
    batch: usize,
    f: impl FnOnce() -> Result<Var<f64>>,
    read: impl FnOnce(&Var<f64>) -> Result<R>,
) -> Result<R> {
    let mark = tape::mark()?;
    let outcome = (|| {
        for input in inputs {
            input.usable(function)?;
            input.0.clear_adjoint()?;
        }
        let result = f()?;
        if (result.rows(), result.cols()) != (1, batch) {
            return Err(Error::InvalidArgument {
                function,
                argument: "f",
                reason: format!(
                    "f returned a {} x {} result; a gradient needs a 1 x {batch} one",
                    result.rows(),
                    result.cols()
                ),
            });
        }
        result.0.seed()?;
        tape::reverse_range(mark, result.0.step.get(), true)?;
        read(&result)
    })();
    tape::truncate(mark)?;
    outcome
}
