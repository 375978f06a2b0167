//! Differential fuzzing of what the random trees (`proptest_trees.rs`) do
//! not reach: assignment targets — blocks, transposes, diagonals and
//! scatters, in range or not (out of range must be an `Err` that wrote
//! nothing) — and the linear-algebra leaves, on clean inputs (against
//! nalgebra) and on inputs holding one NaN or inf (an `Err` naming it).
//! `FUSION_PROPTEST_CASES` sets the cases per property (64 by default).

use crate::common;

use clfuse::Error;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::{assert_relative, to_device, to_host};
use nalgebra::DMatrix;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum TargetKind {
    Block {
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    },
    Transpose,
    Diagonal,
    /// Row and column indices of each scattered element.
    Scatter(Vec<(i32, i32)>),
}

#[derive(Debug, Clone)]
struct TargetCase {
    rows: usize,
    cols: usize,
    target: TargetKind,
    /// `target = 2 * source + 1` or `target += source`.
    compound: bool,
    seed: u64,
}

fn target_case() -> impl Strategy<Value = TargetCase> {
    (0usize..12, 0usize..12, any::<bool>(), any::<u64>())
        .prop_flat_map(|(rows, cols, compound, seed)| {
            let (r, c) = (rows as i32, cols as i32);
            let target = prop_oneof![
                4 => (0..rows + 3, 0..cols + 3, 0..rows + 3, 0..cols + 3).prop_map(
                    |(row, col, h, w)| TargetKind::Block { row, col, rows: h, cols: w }
                ),
                1 => Just(TargetKind::Transpose),
                1 => Just(TargetKind::Diagonal),
                3 => proptest::collection::vec((-1..r + 1, -1..c + 1), 0..6)
                    .prop_map(TargetKind::Scatter),
            ];
            (Just(rows), Just(cols), target, Just(compound), Just(seed))
        })
        .prop_map(|(rows, cols, target, compound, seed)| TargetCase {
            rows,
            cols,
            target,
            compound,
            seed,
        })
}

/// Deterministic values in [-2, 2).
fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = common::linalg::Rng::new(seed | 1);
    (0..len).map(|_| rng.next() * 4.0 - 2.0).collect()
}

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// The positions `(i, j)` of the matrix that element `(p, q)` of the target
/// writes, the target's shape, and whether it fits; `None` when it does not.
fn written_positions(c: &TargetCase) -> Option<((usize, usize), Vec<(usize, usize)>)> {
    match &c.target {
        TargetKind::Block {
            row,
            col,
            rows,
            cols,
        } => {
            if row + rows > c.rows || col + cols > c.cols {
                return None;
            }
            let cells = (0..*cols)
                .flat_map(|q| (0..*rows).map(move |p| (row + p, col + q)))
                .collect();
            Some(((*rows, *cols), cells))
        }
        TargetKind::Transpose => {
            let cells = (0..c.rows)
                .flat_map(|q| (0..c.cols).map(move |p| (q, p)))
                .collect();
            Some(((c.cols, c.rows), cells))
        }
        TargetKind::Diagonal => {
            let n = c.rows.min(c.cols);
            Some(((n, 1), (0..n).map(|p| (p, p)).collect()))
        }
        TargetKind::Scatter(ix) => {
            let inside = ix
                .iter()
                .all(|(i, j)| (0..c.rows as i32).contains(i) && (0..c.cols as i32).contains(j));
            if !inside {
                return None;
            }
            let cells = ix.iter().map(|(i, j)| (*i as usize, *j as usize)).collect();
            Some(((ix.len(), 1), cells))
        }
    }
}

fn run_target_case(c: &TargetCase) -> std::result::Result<(), TestCaseError> {
    let before = values(c.rows * c.cols, c.seed);
    let m = MatrixCl::from_slice(c.rows, c.cols, &before).map_err(fail)?;
    let expected = written_positions(c);
    let (src_rows, src_cols) = match (&expected, &c.target) {
        (Some((shape, _)), _) => *shape,
        (None, TargetKind::Block { rows, cols, .. }) => (*rows, *cols),
        (None, TargetKind::Scatter(ix)) => (ix.len(), 1),
        (None, _) => unreachable!("transposes and diagonals always fit"),
    };
    let source_values = values(src_rows * src_cols, c.seed.wrapping_add(7));
    let source = MatrixCl::from_slice(src_rows, src_cols, &source_values).map_err(fail)?;
    // `target = 2 * source + 1`, or `target += source`.
    macro_rules! write_into {
        ($target:expr) => {{
            let t = $target;
            if c.compound {
                t.add_assign(&source)
            } else {
                t.assign(2.0f64 * &source + 1.0f64)
            }
        }};
    }
    let result = match &c.target {
        TargetKind::Block {
            row,
            col,
            rows,
            cols,
        } => write_into!(block(&m, *row, *col, *rows, *cols)),
        TargetKind::Transpose => write_into!(transpose(&m)),
        TargetKind::Diagonal => write_into!(diagonal(&m)),
        TargetKind::Scatter(ix) => {
            let r: Vec<i32> = ix.iter().map(|p| p.0).collect();
            let q: Vec<i32> = ix.iter().map(|p| p.1).collect();
            let (r, q) = (
                MatrixCl::from_slice(ix.len(), 1, &r).map_err(fail)?,
                MatrixCl::from_slice(ix.len(), 1, &q).map_err(fail)?,
            );
            // Repeated positions race (documented); assign a value that
            // does not depend on the element so every racer writes the same.
            indexing(&m, &r, &q).assign(constant(0.5f64, ix.len(), 1))
        }
    };
    let after = m.to_vec().map_err(fail)?;
    match expected {
        None => {
            prop_assert!(
                matches!(result, Err(Error::TargetOutOfRange { .. })),
                "{c:?}: expected TargetOutOfRange, got {result:?}"
            );
            prop_assert_eq!(&after, &before, "{:?}: the matrix changed", c);
        }
        Some((_, cells)) => {
            result.map_err(fail)?;
            let mut want = before.clone();
            for (k, (i, j)) in cells.into_iter().enumerate() {
                let s = source_values.get(k).copied().unwrap_or(0.0);
                let old = before[i + c.rows * j];
                want[i + c.rows * j] = match (&c.target, c.compound) {
                    (TargetKind::Scatter(_), _) => 0.5,
                    (_, true) => old + s,
                    (_, false) => 2.0 * s + 1.0,
                };
            }
            for (k, (g, w)) in after.iter().zip(&want).enumerate() {
                prop_assert!((g - w).abs() <= 1e-12, "{c:?}: element {k}: {g} vs {w}");
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
struct LeafCase {
    n: usize,
    seed: u64,
    /// A NaN or inf placed at (row, col) of the input, if any.
    poison: Option<(usize, usize, f64)>,
}

fn leaf_case() -> impl Strategy<Value = LeafCase> {
    (0usize..40, any::<u64>(), any::<bool>(), 0usize..3)
        .prop_flat_map(|(n, seed, poisoned, which)| {
            let value = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][which];
            let poison = if poisoned && n > 0 {
                (0..n, 0..n)
                    .prop_map(move |(i, j)| Some((i.max(j), i.min(j), value)))
                    .boxed()
            } else {
                Just(None).boxed()
            };
            (Just(n), Just(seed), poison)
        })
        .prop_map(|(n, seed, poison)| LeafCase { n, seed, poison })
}

fn run_leaf_case(c: &LeafCase) -> std::result::Result<(), TestCaseError> {
    let n = c.n;
    let mut rng = common::linalg::Rng::new(c.seed | 1);
    let g = rng.matrix(n, n);
    // A well-conditioned SPD matrix and a lower factor with a strong diagonal.
    let spd = &g * g.transpose() + DMatrix::identity(n, n) * (n as f64 + 1.0);
    let lower = DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            2.0 + g[(i, j)].abs()
        } else if i > j {
            g[(i, j)] / n as f64
        } else {
            0.0
        }
    });
    let rhs = rng.matrix(n, 2);
    let (mut spd_in, mut lower_in) = (spd.clone(), lower.clone());
    if let Some((i, j, v)) = c.poison {
        spd_in[(i, j)] = v;
        spd_in[(j, i)] = v;
        lower_in[(i, j)] = v;
    }
    let chol = k::cholesky_decompose(&to_device(&spd_in));
    let inv = k::tri_inverse(&to_device(&lower_in).with_view(View::Lower));
    let solve = k::mdivide_left_tri(
        &to_device(&lower_in).with_view(View::Lower),
        &to_device(&rhs),
    );
    match c.poison {
        Some((i, j, _)) => {
            for (name, err) in [
                ("cholesky_decompose", chol.err()),
                ("tri_inverse", inv.err()),
                ("mdivide_left_tri", solve.err()),
            ] {
                prop_assert!(
                    matches!(err, Some(Error::NotFinite { function, row, col, .. })
                        if function == name && (row, col) == (i, j)),
                    "{c:?}: {name} gave {err:?}"
                );
            }
        }
        None => {
            let l = to_host(&chol.map_err(fail)?);
            let want = spd.clone().cholesky().expect("SPD").l();
            assert_relative("cholesky", &l, &want, 1e-10);
            let inv = to_host(&inv.map_err(fail)?);
            let want = lower.clone().try_inverse().expect("invertible");
            assert_relative("tri_inverse", &inv, &want, 1e-10);
            let x = to_host(&solve.map_err(fail)?);
            let want = lower.solve_lower_triangular(&rhs).expect("solvable");
            assert_relative("mdivide_left_tri", &x, &want, 1e-10);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::soak::cases(64), rng_seed: common::soak::seed(0x5eed_7a29_0000_0002), max_shrink_iters: 64, ..ProptestConfig::default() })]

    #[test]
    fn assignment_targets_match_the_cpu_or_refuse(c in target_case()) {
        run_target_case(&c)?;
    }

    #[test]
    fn linear_algebra_leaves_match_nalgebra_or_name_the_bad_input(c in leaf_case()) {
        run_leaf_case(&c)?;
    }
}
