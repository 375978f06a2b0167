//! Random expression trees (depth <= 6) over random shapes, views and element
//! types, evaluated on the device and on the CPU. Ten trees share one
//! multi-output kernel per case; 50 cases = 500 trees per run. Set
//! `FUSION_PROPTEST_CASES` for soak runs.

use crate::common;

use clfuse::Result;
use clfuse::clfuse_ops::{DynOp, boxed};
use clfuse::prelude::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Node {
    Leaf(usize),
    Const(f64),
    Unary(Unary, Box<Node>),
    Binary(Binary, Box<Node>, Box<Node>),
    /// select(lt(a, b), c, d)
    Select(Box<[Node; 4]>),
}

#[derive(Debug, Clone, Copy)]
enum Unary {
    Neg,
    Tanh,
    Sin,
    InvLogit,
    Log1pExp,
    Fabs,
    Sqrt1p, // sqrt(1 + x * x)
    /// block(append_row(a, a), 1, 0, rows, cols): rows shifted up by one, wrapping.
    Shift,
    /// colwise_broadcast(rowwise_sum(a), cols) / cols: each row's mean.
    RowMean,
}

#[derive(Debug, Clone, Copy)]
enum Binary {
    Add,
    Sub,
    Mul,
    Fmin,
    Fmax,
    Hypot,
    LogSumExp,
}

const LEAVES: usize = 3;

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        4 => (0..LEAVES).prop_map(Node::Leaf),
        1 => (-2.0f64..2.0).prop_map(Node::Const),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        let unary = prop_oneof![
            Just(Unary::Neg),
            Just(Unary::Tanh),
            Just(Unary::Sin),
            Just(Unary::InvLogit),
            Just(Unary::Log1pExp),
            Just(Unary::Fabs),
            Just(Unary::Sqrt1p),
            Just(Unary::Shift),
            Just(Unary::RowMean)
        ];
        let binary = prop_oneof![
            Just(Binary::Add),
            Just(Binary::Sub),
            Just(Binary::Mul),
            Just(Binary::Fmin),
            Just(Binary::Fmax),
            Just(Binary::Hypot),
            Just(Binary::LogSumExp)
        ];
        prop_oneof![
            3 => (unary, inner.clone()).prop_map(|(u, a)| Node::Unary(u, Box::new(a))),
            4 => (binary, inner.clone(), inner.clone()).prop_map(|(b, x, y)| Node::Binary(b, Box::new(x), Box::new(y))),
            1 => (inner.clone(), inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c, d)| Node::Select(Box::new([a, b, c, d]))),
        ]
    })
}

fn view() -> impl Strategy<Value = View> {
    prop_oneof![
        Just(View::Entire),
        Just(View::Lower),
        Just(View::Upper),
        Just(View::Diagonal)
    ]
}

/// Builds the device expression with the library's own operations.
macro_rules! builder {
    ($name:ident, $t:ty) => {
        fn $name<'a>(n: &Node, mats: &'a [MatrixCl<$t>]) -> Expr<DynOp<'a, $t>> {
            match n {
                Node::Leaf(k) => boxed(&mats[*k]),
                Node::Const(c) => boxed(constant(*c as $t, mats[0].rows(), mats[0].cols())),
                Node::Unary(u, node) => {
                    let a = $name(node, mats);
                    match u {
                        Unary::Neg => boxed(-a),
                        Unary::Tanh => boxed(tanh(a)),
                        Unary::Sin => boxed(sin(a)),
                        Unary::InvLogit => boxed(inv_logit(a)),
                        Unary::Log1pExp => boxed(log1p_exp(a)),
                        Unary::Fabs => boxed(fabs(a)),
                        Unary::Sqrt1p => boxed(sqrt(square(a) + (1.0 as $t))),
                        Unary::Shift => {
                            let (r, c) = (mats[0].rows(), mats[0].cols());
                            boxed(block(append_row(a, $name(node, mats)), 1.min(r), 0, r, c))
                        }
                        Unary::RowMean => {
                            let c = mats[0].cols();
                            boxed(colwise_broadcast(rowwise_sum(a), c) / (c.max(1) as $t))
                        }
                    }
                }
                Node::Binary(b, x, y) => {
                    let (x, y) = ($name(x, mats), $name(y, mats));
                    match b {
                        Binary::Add => boxed(x + y),
                        Binary::Sub => boxed(x - y),
                        Binary::Mul => boxed(elt_multiply(x, y)),
                        Binary::Fmin => boxed(fmin(x, y)),
                        Binary::Fmax => boxed(fmax(x, y)),
                        Binary::Hypot => boxed(hypot(x, y)),
                        Binary::LogSumExp => boxed(log_sum_exp(x, y)),
                    }
                }
                Node::Select(parts) => {
                    let [a, b, c, d] = parts.as_ref();
                    boxed(select(
                        lt($name(a, mats), $name(b, mats)),
                        $name(c, mats),
                        $name(d, mats),
                    ))
                }
            }
        }
    };
}
builder!(build_f64, f64);
builder!(build_f32, f32);

#[derive(Clone, Copy)]
struct Grid {
    rows: usize,
    cols: usize,
}

fn cpu(n: &Node, leaves: &[Vec<f64>], g: Grid, i: usize, j: usize) -> f64 {
    match n {
        Node::Leaf(m) => leaves[*m][i + g.rows * j],
        Node::Const(c) => *c,
        Node::Unary(u, a) => {
            if let Unary::Shift = u {
                return cpu(a, leaves, g, (i + 1) % g.rows, j);
            }
            if let Unary::RowMean = u {
                return (0..g.cols).map(|k| cpu(a, leaves, g, i, k)).sum::<f64>() / g.cols as f64;
            }
            let x = cpu(a, leaves, g, i, j);
            match u {
                Unary::Neg => -x,
                Unary::Tanh => x.tanh(),
                Unary::Sin => x.sin(),
                Unary::InvLogit => common::reference::inv_logit(x),
                Unary::Log1pExp => common::reference::log1p_exp(x),
                Unary::Fabs => x.abs(),
                Unary::Sqrt1p => (x * x + 1.0).sqrt(),
                Unary::Shift | Unary::RowMean => unreachable!("handled above"),
            }
        }
        Node::Binary(b, x, y) => {
            let (x, y) = (cpu(x, leaves, g, i, j), cpu(y, leaves, g, i, j));
            match b {
                Binary::Add => x + y,
                Binary::Sub => x - y,
                Binary::Mul => x * y,
                Binary::Fmin => x.min(y),
                Binary::Fmax => x.max(y),
                Binary::Hypot => x.hypot(y),
                Binary::LogSumExp => common::reference::log_sum_exp(x, y),
            }
        }
        Node::Select(parts) => {
            let [a, b, c, d] = parts.as_ref();
            if cpu(a, leaves, g, i, j) < cpu(b, leaves, g, i, j) {
                cpu(c, leaves, g, i, j)
            } else {
                cpu(d, leaves, g, i, j)
            }
        }
    }
}

/// True when a comparison in the tree is too close to call in f32/f64 rounding.
fn near_tie(n: &Node, leaves: &[Vec<f64>], g: Grid, i: usize, j: usize, eps: f64) -> bool {
    match n {
        Node::Leaf(_) | Node::Const(_) => false,
        Node::Unary(Unary::Shift, a) => near_tie(a, leaves, g, (i + 1) % g.rows, j, eps),
        Node::Unary(Unary::RowMean, a) => (0..g.cols).any(|k| near_tie(a, leaves, g, i, k, eps)),
        Node::Unary(_, a) => near_tie(a, leaves, g, i, j, eps),
        Node::Binary(_, x, y) => {
            near_tie(x, leaves, g, i, j, eps) || near_tie(y, leaves, g, i, j, eps)
        }
        Node::Select(parts) => {
            let [a, b, ..] = parts.as_ref();
            let (x, y) = (cpu(a, leaves, g, i, j), cpu(b, leaves, g, i, j));
            (x - y).abs() <= eps * x.abs().max(y.abs()).max(1.0)
                || parts.iter().any(|p| near_tie(p, leaves, g, i, j, eps))
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    rows: usize,
    cols: usize,
    views: [View; LEAVES],
    data: Vec<Vec<f64>>,
    trees: Vec<Node>,
    single_precision: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0usize..40,
        0usize..40,
        [view(), view(), view()],
        any::<bool>(),
        proptest::collection::vec(node(), 10),
    )
        .prop_flat_map(|(rows, cols, views, single_precision, trees)| {
            let data = proptest::collection::vec(
                proptest::collection::vec(-3.0f64..3.0, rows * cols),
                LEAVES,
            );
            (
                Just(rows),
                Just(cols),
                Just(views),
                data,
                Just(trees),
                Just(single_precision),
            )
        })
        .prop_map(|(rows, cols, views, data, trees, single_precision)| Case {
            rows,
            cols,
            views,
            data,
            trees,
            single_precision,
        })
}

macro_rules! runner {
    ($name:ident, $t:ty, $build:ident) => {
        fn $name(c: &Case, tol: f64) -> std::result::Result<(), TestCaseError> {
            type T = $t;
            let n = c.rows * c.cols;
            let mats: Vec<MatrixCl<T>> = (0..LEAVES)
                .map(|m| {
                    let host: Vec<T> = c.data[m].iter().map(|v| T::from_f64(*v)).collect();
                    MatrixCl::from_slice(c.rows, c.cols, &host).map(|x| x.with_view(c.views[m]))
                })
                .collect::<Result<_>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            // CPU sees exactly the device inputs, zeroed outside each view.
            let leaves: Vec<Vec<f64>> = (0..LEAVES)
                .map(|m| {
                    (0..n)
                        .map(|k| {
                            if c.views[m].contains(k % c.rows.max(1), k / c.rows.max(1)) {
                                T::from_f64(c.data[m][k]).to_f64()
                            } else {
                                0.0
                            }
                        })
                        .collect()
                })
                .collect();
            let outs: Vec<MatrixCl<T>> = (0..10)
                .map(|_| MatrixCl::<T>::zeros(c.rows, c.cols))
                .collect::<Result<_>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let t: Vec<Expr<DynOp<'_, T>>> =
                c.trees.iter().map(|tree| $build(tree, &mats)).collect();
            let mut it = t.into_iter();
            let mut next = || it.next().expect("ten trees");
            results((
                &outs[0], &outs[1], &outs[2], &outs[3], &outs[4], &outs[5], &outs[6], &outs[7],
                &outs[8], &outs[9],
            ))
            .assign((
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
                next(),
            ))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            for (tree, out) in c.trees.iter().zip(&outs) {
                let got = out
                    .to_vec()
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let grid = Grid {
                    rows: c.rows,
                    cols: c.cols,
                };
                for k in 0..n {
                    let (i, j) = (k % c.rows, k / c.rows);
                    if near_tie(tree, &leaves, grid, i, j, tol * 10.0) {
                        continue;
                    }
                    let want = cpu(tree, &leaves, grid, i, j);
                    let g = got[k].to_f64();
                    let scale = want.abs().max(1.0);
                    prop_assert!(
                        (g - want).abs() <= tol * scale * 8.0,
                        "tree {tree:?} element {k}: device {g}, cpu {want}"
                    );
                }
            }
            Ok(())
        }
    };
}
runner!(run_f64, f64, build_f64);
runner!(run_f32, f32, build_f32);

proptest! {
    #![proptest_config(ProptestConfig { cases: common::soak::cases(50), rng_seed: common::soak::seed(0x5eed_f051_0000_0001), max_shrink_iters: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_match_the_cpu(c in case()) {
        if c.single_precision {
            run_f32(&c, 1e-5)?;
        } else {
            run_f64(&c, 1e-12)?;
        }
    }
}
