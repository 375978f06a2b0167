//! Every compiled program of a device, in one place: the kernel objects
//! ([`CompiledKernel`]), the fused kernels the generator built and the
//! hand-written kernels, each built once however many threads ask (see
//! [`BuildOnce`]).
//!
//! The cache belongs to the runtime's device context ([`Runtime::kernels`]),
//! and each kernel knows the runtime it was built for (it runs on its
//! queue); every key starts with the device's index, so that programs built
//! for one device are never launched on another.

use crate::build_once::BuildOnce;
use crate::error::{ClResultExt, Result};
use crate::runtime::Runtime;
use dashmap::DashMap;
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use std::any::TypeId;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// A kernel object and the argument values last set on it: OpenCL keeps
/// arguments between launches, so a launch sets only those that changed
/// (most launches of a cached kernel change none but the sizes).
pub(crate) struct KernelState {
    pub(crate) kernel: Kernel,
    pub(crate) set: Vec<Option<ArgValue>>,
}

/// One argument value as set on a kernel (buffers by handle and the
/// identity of the matrix that owns it: a handle's value can come back for
/// a new buffer after the old one is released).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgValue {
    Mem(usize, u64),
    Int(i32),
    Float(u32),
    Double(u64),
    Local(usize),
}

/// A compiled kernel. OpenCL kernel objects are not safe to configure from
/// two threads at once, so argument setting and enqueueing hold its lock.
/// Cloning gives another handle to the same kernel (a recorded launch keeps
/// one, see [`record`](crate::record)).
#[derive(Clone)]
pub struct CompiledKernel {
    inner: Arc<KernelInner>,
}

struct KernelInner {
    name: String,
    /// The runtime the program was built for: the kernel runs on its queue.
    runtime: &'static Runtime,
    kernel: Mutex<KernelState>,
    // Keeps the program alive as long as the kernel.
    program: Program,
    /// The source and build options it was built from (a batched variant
    /// is built from them, see `chain_batch`).
    source: Arc<str>,
    options: String,
}

impl std::fmt::Debug for CompiledKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledKernel")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl CompiledKernel {
    /// The kernel function's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The runtime (device context) the kernel was built for.
    pub fn runtime(&self) -> &'static Runtime {
        self.inner.runtime
    }

    /// Wraps `kernel` of `program`, built for `runtime`.
    pub(crate) fn new(
        runtime: &'static Runtime,
        name: &str,
        kernel: Kernel,
        program: Program,
        (source, options): (&str, &str),
    ) -> Self {
        CompiledKernel {
            inner: Arc::new(KernelInner {
                runtime,
                name: name.to_string(),
                kernel: Mutex::new(KernelState {
                    kernel,
                    set: Vec::new(),
                }),
                program,
                source: source.into(),
                options: options.to_string(),
            }),
        }
    }

    /// The OpenCL C it was built from.
    pub(crate) fn source(&self) -> &str {
        &self.inner.source
    }

    /// The build options it was built with (before any added by
    /// diagnostics).
    pub(crate) fn options(&self) -> &str {
        &self.inner.options
    }

    /// Identifies the kernel object (the same for every handle to it).
    pub(crate) fn identity(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// A new kernel object for the same kernel function, with no argument
    /// set: a launch bound to it sets them once (see `bound_launch`).
    pub(crate) fn new_object(&self) -> Result<Kernel> {
        Kernel::create(&self.inner.program, &self.inner.name).call("clCreateKernel")
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, KernelState> {
        self.inner.kernel.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A fused kernel the generator built: the compiled program and its source.
#[derive(Debug)]
pub struct FusedKernel {
    compiled: CompiledKernel,
    source: String,
    /// Process-unique, never reused: names the kernel in a sweep's key.
    id: u64,
}

impl FusedKernel {
    /// Pairs a compiled kernel with the source it was built from.
    pub fn new(compiled: CompiledKernel, source: String) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        FusedKernel {
            compiled,
            source,
            id,
        }
    }

    /// Its process-unique identity.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The compiled kernel.
    pub fn compiled(&self) -> &CompiledKernel {
        &self.compiled
    }

    /// The generated OpenCL C.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// What the cache knows about one expression structure.
#[derive(Debug, Clone)]
pub enum FusedPlan {
    /// Run this kernel in place.
    Direct(Arc<FusedKernel>),
    /// A target is read at other positions than it is written: evaluate
    /// into temporaries first (decided once per structure).
    ViaTemporaries,
}

/// A fused kernel's key: the device, the expression's type (lifetimes
/// erased) and its alias pattern (which leaves are the same buffer, plus
/// run-time structure such as enabled outputs and staging layouts).
pub type FusedKey = (usize, TypeId, Vec<u32>);

/// A hand-written kernel's key: the device, its source's address and
/// name, its argument list's type and its extra build options.
pub type TypedKey = (usize, usize, &'static str, TypeId, String);

/// The compiled programs of one device.
///
/// ```
/// let rt = clfuse_core::Runtime::get()?;
/// let cache = rt.kernels();
/// cache.purge(); // the next launch of each kernel compiles it again
/// assert_eq!(cache.fused_len(), 0);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct KernelCache {
    device: usize,
    fused: BuildOnce<FusedKey, FusedPlan>,
    typed: BuildOnce<TypedKey, Arc<CompiledKernel>>,
}

impl KernelCache {
    /// An empty cache for the device at `device` (its [`list_devices`](crate::list_devices) index).
    pub fn new(device: usize) -> Self {
        KernelCache {
            device,
            fused: BuildOnce::new(),
            typed: BuildOnce::new(),
        }
    }

    /// The device index every key starts with.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The fused plan for `(structure, pattern)`, built by `build` on a miss.
    pub fn fused(
        &self,
        structure: TypeId,
        pattern: Vec<u32>,
        build: impl FnOnce(&FusedKey) -> Result<FusedPlan>,
    ) -> Result<FusedPlan> {
        let key = (self.device, structure, pattern);
        self.fused.get_or_build(&key, || build(&key))
    }

    /// The hand-written kernel under `key` (its device part is filled in),
    /// built by `build` on a miss.
    pub fn typed(
        &self,
        source: usize,
        name: &'static str,
        args: TypeId,
        options: &str,
        build: impl FnOnce() -> Result<Arc<CompiledKernel>>,
    ) -> Result<Arc<CompiledKernel>> {
        let key = (self.device, source, name, args, options.to_string());
        self.typed.get_or_build(&key, build)
    }

    /// Number of fused structures cached.
    pub fn fused_len(&self) -> usize {
        self.fused.len()
    }

    /// Number of hand-written kernel variants cached.
    pub fn typed_len(&self) -> usize {
        self.typed.len()
    }

    /// Drops every compiled program; each kernel compiles again at its next
    /// launch. Launches already queued keep their programs alive until they
    /// finish. The structure codes of [`type_code`] and [`snippet_code`]
    /// are kept: a live expression still holds its code.
    pub fn purge(&self) {
        self.fused.clear();
        self.typed.clear();
    }
}

/// Small, exact numbers for erased expression types (`boxed`): part of a
/// fused key, so two different erased trees never share a kernel. Codes
/// name structures, not programs, so they are process-wide and outlive
/// [`KernelCache::purge`] (a code must never be reused while an expression
/// holding it is alive).
///
/// ```
/// let a = clfuse_core::type_code(std::any::TypeId::of::<u8>());
/// assert_eq!(a, clfuse_core::type_code(std::any::TypeId::of::<u8>()));
/// assert_ne!(a, clfuse_core::type_code(std::any::TypeId::of::<u16>()));
/// ```
pub fn type_code(structure: TypeId) -> u32 {
    static CODES: LazyLock<DashMap<TypeId, u32>> = LazyLock::new(DashMap::new);
    static NEXT: AtomicU32 = AtomicU32::new(0);
    *CODES
        .entry(structure)
        .or_insert_with(|| NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Small, exact numbers for custom OpenCL C snippets (`CustomCode`), with
/// the same lifetime rule as [`type_code`].
///
/// ```
/// let a = clfuse_core::snippet_code("{y} = {x};");
/// assert_eq!(a, clfuse_core::snippet_code("{y} = {x};"));
/// assert_ne!(a, clfuse_core::snippet_code("{y} = 2 * {x};"));
/// ```
pub fn snippet_code(code: &str) -> u32 {
    static CODES: LazyLock<DashMap<String, u32>> = LazyLock::new(DashMap::new);
    static NEXT: AtomicU32 = AtomicU32::new(0);
    if let Some(found) = CODES.get(code) {
        return *found;
    }
    *CODES
        .entry(code.to_string())
        .or_insert_with(|| NEXT.fetch_add(1, Ordering::Relaxed))
}
