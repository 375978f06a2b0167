//! The NVIDIA-only paths of the hand-written kernels (inline PTX: warp
//! shuffles in the Cholesky leaf, FP64 tensor cores in the GEMM and the
//! row-wise log-softmax) never build on PoCL, so CI compiles them here with
//! clang for `nvptx64-nvidia-nvcl`, with the option sets the launchers use.
//! A syntax or type error in those paths fails here instead of on a GPU.
//! clang comes with PoCL (its package depends on clang-15); without one on
//! the PATH the test says so and checks nothing.

use crate::gemm::{tensor_cores, tiled};
use std::path::PathBuf;
use std::process::Command;

const CHOLESKY: &str = include_str!("../cl/cholesky.cl");
const DMMA: &str = include_str!("../cl/dmma.cl");
const GEMM: &str = include_str!("../cl/gemm.cl");
const LOG_SOFTMAX_ROWS: &str = include_str!("../cl/log_softmax_rows.cl");

/// A clang that can compile OpenCL C for NVIDIA's target, if any.
fn clang() -> Option<&'static str> {
    [
        "clang", "clang-15", "clang-16", "clang-17", "clang-18", "clang-19",
    ]
    .into_iter()
    .find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

/// Every option set that fails to compile `source`, with clang's errors.
fn failures(clang: &str, name: &str, source: &str, option_sets: &[String]) -> Vec<String> {
    let file: PathBuf =
        std::env::temp_dir().join(format!("clfuse-nvptx-{name}-{}.cl", std::process::id()));
    std::fs::write(&file, source).expect("a temporary file");
    let failed = option_sets
        .iter()
        .filter_map(|options| {
            let out = Command::new(clang)
                .args([
                    "-x",
                    "cl",
                    "-cl-std=CL1.2",
                    "-Xclang",
                    "-finclude-default-header",
                ])
                // NVIDIA's compiler takes `asm`; clang spells it `__asm__`.
                .args([
                    "-Dasm=__asm__",
                    "-target",
                    "nvptx64-nvidia-nvcl",
                    "-fsyntax-only",
                ])
                .args(options.split_whitespace())
                .arg(&file)
                .output()
                .expect("clang runs");
            (!out.status.success()).then(|| {
                format!(
                    "{name} {options}:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect();
    let _ = std::fs::remove_file(&file);
    failed
}

#[test]
fn nvidia_only_kernel_paths_compile() {
    let Some(clang) = clang() else {
        eprintln!("no clang on the PATH: the NVIDIA-only kernel paths were not compiled");
        return;
    };
    let mut failed = Vec::new();
    // The Cholesky leaf with shuffles, for each work-group size it takes.
    let leaf: Vec<String> = [1, 2, 4]
        .iter()
        .map(|groups| format!("-D T=double -D WARP_SHUFFLE -D GROUPS={groups}"))
        .collect();
    failed.extend(failures(clang, "cholesky", CHOLESKY, &leaf));
    // The tensor-core GEMM: the GPUs' two blockings, slices of 8 and 16,
    // both MMA shapes, 8 and 16 warps, lower-only and transposed operands
    // (the launcher's own options for each).
    let mut gemm = Vec::new();
    for (block, per_item) in [(64, 4), (128, 8)] {
        for tile_k in [8, 16] {
            for shape in [tensor_cores::FLAGS, tensor_cores::FLAGS_8X] {
                // 8 warps, and 16 where the launcher takes them.
                let mut rows = vec![1, tensor_cores::rows_of_items(usize::MAX, block, true)];
                rows.dedup();
                for rows_of_items in rows {
                    let (_, blocking) = tiled::launch_shape(
                        block,
                        per_item,
                        tile_k,
                        (1, 1, 1),
                        shape,
                        rows_of_items,
                    );
                    for extra in ["", "-D LOWER_ONLY", "-D TRANS_A -D TRANS_B"] {
                        gemm.push(format!("-D T=double {blocking} {extra}"));
                    }
                }
            }
        }
    }
    failed.extend(failures(clang, "gemm", &format!("{DMMA}\n{GEMM}"), &gemm));
    // The row-wise log-softmax of a product with 16 and 8 warps.
    let mut rows = Vec::new();
    for (warps, fragments) in [(16, 2), (8, 1)] {
        for shape in [tensor_cores::FLAGS, tensor_cores::FLAGS_8X] {
            for softmax in ["", "-D SOFTMAX"] {
                rows.push(format!(
                    "-D Q=16 -D COL_FRAGS={fragments} -D ROW_FRAGS=2 -D WARPS={warps}{shape} {softmax}"
                ));
            }
        }
    }
    let source = format!("{DMMA}\n{LOG_SOFTMAX_ROWS}");
    failed.extend(failures(clang, "log_softmax_rows", &source, &rows));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
