//! Custom OpenCL C fused with the rest of an expression: a snippet with named
//! inputs (any expressions) and named outputs (usable as expressions).

use crate::binder::{Binder, Identity};
use crate::dynamic::{DynOp, boxed};
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape, combine_shapes};
use crate::rev::Depends;
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
pub struct CustomCode<'a, T: ClType> {
    code: String,
    code_id: u32,
    inputs: Vec<(String, DynOp<'a, T>)>,
    outputs: Vec<String>,
}

impl<T: ClType> std::fmt::Debug for CustomCode<'_, T> {
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
        }
    }

    /// Adds a named input (converted to `T` if needed).
    pub fn input<E>(mut self, name: &str, expr: E) -> Self
    where
        E: IntoOperand,
        E::Operand: Operation<Scalar = T, Dependence = crate::rev::Constant> + 'a,
    {
        self.inputs.push((name.to_string(), boxed(expr).0));
        self
    }

    /// The expression holding output `name`.
    pub fn output(&self, name: &str) -> Result<Expr<CustomOutput<'_, 'a, T>>> {
        let index = self.outputs.iter().position(|o| o == name).ok_or_else(|| {
            clfuse_core::Error::InvalidArgument {
                function: "CustomCode::output",
                argument: "name",
                reason: format!("`{name}` is not one of the outputs {:?}", self.outputs),
            }
        })?;
        Ok(Expr(CustomOutput { code: self, index }))
    }
}

/// One output of a [`CustomCode`] snippet.
#[derive(Debug, Clone, Copy)]
pub struct CustomOutput<'c, 'a, T: ClType> {
    code: &'c CustomCode<'a, T>,
    index: usize,
}

impl<T: ClType> Depends for CustomOutput<'_, '_, T> {
    type Dependence = crate::rev::Constant;
}

impl<T: ClType> Operation for CustomOutput<'_, '_, T> {
    type Scalar = T;
    type Key = CustomOutput<'static, 'static, T>;

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
        let base = self.code as *const CustomCode<'_, T> as usize;
        let key = |k: usize| Identity::Shared(base.wrapping_add(k + 1));
        if let Some(var) = g.known(key(self.index), at) {
            return var;
        }
        let mut text = self.code.code.clone();
        let mut names = Vec::new();
        for output in &self.code.outputs {
            let var = g.declare(T::CL_NAME, "0");
            text = text.replace(&format!("{{{output}}}"), &var);
            names.push(var);
        }
        g.shared_subtree(Identity::Shared(base), |g| {
            for (name, input) in &self.code.inputs {
                let value = input.generate(g, at);
                text = text.replace(&format!("{{{name}}}"), &value);
            }
            String::new()
        });
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            g.statement(line);
        }
        for (k, var) in names.iter().enumerate() {
            g.remember(key(k), at, var);
        }
        names[self.index].clone()
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.structure(self.code.code_id);
        b.structure(self.index as u32);
        if b.first_use(Identity::Shared(
            self.code as *const CustomCode<'_, T> as usize,
        )) {
            for (_, input) in &self.code.inputs {
                input.bind(b);
            }
        }
    }

    fn evaluate_leaves(&self) -> Result<()> {
        for (_, input) in &self.code.inputs {
            input.evaluate_leaves()?;
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
