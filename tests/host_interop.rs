//! faer and ndarray matrices to and from the device, both directions, for
//! contiguous and strided layouts. Run by `make test` with
//! `--features faer,ndarray` (the default build leaves both crates out).
#![cfg(all(feature = "faer", feature = "ndarray"))]

use clfuse::Result;
use clfuse::clfuse_core::{faer, ndarray};
use clfuse::prelude::*;

fn values(rows: usize, cols: usize) -> impl Fn(usize, usize) -> f64 {
    move |i, j| (i * 7 + j * 13) as f64 / (rows * cols).max(1) as f64 - 0.25
}

#[test]
fn faer_round_trips_at_odd_shapes() -> Result<()> {
    for (rows, cols) in [(0, 0), (1, 1), (31, 1), (33, 5), (1, 33), (100, 7)] {
        let f = values(rows, cols);
        let host = faer::Mat::from_fn(rows, cols, &f);
        let device = MatrixCl::try_from(&host)?;
        assert_eq!((device.rows(), device.cols()), (rows, cols));
        let column_major: Vec<f64> = (0..cols)
            .flat_map(|j| (0..rows).map(move |i| (i, j)))
            .map(|(i, j)| f(i, j))
            .collect();
        assert_eq!(device.to_vec()?, column_major);
        assert_eq!(faer::Mat::try_from(&device)?, host);
        // A strided view (the transpose) is gathered, not reinterpreted.
        let transposed = MatrixCl::try_from(host.transpose())?;
        assert_eq!((transposed.rows(), transposed.cols()), (cols, rows));
        let back = faer::Mat::<f64>::try_from(&transposed)?;
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(back[(j, i)], f(i, j));
            }
        }
    }
    Ok(())
}

#[test]
fn ndarray_round_trips_in_both_memory_orders() -> Result<()> {
    use ndarray::{Array2, ShapeBuilder};
    for (rows, cols) in [(0, 3), (1, 1), (31, 2), (33, 33), (7, 100)] {
        let f = values(rows, cols);
        let row_major = Array2::from_shape_fn((rows, cols), |(i, j)| f(i, j));
        let col_major = Array2::from_shape_fn((rows, cols).f(), |(i, j)| f(i, j));
        for host in [&row_major, &col_major] {
            let device = MatrixCl::try_from(host)?;
            let column_major: Vec<f64> = (0..cols)
                .flat_map(|j| (0..rows).map(move |i| (i, j)))
                .map(|(i, j)| f(i, j))
                .collect();
            assert_eq!(device.to_vec()?, column_major);
            let back = Array2::<f64>::try_from(&device)?;
            assert_eq!(&back, host);
            // Arrays from the device are column-major: a round trip copies as one block.
            assert!(back.t().is_standard_layout() || rows <= 1 || cols <= 1);
        }
        // A view with steps.
        let every_other = row_major.slice(ndarray::s![.., ..;2]);
        let device = MatrixCl::try_from(&every_other)?;
        assert_eq!(Array2::<f64>::try_from(&device)?, every_other);
    }
    Ok(())
}

#[test]
fn results_of_fused_kernels_come_back_as_faer_and_ndarray() -> Result<()> {
    let host = faer::Mat::from_fn(4, 3, |i, j| (i + j) as f32);
    let a = MatrixCl::try_from(&host)?;
    let doubled = (2.0f32 * &a).eval()?;
    let as_faer = faer::Mat::<f32>::try_from(&doubled)?;
    let as_ndarray = ndarray::Array2::<f32>::try_from(&doubled)?;
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(as_faer[(i, j)], 2.0 * (i + j) as f32);
            assert_eq!(as_ndarray[(i, j)], 2.0 * (i + j) as f32);
        }
    }
    Ok(())
}
