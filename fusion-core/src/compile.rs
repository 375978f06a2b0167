//! Compiling OpenCL C into kernels, and the process-wide kernel counters.

use crate::error::{ClResultExt, Error, Result};
use crate::kernel_cache::CompiledKernel;
use crate::program_cache::ProgramKey;
use crate::runtime::Runtime;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

static COMPILED: AtomicU64 = AtomicU64::new(0);
static LOADED: AtomicU64 = AtomicU64::new(0);
static LAUNCHED: AtomicU64 = AtomicU64::new(0);
static QUEUED: AtomicU64 = AtomicU64::new(0);

/// Counts of kernels compiled and launched since the process started.
///
/// ```
/// let before = clfuse_core::kernel_stats();
/// assert!(clfuse_core::kernel_stats().launched >= before.launched);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelStats {
    /// Programs compiled from OpenCL C (fused and hand-written).
    pub compiled: u64,
    /// Programs loaded from the disk cache's device binaries instead
    /// (see [`ProgramCache`](crate::ProgramCache)).
    pub loaded: u64,
    /// Kernel launches asked for (each member of a sweep counts).
    pub launched: u64,
    /// Kernels queued on a device: a sweep of several launches is one
    /// (see [`enqueue_joined`](crate::enqueue_joined)).
    pub queued: u64,
}

impl KernelStats {
    /// Programs made ready in memory either way: compiled or loaded.
    ///
    /// ```
    /// let s = clfuse_core::KernelStats { compiled: 2, loaded: 3, launched: 9, queued: 4 };
    /// assert_eq!(s.built(), 5);
    /// ```
    pub fn built(&self) -> u64 {
        self.compiled + self.loaded
    }
}

impl std::ops::Sub for KernelStats {
    type Output = KernelStats;
    fn sub(self, rhs: KernelStats) -> KernelStats {
        KernelStats {
            compiled: self.compiled - rhs.compiled,
            loaded: self.loaded - rhs.loaded,
            launched: self.launched - rhs.launched,
            queued: self.queued - rhs.queued,
        }
    }
}

thread_local! {
    static THIS_THREAD: std::cell::Cell<KernelStats> = const { std::cell::Cell::new(KernelStats { compiled: 0, loaded: 0, launched: 0, queued: 0 }) };
}

/// The process-wide counters.
pub fn kernel_stats() -> KernelStats {
    KernelStats {
        compiled: COMPILED.load(Ordering::Relaxed),
        loaded: LOADED.load(Ordering::Relaxed),
        launched: LAUNCHED.load(Ordering::Relaxed),
        queued: QUEUED.load(Ordering::Relaxed),
    }
}

/// The counters of the calling thread only (unaffected by other threads'
/// work: what tests and benchmarks use to prove "one kernel").
///
/// ```
/// let before = clfuse_core::thread_kernel_stats();
/// let m = clfuse_core::MatrixCl::<f32>::uninitialized(2, 2)?;
/// assert_eq!(clfuse_core::thread_kernel_stats() - before, Default::default());
/// # let _ = m;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn thread_kernel_stats() -> KernelStats {
    THIS_THREAD.with(|s| s.get())
}

/// Counts a launch asked for on this thread.
pub(crate) fn count_launch() {
    LAUNCHED.fetch_add(1, Ordering::Relaxed);
    THIS_THREAD.with(|s| {
        let mut v = s.get();
        v.launched += 1;
        s.set(v);
    });
}

/// Counts a kernel queued on a device by this thread.
pub(crate) fn count_queued() {
    QUEUED.fetch_add(1, Ordering::Relaxed);
    THIS_THREAD.with(|s| {
        let mut v = s.get();
        v.queued += 1;
        s.set(v);
    });
}

fn count_build(from_disk: bool) {
    let total = if from_disk { &LOADED } else { &COMPILED };
    total.fetch_add(1, Ordering::Relaxed);
    THIS_THREAD.with(|s| {
        let mut v = s.get();
        if from_disk {
            v.loaded += 1;
        } else {
            v.compiled += 1;
        }
        s.set(v);
    });
}

/// Held while a program is built (see [`compile_kernel`]).
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Builds kernel `name` from `source` with `options` for the runtime's device.
///
/// A build failure returns [`Error::Build`] carrying the compiler log. When
/// `FUSION_DUMP_KERNELS=<dir>` is set, the source is written to
/// `<dir>/<dump_name>.cl` first (so a failing kernel can be inspected too),
/// and the built program's binary to `<dir>/<dump_name>.bin` (PTX on NVIDIA).
/// `FUSION_CL_OPTIONS` is appended to every build's options (for instance
/// `-cl-nv-verbose`, which makes NVIDIA's compiler report registers and
/// spills), and `FUSION_BUILD_LOG=<dir>` appends each successful build's
/// options and compiler log to `<dir>/<dump_name>.log`. When
/// `FUSION_KERNEL_OVERRIDE=<dir>` is set and `<dir>/<dump_name>.cl` exists,
/// that file is built instead of `source`: a hand-edited variant of a
/// generated kernel (same name and arguments) can be timed in place.
///
/// ```
/// let k = clfuse_core::compile_kernel("twice", "__kernel void twice(__global int* x) { x[get_global_id(0)] *= 2; }", "", "twice")?;
/// assert_eq!(k.name(), "twice");
/// let bad = clfuse_core::compile_kernel("bad", "__kernel void bad( { }", "", "bad");
/// assert!(matches!(bad, Err(clfuse_core::Error::Build { .. })));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn compile_kernel(
    name: &str,
    source: &str,
    options: &str,
    dump_name: &str,
) -> Result<CompiledKernel> {
    compile_kernel_for(Runtime::get()?, name, source, options, dump_name)
}

/// [`compile_kernel`] for the device of `rt`, whichever thread asks.
pub(crate) fn compile_kernel_for(
    rt: &'static Runtime,
    name: &str,
    source: &str,
    options: &str,
    dump_name: &str,
) -> Result<CompiledKernel> {
    let asked = (source, options);
    let diagnostics = rt.diagnostics();
    let options = match &diagnostics.cl_options {
        Some(extra) => format!("{options} {extra}"),
        None => options.to_string(),
    };
    let options = options.as_str();
    let replacement = diagnostics
        .kernel_override
        .as_ref()
        .and_then(|dir| std::fs::read_to_string(dir.join(format!("{dump_name}.cl"))).ok());
    let source = replacement.as_deref().unwrap_or(source);
    if let Some(dir) = &diagnostics.dump_kernels {
        let path = std::path::Path::new(&dir).join(format!("{dump_name}.cl"));
        // Dumping is a debugging aid; failing to write must not fail the build.
        let _ = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(path, source));
    }
    // One build at a time in the process: test binaries on NVIDIA's driver
    // aborted now and then (`free()`: double free / invalid pointer) while
    // several threads built programs with the driver's compute cache cold.
    let _one_build = BUILD_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let device_id = rt.context().default_device();
    let disk = rt.program_cache();
    let key = ProgramKey::new(source, options, rt.device_info());
    let stored = disk.load(&key).and_then(|binary| {
        let program = build_from_binary(rt, &binary, options);
        if program.is_none() {
            // The driver refused it (it would again): compile and replace it.
            disk.reject(&key);
        }
        program
    });
    let (program, from_disk) = match stored {
        Some(program) => {
            disk.note_loaded();
            (program, true)
        }
        None => {
            let program = build_from_source(rt, name, source, options)?;
            if let Ok(binaries) = program.get_binaries() {
                disk.store(&key, &binaries.concat());
            }
            (program, false)
        }
    };
    count_build(from_disk);
    if let Some(dir) = &diagnostics.build_log {
        let path = std::path::Path::new(&dir).join(format!("{dump_name}.log"));
        let log = program.get_build_log(device_id).unwrap_or_default();
        // A diagnostic aid like the dump above: a failed write is not a failed build.
        let _ = std::fs::create_dir_all(dir).and_then(|_| {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            writeln!(file, "options: {options}\n{log}")
        });
    }
    if let Some(dir) = &diagnostics.dump_kernels {
        // The device's binary beside the source (PTX on NVIDIA): where the
        // compiler put arrays and spills. A debugging aid like the source dump.
        if let Ok(binaries) = program.get_binaries() {
            let path = std::path::Path::new(&dir).join(format!("{dump_name}.bin"));
            let _ = std::fs::write(path, binaries.concat());
        }
    }
    let kernel = Kernel::create(&program, name).map_err(|e| Error::Build {
        kernel: name.to_string(),
        options: options.to_string(),
        log: format!(
            "the program built but has no kernel `{name}` ({})",
            opencl3::error_codes::error_text(e.0)
        ),
    })?;
    Ok(CompiledKernel::new(rt, name, kernel, program, asked))
}

/// Compiles `source`; a failure carries the compiler's log.
fn build_from_source(rt: &Runtime, name: &str, source: &str, options: &str) -> Result<Program> {
    let device_id = rt.context().default_device();
    let mut program =
        Program::create_from_source(rt.context(), source).call("clCreateProgramWithSource")?;
    if program.build(&[device_id], options).is_err() {
        let log = program
            .get_build_log(device_id)
            .unwrap_or_else(|_| format!("(no build log from {})", rt.device_info().name));
        return Err(Error::Build {
            kernel: name.to_string(),
            options: options.to_string(),
            log,
        });
    }
    Ok(program)
}

/// Builds a program from a stored device binary; `None` when the driver
/// does not take it.
fn build_from_binary(rt: &Runtime, binary: &[u8], options: &str) -> Option<Program> {
    let device_id = rt.context().default_device();
    // SAFETY: the device is the one the runtime's context was created from;
    // the binary slice outlives the call (the driver copies it).
    let created = unsafe { Program::create_from_binary(rt.context(), &[device_id], &[binary]) };
    let mut program = created.ok()?;
    program.build(&[device_id], options).ok()?;
    Some(program)
}
