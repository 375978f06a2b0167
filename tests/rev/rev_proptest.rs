//! Random expression trees over two variables and a constant (aliasing,
//! shared sub-expressions, transposes, 0-size and 1 x 1 shapes), their
//! gradients against central finite differences of a CPU evaluation. Ten
//! trees, weighted differently, share one step per case: 50 cases = 500
//! trees with `FUSION_SOAK=1`; CI runs the first 25 cases (each compiles
//! its own kernels: the 50 took over a minute of a 2-core machine with cold
//! caches). `FUSION_PROPTEST_CASES` sets any count for soak runs.

use crate::common;

use clfuse::Result;
use clfuse::clfuse_ops::{DynOp, boxed};
use clfuse::prelude::*;
use clfuse::rev::{self, Var, Variable};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Tree {
    X,
    Y,
    /// The constant matrix.
    C,
    Unary(Unary, Box<Tree>),
    Binary(Binary, Box<Tree>, Box<Tree>),
    Transpose(Box<Tree>),
    /// `s + s .* s` with `s` one shared sub-expression.
    Shared(Box<Tree>),
    /// `select(x < y, a, b)`.
    Select(Box<Tree>, Box<Tree>),
}

#[derive(Debug, Clone, Copy)]
enum Unary {
    Neg,
    Tanh,
    Sin,
    InvLogit,
    Log1pExp,
    Atan,
}

#[derive(Debug, Clone, Copy)]
enum Binary {
    Add,
    Sub,
    Mul,
    LogSumExp,
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![Just(Tree::X), Just(Tree::Y), Just(Tree::C)];
    leaf.prop_recursive(5, 24, 2, |inner| {
        let unary = prop_oneof![
            Just(Unary::Neg),
            Just(Unary::Tanh),
            Just(Unary::Sin),
            Just(Unary::InvLogit),
            Just(Unary::Log1pExp),
            Just(Unary::Atan)
        ];
        let binary = prop_oneof![
            Just(Binary::Add),
            Just(Binary::Sub),
            Just(Binary::Mul),
            Just(Binary::LogSumExp)
        ];
        prop_oneof![
            (unary, inner.clone()).prop_map(|(u, a)| Tree::Unary(u, Box::new(a))),
            (binary, inner.clone(), inner.clone()).prop_map(|(b, l, r)| Tree::Binary(
                b,
                Box::new(l),
                Box::new(r)
            )),
            inner.clone().prop_map(|a| Tree::Transpose(Box::new(a))),
            inner.clone().prop_map(|a| Tree::Shared(Box::new(a))),
            (inner.clone(), inner).prop_map(|(a, b)| Tree::Select(Box::new(a), Box::new(b))),
        ]
    })
}

/// The CPU value of `tree` at (i, j) of n x n matrices.
fn cpu(tree: &Tree, m: &[&[f64]; 3], n: usize, i: usize, j: usize) -> f64 {
    match tree {
        Tree::X => m[0][i + n * j],
        Tree::Y => m[1][i + n * j],
        Tree::C => m[2][i + n * j],
        Tree::Unary(u, a) => {
            let a = cpu(a, m, n, i, j);
            match u {
                Unary::Neg => -a,
                Unary::Tanh => a.tanh(),
                Unary::Sin => a.sin(),
                Unary::InvLogit => 1.0 / (1.0 + (-a).exp()),
                Unary::Log1pExp => a.exp().ln_1p(),
                Unary::Atan => a.atan(),
            }
        }
        Tree::Binary(b, l, r) => {
            let (l, r) = (cpu(l, m, n, i, j), cpu(r, m, n, i, j));
            match b {
                Binary::Add => l + r,
                Binary::Sub => l - r,
                Binary::Mul => l * r,
                Binary::LogSumExp => l.max(r) + (-(l - r).abs()).exp().ln_1p(),
            }
        }
        Tree::Transpose(a) => cpu(a, m, n, j, i),
        Tree::Shared(a) => {
            let s = cpu(a, m, n, i, j);
            s + s * s
        }
        Tree::Select(a, b) => {
            if m[0][i + n * j] < m[1][i + n * j] {
                cpu(a, m, n, i, j)
            } else {
                cpu(b, m, n, i, j)
            }
        }
    }
}

type Node<'a> = DynOp<'a, f64, Variable>;

/// The device expression of `tree`; every leaf depends on `x` (a constant
/// leaf as `c + 0 * x`) so that all nodes share one type.
fn device<'a>(tree: &Tree, x: &'a Var, y: &'a Var, c: &'a MatrixCl<f64>) -> Node<'a> {
    let e = match tree {
        Tree::X => boxed(x),
        Tree::Y => boxed(y),
        Tree::C => boxed(c + 0.0 * x),
        Tree::Unary(u, a) => {
            let a = device(a, x, y, c);
            match u {
                Unary::Neg => boxed(-Expr(a)),
                Unary::Tanh => boxed(tanh(Expr(a))),
                Unary::Sin => boxed(sin(Expr(a))),
                Unary::InvLogit => boxed(inv_logit(Expr(a))),
                Unary::Log1pExp => boxed(log1p_exp(Expr(a))),
                Unary::Atan => boxed(atan(Expr(a))),
            }
        }
        Tree::Binary(b, l, r) => {
            let (l, r) = (Expr(device(l, x, y, c)), Expr(device(r, x, y, c)));
            match b {
                Binary::Add => boxed(l + r),
                Binary::Sub => boxed(l - r),
                Binary::Mul => boxed(elt_multiply(l, r)),
                Binary::LogSumExp => boxed(log_sum_exp(l, r)),
            }
        }
        Tree::Transpose(a) => boxed(transpose(Expr(device(a, x, y, c)))),
        Tree::Shared(a) => {
            let (s1, s2, s3) = (device(a, x, y, c), device(a, x, y, c), device(a, x, y, c));
            boxed(Expr(s1) + elt_multiply(Expr(s2), Expr(s3)))
        }
        Tree::Select(a, b) => boxed(select(
            lt(x, y),
            Expr(device(a, x, y, c)),
            Expr(device(b, x, y, c)),
        )),
    };
    e.0
}

/// Σ_k w_k Σ_ij (t_k + t_k²) on the CPU.
fn cpu_total(trees: &[Tree], m: &[&[f64]; 3], n: usize) -> f64 {
    let mut total = 0.0;
    for (k, t) in trees.iter().enumerate() {
        let w = 1.0 + 0.25 * k as f64;
        for i in 0..n {
            for j in 0..n {
                let v = cpu(t, m, n, i, j);
                total += w * (v + v * v);
            }
        }
    }
    total
}

fn check(trees: &[Tree], n: usize, seed: f64) -> Result<()> {
    let vals = |s: f64| -> Vec<f64> {
        (0..n * n)
            .map(|k| ((k as f64 + s) * 0.7548776662).fract() * 2.0 - 1.0)
            .collect()
    };
    let (xs, ys, cs) = (vals(seed), vals(seed + 0.5), vals(seed + 0.25));
    let x = Var::new(MatrixCl::from_slice(n, n, &xs)?);
    let y = Var::new(MatrixCl::from_slice(n, n, &ys)?);
    let c = MatrixCl::from_slice(n, n, &cs)?;
    let nodes: Vec<Expr<Node>> = trees.iter().map(|t| Expr(device(t, &x, &y, &c))).collect();
    // Each tree is read twice through a shared reference (`&nodes[k]`).
    let mut sum: Expr<Node> = boxed(0.0 * &x);
    for (k, node) in nodes.iter().enumerate() {
        let w = 1.0 + 0.25 * k as f64;
        sum = boxed(sum + w * (node + elt_multiply(node, node)));
    }
    let by_column = colwise_sum(sum).eval()?;
    let total = colwise_sum(transpose(&by_column)).eval()?;
    total.grad()?;
    let m = [&xs[..], &ys[..], &cs[..]];
    let value = total.value().to_vec()?[0];
    let want = cpu_total(trees, &m, n);
    assert!(
        (value - want).abs() <= 1e-10 * want.abs().max(1.0),
        "value {value} vs {want}"
    );
    for (which, var) in [(0usize, &x), (1, &y)] {
        let got = var.adjoint().to_vec()?;
        for k in 0..n * n {
            let h = 1e-6;
            let shifted = |d: f64| {
                let mut p = [xs.clone(), ys.clone()];
                p[which][k] += d;
                cpu_total(trees, &[&p[0], &p[1], &cs], n)
            };
            let fd = (shifted(h) - shifted(-h)) / (2.0 * h);
            // Kinks of select at x = y are avoided by the data (x != y).
            assert!(
                (got[k] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
                "d/d{}[{k}]: autodiff {} vs finite difference {fd} in {trees:?}",
                ["x", "y"][which],
                got[k]
            );
        }
    }
    rev::clear()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::soak::cases(common::soak::full_or("rev_proptest cases", 25, 50)), failure_persistence: None, rng_seed: common::soak::seed(0x5eed_0de7_0000_0003), max_shrink_iters: 64, ..ProptestConfig::default() })]

    #[test]
    fn gradients_of_random_trees_match_finite_differences(
        trees in prop::collection::vec(tree(), 10),
        n in prop_oneof![Just(0usize), Just(1), Just(2), Just(3)],
        seed in 0.0f64..10.0,
    ) {
        check(&trees, n, seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
