//! Debugging aids for kernel builds: dumps, build logs, extra compiler
//! options and hand-edited replacements, read from the environment.

use crate::env::env_value;

/// Debugging aids for kernel builds, part of [`RuntimeConfig`](crate::RuntimeConfig).
///
/// ```
/// let d = clfuse_core::BuildDiagnostics { dump_kernels: Some("kernels-dump".into()), ..Default::default() };
/// assert!(d.build_log.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildDiagnostics {
    /// Extra OpenCL compiler options for every build (`FUSION_CL_OPTIONS`).
    pub cl_options: Option<String>,
    /// Writes every kernel's source (`NAME.cl`) and device binary (`NAME.bin`)
    /// into this folder (`FUSION_DUMP_KERNELS`).
    pub dump_kernels: Option<std::path::PathBuf>,
    /// Builds `NAME.cl` from this folder, when present, instead of the
    /// generated source (`FUSION_KERNEL_OVERRIDE`), to try a hand edit.
    pub kernel_override: Option<std::path::PathBuf>,
    /// Appends every build's options and log to `NAME.log` in this folder
    /// (`FUSION_BUILD_LOG`).
    pub build_log: Option<std::path::PathBuf>,
}

impl BuildDiagnostics {
    /// The diagnostics the environment asks for (any value is accepted).
    pub fn from_env() -> Self {
        let folder = |name: &str| env_value(name).map(std::path::PathBuf::from);
        BuildDiagnostics {
            cl_options: env_value("FUSION_CL_OPTIONS"),
            dump_kernels: folder("FUSION_DUMP_KERNELS"),
            kernel_override: folder("FUSION_KERNEL_OVERRIDE"),
            build_log: folder("FUSION_BUILD_LOG"),
        }
    }
}
