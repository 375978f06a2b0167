//! Foundation: transfers, views, packed transfers, events, typed kernels, errors.

use crate::common;

use clfuse::Error;
use clfuse::Result;
use clfuse::clfuse_core::{NdRange, Out, TypedKernel};
use clfuse::prelude::*;

fn pattern<T: ClType>(n: usize) -> Vec<T> {
    (0..n)
        .map(|k| T::from_f64(((k * 7919) % 1000) as f64 - 500.0))
        .collect()
}

fn round_trip<T: ClType>() -> Result<()> {
    for (rows, cols) in [
        (0, 0),
        (0, 5),
        (5, 0),
        (1, 1),
        (31, 33),
        (33, 31),
        (1000, 3),
        (1, 257),
    ] {
        let host = pattern::<T>(rows * cols);
        let m = MatrixCl::from_slice(rows, cols, &host)?;
        assert_eq!((m.rows(), m.cols()), (rows, cols));
        assert_eq!(m.to_vec()?, host, "{rows}x{cols} {}", T::CL_NAME);
        for view in [View::Entire, View::Lower, View::Upper, View::Diagonal] {
            m.set_view(view);
            assert_eq!(m.view(), view);
        }
        let z = MatrixCl::<T>::zeros(rows, cols)?;
        assert!(z.to_vec()?.iter().all(|v| *v == T::default()));
        let c = MatrixCl::constant(rows, cols, T::one())?;
        assert!(c.to_vec()?.iter().all(|v| *v == T::one()));
        let copy = m.try_clone()?;
        assert_eq!(copy.to_vec()?, host);
    }
    Ok(())
}

#[test]
fn round_trips_every_type_and_shape() -> Result<()> {
    round_trip::<f64>()?;
    round_trip::<f32>()?;
    round_trip::<i32>()
}

fn packed_trip<T: ClType>() -> Result<()> {
    for n in [0, 1, 2, 31, 33, 100] {
        for view in [View::Lower, View::Upper] {
            let packed = pattern::<T>(clfuse::clfuse_kernels::packed_len(n));
            let m = MatrixCl::from_packed(n, view, &packed)?;
            assert_eq!(m.view(), view);
            let full = m.to_vec()?;
            // The other triangle is zero, the triangle holds the packed values in column order.
            let mut k = 0;
            for j in 0..n {
                for i in 0..n {
                    let inside = view.contains(i, j);
                    if inside {
                        assert_eq!(full[i + n * j], packed[k], "n={n} {view:?} ({i},{j})");
                        k += 1;
                    } else {
                        assert_eq!(full[i + n * j], T::default());
                    }
                }
            }
            assert_eq!(m.to_packed()?, packed);
        }
    }
    Ok(())
}

#[test]
fn packed_round_trips() -> Result<()> {
    packed_trip::<f64>()?;
    packed_trip::<f32>()?;
    packed_trip::<i32>()
}

#[test]
fn packed_errors() -> Result<()> {
    let e = MatrixCl::<f64>::from_packed(3, View::Entire, &[0.0; 6]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidView {
                view: View::Entire,
                ..
            }
        ),
        "{e}"
    );
    let e = MatrixCl::<f64>::from_packed(3, View::Lower, &[0.0; 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                expected: 6,
                actual: 5,
                ..
            }
        ),
        "{e}"
    );
    let m = MatrixCl::<f64>::zeros(2, 3)?.with_view(View::Lower);
    assert!(matches!(m.to_packed(), Err(Error::InvalidArgument { .. })));
    Ok(())
}

#[test]
fn identity_matrix() -> Result<()> {
    for n in [0, 1, 33] {
        let m = MatrixCl::<f64>::identity(n)?;
        let v = m.to_vec()?;
        for j in 0..n {
            for i in 0..n {
                assert_eq!(v[i + n * j], if i == j { 1.0 } else { 0.0 });
            }
        }
    }
    Ok(())
}

#[cfg(feature = "nalgebra")]
#[test]
fn nalgebra_conversions() -> Result<()> {
    let h = nalgebra::DMatrix::<f64>::from_fn(31, 33, |i, j| (i * 100 + j) as f64);
    let d = MatrixCl::try_from(&h)?;
    assert_eq!(d.to_vec()?, h.as_slice());
    let back = nalgebra::DMatrix::try_from(&d)?;
    assert_eq!(back, h);
    let empty = nalgebra::DMatrix::<f32>::zeros(0, 4);
    assert_eq!(
        nalgebra::DMatrix::try_from(&MatrixCl::try_from(&empty)?)?,
        empty
    );
    Ok(())
}

use common::{ADD_INTO, INCREMENT_K};

#[test]
fn chain_of_dependent_launches() -> Result<()> {
    common::dependent_chain()
}

#[test]
fn read_events_do_not_pile_up() -> Result<()> {
    let data = MatrixCl::from_slice(64, 1, &vec![1i32; 64])?;
    let out = MatrixCl::<i32>::zeros(64, 1)?;
    let mut most = 0;
    for _round in 0..10 {
        for _ in 0..1000 {
            ADD_INTO.launch(NdRange::d1(64), (&out, &data, &data, 64))?;
            most = most.max(data.events().pending().0);
        }
        Runtime::get()?.finish()?;
    }
    // Bounded by what one round can leave pending, not by the 10 000 launches.
    assert!(
        most <= 4 * 1000 + 16,
        "{most} read events kept on a data matrix"
    );
    assert_eq!(out.to_vec()?, vec![2; 64]);
    Ok(())
}

#[test]
fn threads_share_the_context() -> Result<()> {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || -> Result<()> {
                for round in 0..20 {
                    let n = 100 + t * 7 + round;
                    let host: Vec<i32> = (0..n as i32).collect();
                    let a = MatrixCl::from_slice(n, 1, &host)?;
                    let out = MatrixCl::<i32>::uninitialized(n, 1)?;
                    ADD_INTO.launch(NdRange::d1(n), (&out, &a, &a, n as i32))?;
                    INCREMENT_K.launch(NdRange::d1(n), (&out, n as i32))?;
                    let want: Vec<i32> = host.iter().map(|v| 2 * v + 1).collect();
                    assert_eq!(out.to_vec()?, want);
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().map_err(|_| Error::Unsupported {
            what: "thread panicked".into(),
        })??;
    }
    Ok(())
}

#[test]
fn build_error_carries_the_log() {
    static BAD: TypedKernel<(Out<f32>,)> = TypedKernel::new(
        "bad",
        "__kernel void bad(__global T* x) { x[0] = undeclared_name; }",
        "-D EXTRA=1",
    );
    let Err(Error::Build {
        kernel,
        options,
        log,
    }) = BAD.compiled("")
    else {
        panic!("expected a build error");
    };
    assert_eq!(kernel, "bad");
    assert!(
        options.contains("-D EXTRA=1") && options.contains("-D T=float"),
        "{options}"
    );
    assert!(log.contains("undeclared_name"), "log: {log}");
}

#[test]
fn shape_and_size_errors() -> Result<()> {
    let e = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::SizeMismatch {
                expected: 4,
                actual: 3,
                ..
            }
        ),
        "{e}"
    );
    let a = MatrixCl::<f64>::zeros(2, 3)?;
    let b = MatrixCl::<f64>::zeros(3, 2)?;
    let e = (&a + &b).eval().unwrap_err();
    assert_eq!(
        e,
        Error::DimensionMismatch {
            operation: "add".into(),
            lhs: (2, 3),
            rhs: (3, 2)
        }
    );
    let e = a.copy_from(&b).unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }));
    let e = a.write(&[1.0]).unwrap_err();
    assert!(matches!(e, Error::SizeMismatch { .. }));
    Ok(())
}

#[test]
fn no_platform_is_an_error_not_a_panic() {
    if std::env::var_os("FUSION_CHILD_NO_PLATFORM").is_some() {
        let e = MatrixCl::from_slice(1, 1, &[1.0f32]).unwrap_err();
        assert!(matches!(e, Error::NoPlatform { .. }), "{e}");
        assert!(e.to_string().contains("pocl-opencl-icd"), "{e}");
        return;
    }
    let empty = std::env::temp_dir().join("fusion-no-icd");
    let _ = std::fs::create_dir_all(&empty);
    let status = std::process::Command::new(std::env::current_exe().expect("test binary path"))
        .args([
            "--exact",
            "foundation::no_platform_is_an_error_not_a_panic",
            "--test-threads=1",
        ])
        .env("FUSION_CHILD_NO_PLATFORM", "1")
        .env("OCL_ICD_VENDORS", &empty)
        .env("OCL_ICD_FILENAMES", "")
        .status()
        .expect("spawn child test");
    assert!(status.success(), "child without OpenCL platforms failed");
}

#[test]
fn device_listing_and_runtime_info() -> Result<()> {
    let devices = clfuse::list_devices()?;
    assert!(!devices.is_empty());
    let rt = Runtime::get()?;
    assert!(devices.iter().any(|d| d.name == rt.device_info().name));
    assert_eq!(
        clfuse::configure(RuntimeConfig::default()),
        Err(Error::AlreadyInitialized { what: "configure" })
    );
    Ok(())
}

use clfuse::Runtime;
use clfuse::RuntimeConfig;
