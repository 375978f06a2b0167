//! Custom OpenCL C fused with the rest of an expression: a snippet with named
//! inputs (any expressions) and named outputs (usable as expressions).

use crate::binder::{Binder, Identity};
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape, combine_shapes};
use crate::rev::boxed::{DynOp, boxed};
use crate::rev::{Constant, Dependence, Depends, Differentiable, Dual, ProductReads};
use clfuse_core::{ClType, Expr, IntoOperand, Result, View};

/// A user snippet of OpenCL C. Inputs and outputs are named; in the code,
/// `{name}` stands for each. Outputs are variables of type `T` the snippet
/// assigns. Every output used in a kernel shares one copy of the snippet.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(3, 1, &[-2.0f64, 0.5, 3.0])?;
/// let leaky = CustomCode::<f64>::new("{y} = {x} > 0 ? {x} : 0.01 * {x};\n{slope} = {x} > 0 ? 1.0 : 0.01;", &["y", "slope"])
///     .input("x", &x);
/// let (y, slope) = (MatrixCl::<f64>::zeros(3, 1)?, MatrixCl::<f64>::zeros(3, 1)?);
/// results((&y, &slope)).assign((leaky.output("y")? * 2.0, leaky.output("slope")?))?;
/// assert_eq!(y.to_vec()?, vec![-0.04, 1.0, 6.0]);
/// assert_eq!(slope.to_vec()?, vec![0.01, 1.0, 1.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
///
/// With a [`Var`](crate::rev::Var) among its inputs the snippet is
/// differentiable once each output declares its derivative with respect to
/// each such input ([`derivative`](Self::derivative)), an expression in the
/// same `{name}`s (`"0"` where an output does not depend on an input);
/// evaluating an output of a snippet that lacks one is an error naming the
/// pair, never a silently missing contribution.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::Var;
/// let x = Var::new(MatrixCl::from_slice(2, 1, &[-2.0f64, 3.0])?);
/// let leaky = CustomCode::<f64>::new("{y} = {x} > 0 ? {x} : 0.01 * {x};", &["y"])
///     .input("x", &x)
///     .derivative("y", "x", "{x} > 0 ? 1.0 : 0.01")?;
/// colwise_sum(leaky.output("y")?).eval()?.grad()?;
/// assert_eq!(x.adjoint().to_vec()?, vec![0.01, 1.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub struct CustomCode<'a, T: ClType, D: Dependence = Constant> {
    code: String,
    code_id: u32,
    inputs: Vec<(String, DynOp<'a, T, D>)>,
    outputs: Vec<String>,
    /// `(output, input, code)`: the derivative of an output with respect to
    /// an input.
    derivatives: Vec<(usize, usize, String)>,
}

impl<T: ClType, D: Dependence> std::fmt::Debug for CustomCode<'_, T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomCode")
            .field("code", &self.code)
            .field("outputs", &self.outputs)
            .finish()
    }
}

impl<'a, T: ClType> CustomCode<'a, T> {
    /// A snippet computing the named `outputs`.
    pub fn new(code: &str, outputs: &[&str]) -> Self {
        let code_id = clfuse_core::snippet_code(code);
        CustomCode {
            code: code.to_string(),
            code_id,
            inputs: Vec::new(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            derivatives: Vec::new(),
        }
    }
}

impl<'a, T: ClType, D: Dependence> CustomCode<'a, T, D> {
    /// Adds a named input (converted to `T` if needed); an input that
    /// depends on a variable makes the outputs depend on it too.
    pub fn input<E>(
        self,
        name: &str,
        expr: E,
    ) -> CustomCode<'a, T, D::Or<<E::Operand as Depends>::Dependence>>
    where
        E: IntoOperand,
        E::Operand: Differentiable<Scalar = T> + 'a,
    {
        let mut inputs: Vec<(
            String,
            DynOp<'a, T, D::Or<<E::Operand as Depends>::Dependence>>,
        )> = self
            .inputs
            .into_iter()
            .map(|(n, op)| (n, op.retag()))
            .collect();
        inputs.push((name.to_string(), boxed(expr).0.retag()));
        CustomCode {
            code: self.code,
            code_id: self.code_id,
            inputs,
            outputs: self.outputs,
            derivatives: self.derivatives,
        }
    }

    /// Declares `d output / d input` as OpenCL C in the snippet's `{name}`s
    /// (inputs and outputs), e.g. `"{x} > 0 ? 1.0 : 0.01"`.
    pub fn derivative(mut self, output: &str, input: &str, code: &str) -> Result<Self> {
        let out = self.output_index(output)?;
        let inp = self
            .inputs
            .iter()
            .position(|(n, _)| n == input)
            .ok_or_else(|| clfuse_core::Error::InvalidArgument {
                function: "CustomCode::derivative",
                argument: "input",
                reason: format!(
                    "`{input}` is not one of the inputs {:?}",
                    self.inputs.iter().map(|(n, _)| n).collect::<Vec<_>>()
                ),
            })?;
        self.derivatives.retain(|(o, i, _)| (*o, *i) != (out, inp));
        self.derivatives.push((out, inp, code.to_string()));
        // The declared derivatives change the code a step generates.
        self.code_id = clfuse_core::snippet_code(&format!("{}\n{:?}", self.code, self.derivatives));
        Ok(self)
    }

    fn output_index(&self, name: &str) -> Result<usize> {
        self.outputs.iter().position(|o| o == name).ok_or_else(|| {
            clfuse_core::Error::InvalidArgument {
                function: "CustomCode::output",
                argument: "name",
                reason: format!("`{name}` is not one of the outputs {:?}", self.outputs),
            }
        })
    }

    /// The expression holding output `name`.
    pub fn output(&self, name: &str) -> Result<Expr<CustomOutput<'_, 'a, T, D>>> {
        let index = self.output_index(name)?;
        Ok(Expr(CustomOutput { code: self, index }))
    }

    /// `text` with every `{name}` of an output replaced by its variable and
    /// of an input by `values[k]`.
    fn substitute(&self, mut text: String, outputs: &[String], values: &[String]) -> String {
        for (name, var) in self.outputs.iter().zip(outputs) {
            text = text.replace(&format!("{{{name}}}"), var);
        }
        for ((name, _), value) in self.inputs.iter().zip(values) {
            text = text.replace(&format!("{{{name}}}"), value);
        }
        text
    }
}

/// One output of a [`CustomCode`] snippet.
#[derive(Debug, Clone, Copy)]
pub struct CustomOutput<'c, 'a, T: ClType, D: Dependence = Constant> {
    code: &'c CustomCode<'a, T, D>,
    index: usize,
}

impl<T: ClType, D: Dependence> Depends for CustomOutput<'_, '_, T, D> {
    type Dependence = D;
}

impl<T: ClType, D: Dependence> CustomOutput<'_, '_, T, D> {
    fn base(&self) -> usize {
        self.code as *const CustomCode<'_, T, D> as usize
    }

    /// Emits the snippet once per index, its inputs' values being `values`
    /// (generated by `input`); returns every output's variable.
    fn snippet<E>(
        &self,
        g: &mut Generator,
        at: &Index,
        values: impl FnOnce(&mut Generator) -> std::result::Result<Vec<String>, E>,
    ) -> std::result::Result<Vec<String>, E> {
        let key = |k: usize| Identity::Shared(self.base().wrapping_add(k + 1));
        let known: Option<Vec<String>> = (0..self.code.outputs.len())
            .map(|k| g.known(key(k), at))
            .collect();
        if let Some(names) = known {
            return Ok(names);
        }
        let names: Vec<String> = self
            .code
            .outputs
            .iter()
            .map(|_| g.declare(T::CL_NAME, "0"))
            .collect();
        let values = values(g)?;
        let text = self
            .code
            .substitute(self.code.code.clone(), &names, &values);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            g.statement(line);
        }
        for (k, var) in names.iter().enumerate() {
            g.remember(key(k), at, var);
        }
        Ok(names)
    }
}

impl<T: ClType, D: Dependence> Operation for CustomOutput<'_, '_, T, D> {
    type Scalar = T;
    type Key = CustomOutput<'static, 'static, T, D>;

    fn shape(&self) -> Result<Shape> {
        let mut shape = None;
        for (_, input) in &self.code.inputs {
            shape = combine_shapes("custom code", shape, input.shape()?)?;
        }
        Ok(shape)
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let base = self.base();
        let Ok(names) = self.snippet::<std::convert::Infallible>(g, at, |g| {
            let mut values = Vec::new();
            g.shared_subtree(Identity::Shared(base), |g| {
                for (_, input) in &self.code.inputs {
                    values.push(input.generate(g, at));
                }
                String::new()
            });
            Ok(values)
        });
        names[self.index].clone()
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.structure(self.code.code_id);
        b.structure(self.index as u32);
        if b.first_use(Identity::Shared(self.base())) {
            for (_, input) in &self.code.inputs {
                input.bind(b);
            }
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        for (_, input) in &self.code.inputs {
            input.evaluate_leaves(held)?;
        }
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.code
            .inputs
            .iter()
            .any(|(_, input)| input.contains_reduction())
    }
}

impl<T: ClType, D: Dependence> Differentiable for CustomOutput<'_, '_, T, D> {
    /// The chain rule through the declared derivatives: `Σ_k d(out)/d(in_k)
    /// · tangent(in_k)` over the inputs that depend on a variable.
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        if !D::VARIABLE {
            return Ok(Dual::constant(self.generate(g, at)));
        }
        let duals = self
            .code
            .inputs
            .iter()
            .map(|(_, input)| input.generate_tangents(g, at))
            .collect::<Result<Vec<Dual>>>()?;
        let values: Vec<String> = duals.iter().map(|d| d.value.clone()).collect();
        let names = self.snippet(g, at, |_| Ok::<_, clfuse_core::Error>(values.clone()))?;
        let mut parts = Vec::new();
        for (k, dual) in duals.iter().enumerate() {
            if !dual.is_variable() {
                continue;
            }
            let Some((_, _, code)) = self
                .code
                .derivatives
                .iter()
                .find(|(o, i, _)| (*o, *i) == (self.index, k))
            else {
                return Err(clfuse_core::Error::InvalidArgument {
                    function: "CustomCode",
                    argument: "derivative",
                    reason: format!(
                        "output `{}` has no derivative with respect to input `{}`, which depends on a variable (declare \"0\" if it does not depend on it)",
                        self.code.outputs[self.index], self.code.inputs[k].0
                    ),
                });
            };
            if crate::rev::dual::number(code.trim()) == Some(0.0) {
                continue; // declared independent
            }
            let derivative = g.declare(
                T::CL_NAME,
                &self.code.substitute(code.clone(), &names, &values),
            );
            parts.push((dual, derivative));
        }
        let parts: Vec<(&Dual, &str)> = parts.iter().map(|(d, v)| (*d, v.as_str())).collect();
        Ok(Dual {
            value: names[self.index].clone(),
            tangents: Dual::chain(g, T::CL_NAME, &parts),
        })
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        for (_, input) in &self.code.inputs {
            input.record_leaves(reads)?;
        }
        Ok(())
    }
}
