//! fusion-ops: lazy expression operations and the code generator that fuses
//! an expression into one OpenCL kernel.
//!
//! Trace of `d.assign(c * (&a + &b))`: the operators (in `clfuse_core::expr`)
//! build `ElewiseMul<Scalar<f64>, Add<Load, Load>>`; [`AssignExt::assign`]
//! (`assign.rs`) pairs it with its target as an [`Assignment`] output
//! (`outputs/`) and calls [`run`] (`driver.rs`), which checks shapes,
//! evaluates non-fusable leaves, picks a [`LaunchShape`] from the outputs'
//! [`Schedule`] (`launch_shape.rs`), binds arguments with a [`Binder`], looks
//! the kernel up in the device's `KernelCache` by type and alias pattern, on a
//! miss has every [`Operation`] emit its code into a [`Generator`], compiles
//! it, and enqueues it through `clfuse_core`.

/// Declares an element-wise operation from its OpenCL C snippet: the node
/// struct, its `Operation` impl, the free function and the method (trait
/// `<Name>Method`, in scope through a glob import of the declaring module).
///
/// ```text
/// clfuse_ops::elementwise! {
///     /// Optional docs.
///     pub struct Softplus;              // or `impl path::Existing;` for a node defined elsewhere
///     fn softplus(x) = "log1p(exp({x}))"; // one or two operands, named in the template
///     result = real;                    // real (i32 -> f64) | promote | same | int
///     view = entire;                    // keep | entire | union | intersection | first
///     helpers = [SOME_HELPER];          // optional: device functions the template calls
/// }
/// ```
/// `{F}` in a template is `f` for `float` and nothing for `double`, for
/// helpers written once per precision (`log1p_exp{F}`). See
/// `examples/user_function.rs` and CONTRIBUTING.md.
#[macro_export]
macro_rules! elementwise {
    ($($tokens:tt)*) => {
        $crate::__macros::elementwise_impl! { crate = $crate; $($tokens)* }
    };
}

#[doc(hidden)]
pub mod __macros {
    pub use clfuse_macros::elementwise_impl;
}

mod arithmetic;
mod assign;
mod binder;
mod check_set;
mod checks;
mod deferred_checks;
pub mod device_functions;
mod distances;
mod driver;
pub mod epilogue;
mod evaluate;
mod expression;
mod failure_flags;
mod functions;
mod gather_checks;
mod generator;
mod gp_covariance;
mod hoisted;
mod launch_shape;
mod leaves;
mod logic;
mod matrix_functions;
mod methods;
mod operation;
mod outputs;
mod precomputed;
mod product;
pub mod random;
mod read_back;
mod reductions;
mod results;
pub mod rev;
mod softmax;
mod structural;
mod targets;
mod templates;
mod transpose_product;

pub use arithmetic::{elt_divide, elt_multiply};
pub use assign::AssignExt;
pub use binder::{Binder, Identity};
pub use check_set::{CheckSet, CheckSetKey};
pub use checks::{
    Check, check, check_diagonal_zeros, check_finite, check_nan, check_positive, check_symmetric,
};
pub use clfuse_core::FusedKernel;
pub use device_functions::instantiate;
pub use distances::{
    LogDeterminantCholesky, SquaredDistance, log_determinant_cholesky, squared_distance,
};
pub use driver::{cached_kernels, fuse, fuse_then, run, source_of};
pub use epilogue::EpilogueProduct;
pub use evaluate::eval_colwise;
pub use expression::Expression;
pub use functions::*;
pub use generator::{Generator, Index, Section, StageLayout, StagedMatrix};
pub use gp_covariance::*;
pub use hoisted::Hoisted;
pub use launch_shape::{LaunchShape, RowBlockKind, staged_row_team};
pub use leaves::{
    ColIndex, Constant, RowIndex, ScalarOrColumn, col_index, constant, row_index, scalar_or_column,
};
pub use logic::*;
pub use matrix_functions::*;
pub use methods::{ElementwiseMethods, ExprMethods};
pub use operation::{HeldProduct, Operation, Shape, combine_shapes};
pub use outputs::{
    AsTarget, Assignable, Assignment, ColwiseAssignment, FullReduction, Optional, OutputList,
    Schedule, full_reduction, max, min, optional, output, prod, sum,
};
pub use precomputed::{Materialized, Precomputed};
pub use reductions::*;
pub use results::{Results, results};
pub use rev::boxed::{DynOp, boxed};
pub use rev::custom::{CustomCode, CustomOutput};
pub use rev::{Eval, ReductionMethods};
pub use softmax::{RowwiseSoftmax, rowwise_softmax};
pub use structural::*;
pub use targets::Target;
pub use templates::{RealOf, convert, expand};
pub use transpose_product::{
    TransposeProductAssignment, TransposeVectorMultiply, one_pass_worthwhile,
    transpose_vector_multiply,
};

pub use clfuse_core::expr::{
    Add, ElewiseDiv, ElewiseMul, Load, MatrixProduct, Neg, Scalar, Shared, Sub,
};
pub use clfuse_core::{ClType, Error, Expr, IntoOperand, MatrixCl, Promote, Result, View};

/// Everything needed to write expressions: `use clfuse_ops::prelude::*;`.
pub mod prelude {
    pub use crate::check_set::CheckSet;
    pub use crate::checks::{
        check, check_diagonal_zeros, check_finite, check_nan, check_positive, check_symmetric,
    };
    pub use crate::functions::*;
    pub use crate::gp_covariance::{
        GpParameter, add_diag, gp_dot_prod_cov, gp_dot_prod_cross_cov, gp_exp_quad_cov,
        gp_exp_quad_cross_cov, gp_exponential_cov, gp_exponential_cross_cov, gp_exponential_kernel,
        gp_matern32_cov, gp_matern32_cross_cov, gp_matern32_kernel, gp_matern52_cov,
        gp_matern52_cross_cov, gp_matern52_kernel, gp_periodic_cov, gp_periodic_cross_cov,
        gp_periodic_kernel,
    };
    pub use crate::logic::*;
    pub use crate::matrix_functions::{
        columns_dot_product, columns_dot_self, crossprod, cumulative_sum, diag_post_multiply,
        diag_pre_multiply, dot_product, dot_self, log_mix, log_mix_vector, log_softmax, mean,
        quad_form, quad_form_diag, reverse, rows_dot_product, rows_dot_self, sd, tcrossprod, trace,
        variance,
    };
    pub use crate::reductions::{
        colwise_log_sum_exp, colwise_max, colwise_min, colwise_prod, colwise_sum,
        matrix_vector_multiply, rowwise_log_sum_exp, rowwise_max, rowwise_min, rowwise_prod,
        rowwise_sum,
    };
    pub use crate::softmax::rowwise_softmax;
    pub use crate::structural::{
        append_col, append_row, block, colwise_broadcast, diagonal, indexing, optional_broadcast,
        rowwise_broadcast, scalar_broadcast, transpose,
    };
    pub use crate::transpose_product::transpose_vector_multiply;
    pub use crate::{
        AssignExt, CustomCode, ElementwiseMethods, Eval, ExprMethods, Expression, ReductionMethods,
        ScalarOrColumn, boxed, col_index, constant, elt_divide, elt_multiply, fuse, max, min,
        optional, output, prod, results, row_index, scalar_or_column, sum,
    };
    pub use crate::{log_determinant_cholesky, squared_distance};
    pub use clfuse_core::{ClType, Error, Expr, MatrixCl, View};
}
