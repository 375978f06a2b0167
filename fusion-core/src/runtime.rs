//! The process-wide OpenCL context and queue (paper §2.1: one context, one
//! queue; besides it, a transfer queue for read-backs and a side queue for
//! work that may overlap the main queue's, see [`crate::side_queue`]).
//!
//! The runtime is created lazily on first use. Which device it uses comes from
//! [`configure`] (called before first use), else the environment variables
//! `FUSION_PLATFORM` / `FUSION_DEVICE` (an index or a case-insensitive name
//! substring), else the first GPU found, else the first device of any kind.
//! The runtime owns the device's compiled programs ([`KernelCache`]) and
//! its launch-shape knobs ([`Tuning`]).

use crate::device_info::{DeviceInfo, Found, choose, discover};
use crate::diagnostics::BuildDiagnostics;
use crate::env::{env_value, invalid, parse_flag};
use crate::error::{ClResultExt, Error, Result};
use crate::kernel_cache::KernelCache;
use crate::program_cache::{ProgramCache, ProgramCacheSetting};
use crate::tuning::Tuning;
use opencl3::command_queue::{
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE, CommandQueue,
};
use opencl3::context::Context;
use std::sync::Mutex;
use std::sync::OnceLock;

/// Launches a higher layer holds back to run later (the sweeps of
/// [`crate::sweep`]), kept under the device's ordering lock: the runtime
/// launches them before a command that must follow them, and at
/// [`Runtime::finish`].
pub(crate) trait HeldLaunches: Send + std::any::Any {
    /// Launches what must run before a command using `touches`.
    fn launch_before(&mut self, touches: &[(u64, crate::Access)]) -> Result<()>;
    /// Launches everything held.
    fn launch_all(&mut self) -> Result<()>;
}

/// How commands are ordered on the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// In-order on NVIDIA's driver and on PoCL, out-of-order elsewhere where
    /// the device supports it. On the H200 an in-order queue, whose launches
    /// need no events, cut a cached `assign` from 12.6 µs to 5.2 µs of host
    /// time (BENCHMARKS.md, "Host path"), and NVIDIA gains nothing
    /// measurable from reordering our mostly dependent kernels. PoCL 3.x
    /// can abort (`pocl_release_dlhandle_cache: found->ref_count > 0`) when
    /// one kernel runs at two grid widths at once, which only an
    /// out-of-order queue allows: its cache of loaded kernels keeps an
    /// entry per width but releases by kernel and local size alone.
    #[default]
    Auto,
    /// Always an in-order queue.
    InOrder,
    /// Out-of-order where the device supports it (event lists keep the
    /// order, and read-backs may use a second queue), on NVIDIA too.
    OutOfOrder,
}

/// Choices applied when the runtime is created: which device, how its
/// queue works, the launch-shape knobs and the build diagnostics. Every
/// field has an environment variable, read by [`RuntimeConfig::from_env`]
/// (the README's table lists them).
///
/// ```
/// let cfg = clfuse_core::RuntimeConfig { device: Some("pthread".into()), ..Default::default() };
/// assert_eq!(cfg.queue, clfuse_core::QueueMode::Auto);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Platform index or case-insensitive name substring.
    pub platform: Option<String>,
    /// Device index (in [`list_devices`](crate::list_devices) order, within the platform if one is chosen)
    /// or case-insensitive name substring.
    pub device: Option<String>,
    /// Queue ordering.
    pub queue: QueueMode,
    /// Enable event profiling (device-side timestamps, used by benchmarks).
    pub profiling: bool,
    /// Pretend the device has no fp64 support (to test that path on any device).
    pub force_no_fp64: bool,
    /// Release every dropped matrix's buffer to the driver instead of
    /// keeping it for reuse (see [`cached_buffer_bytes`](crate::cached_buffer_bytes)).
    pub no_buffer_cache: bool,
    /// Queue read-backs started with [`MatrixCl::read_later`](crate::MatrixCl::read_later)
    /// on a second queue, so that a GPU's copy engine runs them beside the
    /// kernels queued after them: `None` does so on GPUs (when commands
    /// carry events, as on the default out-of-order queue).
    pub transfer_queue: Option<bool>,
    /// Launch-shape knobs.
    pub tuning: Tuning,
    /// Kernel dumps, build logs and extra compiler options.
    pub diagnostics: BuildDiagnostics,
    /// Where compiled programs are kept between processes (`FUSION_CACHE_DIR`).
    pub program_cache: ProgramCacheSetting,
}

impl RuntimeConfig {
    /// The configuration described by the environment: `FUSION_PLATFORM`,
    /// `FUSION_DEVICE`, `FUSION_QUEUE=auto|in-order|out-of-order`, `FUSION_PROFILING=0|1`,
    /// `FUSION_NO_FP64=0|1`, `FUSION_BUFFER_CACHE=0|1`, `FUSION_TRANSFER_QUEUE=0|1`,
    /// `FUSION_CACHE_DIR` (a folder, or `off`), the [`Tuning`] knobs and the
    /// [`BuildDiagnostics`]. Unset or empty
    /// variables keep the defaults; a value a variable does not accept is an
    /// [`Error::InvalidArgument`] naming it.
    ///
    /// ```
    /// let config = clfuse_core::RuntimeConfig::from_env()?;
    /// config.tuning.validate()?;
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        let flag = |name: &'static str| env_value(name).map(|v| parse_flag(name, &v)).transpose();
        Ok(RuntimeConfig {
            platform: env_value("FUSION_PLATFORM"),
            device: env_value("FUSION_DEVICE"),
            queue: match env_value("FUSION_QUEUE").as_deref() {
                None | Some("auto") => QueueMode::Auto,
                Some("in-order") | Some("inorder") | Some("in_order") => QueueMode::InOrder,
                Some("out-of-order") | Some("out_of_order") => QueueMode::OutOfOrder,
                Some(other) => {
                    return Err(invalid(
                        "FUSION_QUEUE",
                        other,
                        "`auto`, `in-order` or `out-of-order`",
                    ));
                }
            },
            profiling: flag("FUSION_PROFILING")?.unwrap_or(false),
            force_no_fp64: flag("FUSION_NO_FP64")?.unwrap_or(false),
            no_buffer_cache: !flag("FUSION_BUFFER_CACHE")?.unwrap_or(true),
            transfer_queue: flag("FUSION_TRANSFER_QUEUE")?,
            tuning: Tuning::from_env()?,
            diagnostics: BuildDiagnostics::from_env(),
            program_cache: env_value("FUSION_CACHE_DIR")
                .map(|value| ProgramCacheSetting::parse(&value))
                .unwrap_or_default(),
        })
    }
}

/// The device `cfg` selects, without opening it.
pub(crate) fn chosen_device(cfg: &RuntimeConfig) -> Result<DeviceInfo> {
    select(cfg).map(|found| found.info)
}

/// The device `cfg` selects, found among every platform's.
fn select(cfg: &RuntimeConfig) -> Result<Found> {
    choose(discover()?, cfg.platform.as_deref(), cfg.device.as_deref())
}

/// One device's context and queue. The process has a default one (the
/// device [`configure`] or `FUSION_DEVICE` picks, paper §2.1); a program
/// that uses several devices opens more with [`Device`](crate::Device).
pub struct Runtime {
    /// Position in the process's list of runtimes: unique per context.
    slot: usize,
    context: Context,
    queue: CommandQueue,
    /// Where `read_later` queues its copies, when not on `queue`.
    transfer_queue: Option<CommandQueue>,
    /// The second compute queue (see [`crate::side_queue`]), created at
    /// first use with the main queue's properties.
    side_queue: OnceLock<CommandQueue>,
    info: DeviceInfo,
    fp64: bool,
    out_of_order: bool,
    profiling: bool,
    settle_on_drop: bool,
    tuning: Tuning,
    diagnostics: BuildDiagnostics,
    kernels: KernelCache,
    program_cache: ProgramCache,
    placeholder: OnceLock<crate::MatrixCl<i32>>,
    /// Held while a command's wait list is gathered, the command enqueued
    /// and its event recorded (see [`ordered`](Self::ordered)).
    /// The launches held back to run later (the sweeps of [`crate::sweep`],
    /// set up there at the first one).
    ordering: Mutex<Option<Box<dyn HeldLaunches>>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runtime{}", self.label())
    }
}

static PENDING_CONFIG: Mutex<Option<RuntimeConfig>> = Mutex::new(None);
/// The default runtime.
static RUNTIME: OnceLock<&'static Runtime> = OnceLock::new();
/// Every runtime of the process, by slot. Runtimes live as long as the
/// process: matrices and kernels refer to them.
static ALL: Mutex<Vec<&'static Runtime>> = Mutex::new(Vec::new());
/// Held while a runtime is created, so that the default one is created once.
static CREATING: Mutex<()> = Mutex::new(());

thread_local! {
    /// The runtime this thread's work goes to, when not the default (see
    /// [`Device::run`](crate::Device::run)).
    static CURRENT: std::cell::Cell<Option<&'static Runtime>> = const { std::cell::Cell::new(None) };
}

/// Makes `runtime` the calling thread's current one until the guard drops.
pub(crate) struct CurrentGuard {
    previous: Option<&'static Runtime>,
}

impl CurrentGuard {
    pub(crate) fn enter(runtime: &'static Runtime) -> Self {
        CurrentGuard {
            previous: CURRENT.with(|c| c.replace(Some(runtime))),
        }
    }
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// The properties of the main and side compute queues.
fn compute_queue_properties(
    out_of_order: bool,
    profiling: bool,
) -> opencl3::types::cl_command_queue_properties {
    let mut properties = 0;
    if out_of_order {
        properties |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    }
    if profiling {
        properties |= CL_QUEUE_PROFILING_ENABLE;
    }
    properties
}

/// Every runtime created so far, by slot.
pub(crate) fn all_runtimes() -> Vec<&'static Runtime> {
    ALL.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Waits for every queued command when the process exits. The OpenCL
/// specification leaves exiting with commands in flight undefined, and
/// drivers do crash or hang then (seen here on NVIDIA's: a `free()` abort
/// after a test binary's last test); a program's last matrices are often
/// dropped (their buffers pooled) with their commands still queued.
extern "C" fn finish_at_exit() {
    // `try_lock`: a thread that held the list when exit began cannot release it.
    let Ok(all) = ALL.try_lock() else { return };
    for runtime in all.iter() {
        // Nothing is left to report an error to at exit.
        let _ = runtime.queue.finish();
        for queue in [runtime.transfer_queue.as_ref(), runtime.side_queue.get()]
            .into_iter()
            .flatten()
        {
            let _ = queue.finish();
        }
    }
}

/// Sets the runtime configuration; must be called before the first use of the device.
///
/// ```no_run
/// use clfuse_core::{configure, RuntimeConfig, QueueMode};
/// configure(RuntimeConfig { queue: QueueMode::InOrder, ..RuntimeConfig::from_env()? })?;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn configure(config: RuntimeConfig) -> Result<()> {
    config.tuning.validate()?;
    if RUNTIME.get().is_some() {
        return Err(Error::AlreadyInitialized { what: "configure" });
    }
    let mut pending = PENDING_CONFIG.lock().unwrap_or_else(|p| p.into_inner());
    *pending = Some(config);
    Ok(())
}

/// Chooses the device by index or name substring; must be called before first use.
///
/// ```no_run
/// clfuse_core::select_device("0")?;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn select_device(selector: &str) -> Result<()> {
    configure(RuntimeConfig {
        device: Some(selector.to_string()),
        ..RuntimeConfig::from_env()?
    })
}

impl Runtime {
    /// The calling thread's runtime: its current device's (inside
    /// [`Device::run`](crate::Device::run)), else the default one, created
    /// on first call.
    ///
    /// ```no_run
    /// let rt = clfuse_core::Runtime::get()?;
    /// println!("running on {}", rt.device_info().name);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn get() -> Result<&'static Runtime> {
        if let Some(runtime) = CURRENT.with(std::cell::Cell::get) {
            return Ok(runtime);
        }
        Self::default_runtime()
    }

    /// The default runtime (the device [`configure`] or `FUSION_DEVICE`
    /// picks), created on first call, whatever the thread's current one.
    pub fn default_runtime() -> Result<&'static Runtime> {
        if let Some(runtime) = RUNTIME.get() {
            return Ok(runtime);
        }
        let _creating = CREATING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(runtime) = RUNTIME.get() {
            return Ok(runtime);
        }
        let pending = PENDING_CONFIG
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let config = match pending {
            Some(config) => config,
            None => RuntimeConfig::from_env()?,
        };
        let created = Runtime::open(&config)?;
        // Only this thread creates it (the lock above): `get_or_init` keeps it.
        Ok(RUNTIME.get_or_init(|| created))
    }

    /// Creates a runtime (a new context and queue) for the device `config`
    /// picks, beside any that exist, and registers it for the process's
    /// lifetime.
    pub(crate) fn open(config: &RuntimeConfig) -> Result<&'static Runtime> {
        config.tuning.validate()?;
        let mut all = ALL.lock().unwrap_or_else(|p| p.into_inner());
        let created: &'static Runtime = Box::leak(Box::new(Runtime::create(config, all.len())?));
        all.push(created);
        if all.len() == 1 {
            // Registered after the driver was loaded and the first context
            // created, so it runs before the driver's own exit handlers.
            // SAFETY: `finish_at_exit` is a plain function that takes no
            // arguments and does not unwind (it only waits for the queues).
            unsafe {
                libc::atexit(finish_at_exit);
            }
        }
        Ok(created)
    }

    /// Its position among the process's runtimes: unique per context.
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// assert_eq!(rt.kernels().device(), rt.slot());
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// `[slot] device name`, for messages that name a device.
    pub fn label(&self) -> String {
        format!("[{}] {}", self.slot, self.info.name)
    }

    fn create(cfg: &RuntimeConfig, slot: usize) -> Result<Runtime> {
        let found = select(cfg)?;
        let context = Context::from_device(&found.device).call("clCreateContext")?;
        let nvidia = found.info.platform_name.contains("NVIDIA");
        let pocl = found
            .info
            .platform_name
            .contains("Portable Computing Language");
        let out_of_order = found.info.out_of_order
            && match cfg.queue {
                // See `QueueMode::Auto` for why not on these two.
                QueueMode::Auto => !nvidia && !pocl,
                QueueMode::InOrder => false,
                QueueMode::OutOfOrder => true,
            };
        let properties = compute_queue_properties(out_of_order, cfg.profiling);
        // SAFETY: the device is the one the context was created from.
        let queue = unsafe {
            CommandQueue::create_with_properties(&context, found.device.id(), properties, 0)
        }
        .call("clCreateCommandQueueWithProperties")?;
        let settle_on_drop = pocl;
        // Its copies wait for the kernels they read from by events: the
        // writer's on an out-of-order queue, a marker behind everything
        // queued so far on an in-order one (see `MatrixCl::read_later`).
        let transfer_queue = if cfg.transfer_queue.unwrap_or(found.info.is_gpu) {
            let properties = if cfg.profiling {
                CL_QUEUE_PROFILING_ENABLE
            } else {
                0
            };
            // SAFETY: as for the main queue.
            let queue = unsafe {
                CommandQueue::create_with_properties(&context, found.device.id(), properties, 0)
            }
            .call("clCreateCommandQueueWithProperties")?;
            Some(queue)
        } else {
            None
        };
        crate::buffer_pool::set_limit(
            slot,
            if cfg.no_buffer_cache {
                0
            } else {
                usize::try_from(found.info.global_mem_bytes / 4).unwrap_or(usize::MAX)
            },
        );
        Ok(Runtime {
            slot,
            context,
            queue,
            fp64: found.info.fp64 && !cfg.force_no_fp64,
            out_of_order,
            profiling: cfg.profiling,
            settle_on_drop,
            transfer_queue,
            side_queue: OnceLock::new(),
            tuning: cfg.tuning.clone(),
            diagnostics: cfg.diagnostics.clone(),
            kernels: KernelCache::new(slot),
            program_cache: ProgramCache::open(&cfg.program_cache),
            placeholder: OnceLock::new(),
            ordering: Mutex::new(None),
            info: found.info,
        })
    }

    /// The calling thread's runtime if it was already created (never creates it).
    pub fn current() -> Option<&'static Runtime> {
        CURRENT
            .with(std::cell::Cell::get)
            .or_else(|| RUNTIME.get().copied())
    }

    /// Whether matrices wait for their pending commands when dropped. PoCL
    /// 3.x crashes if the process exits while a kernel is still compiling or
    /// running, so on PoCL a dropped matrix settles its commands first (the
    /// last matrices of a program are dropped before it exits).
    pub fn settles_on_drop(&self) -> bool {
        self.settle_on_drop
    }

    /// Whether commands record and wait for events: always on an
    /// out-of-order queue, and on PoCL so that drops can settle.
    pub fn tracks_events(&self) -> bool {
        self.out_of_order || self.settle_on_drop
    }

    /// The OpenCL context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The command queue this thread's commands go to: the main one, or
    /// the side queue inside [`on_side_queue`](Self::on_side_queue).
    pub fn queue(&self) -> &CommandQueue {
        // A device that never used its side queue skips the thread-local.
        if let Some(side) = self.side_queue.get()
            && crate::queue_choice::on_side(self.slot)
        {
            return side;
        }
        &self.queue
    }

    /// The main command queue, whatever this thread's current choice.
    pub(crate) fn main_queue(&self) -> &CommandQueue {
        &self.queue
    }

    /// The second compute queue, created at its first use.
    pub(crate) fn side_queue(&self) -> Result<&CommandQueue> {
        if let Some(side) = self.side_queue.get() {
            return Ok(side);
        }
        // SAFETY: as for the main queue: the context's own device.
        let created = unsafe {
            CommandQueue::create_with_properties(
                &self.context,
                self.context.default_device(),
                compute_queue_properties(self.out_of_order, self.profiling),
                0,
            )
        }
        .call("clCreateCommandQueueWithProperties")?;
        // Another thread may have set one meanwhile: then ours is dropped.
        let _ = self.side_queue.set(created);
        Ok(self.side_queue.get().unwrap_or(&self.queue))
    }

    /// Launches every held launch (see [`HeldLaunches`]) on this thread's queue.
    pub(crate) fn launch_held(&self) -> Result<()> {
        if let Some(held) = self.ordering_only().as_mut() {
            held.launch_all()?;
        }
        Ok(())
    }

    /// The queue of [`read_later`](crate::MatrixCl::read_later)'s copies
    /// when they have one of their own (see [`RuntimeConfig::transfer_queue`]).
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// // CPUs keep their copies on the main queue unless asked otherwise.
    /// if !rt.device_info().is_gpu && std::env::var_os("FUSION_TRANSFER_QUEUE").is_none() {
    ///     assert!(rt.transfer_queue().is_none());
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn transfer_queue(&self) -> Option<&CommandQueue> {
        self.transfer_queue.as_ref()
    }

    /// The selected device.
    pub fn device_info(&self) -> &DeviceInfo {
        &self.info
    }

    /// A tuning switch that is on by default only on GPUs: `knob` when
    /// set, else whether this device is a GPU (the sweeps and xᵀ·v's
    /// last-group ending: PoCL builds their barriers slowly).
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// assert!(rt.on_gpus_unless_set(Some(true)));
    /// assert_eq!(rt.on_gpus_unless_set(None), rt.device_info().is_gpu);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn on_gpus_unless_set(&self, knob: Option<bool>) -> bool {
        knob.unwrap_or(self.info.is_gpu)
    }

    /// Whether `f64` may be used (false also when forced off by configuration).
    pub fn fp64(&self) -> bool {
        self.fp64
    }

    /// Whether the queue executes out of order.
    pub fn out_of_order(&self) -> bool {
        self.out_of_order
    }

    /// Whether events carry profiling timestamps.
    pub fn profiling(&self) -> bool {
        self.profiling
    }

    /// The launch-shape knobs this runtime was configured with.
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// let groups = rt.tuning().reduction_groups_per_cu.unwrap_or(32);
    /// assert!(groups >= 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// The build diagnostics (dumps, logs, extra options) in force.
    pub fn diagnostics(&self) -> &BuildDiagnostics {
        &self.diagnostics
    }

    /// The device's compiled programs.
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// assert_eq!(rt.kernels().device(), rt.device_info().index);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn kernels(&self) -> &KernelCache {
        &self.kernels
    }

    /// A one-element buffer of this device that no kernel reads or writes:
    /// what an empty matrix binds as its buffer argument (OpenCL has no
    /// empty buffers, yet every buffer parameter needs one), and what
    /// profile marks fill.
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// assert_eq!(rt.placeholder()?.len(), 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn placeholder(&'static self) -> Result<&'static crate::MatrixCl<i32>> {
        if let Some(placeholder) = self.placeholder.get() {
            return Ok(placeholder);
        }
        // Its contents never matter: uninitialised, so making it queues nothing.
        let made = crate::Device::of(self).run(|| crate::MatrixCl::uninitialized(1, 1))?;
        Ok(self.placeholder.get_or_init(|| made))
    }

    /// The compiled programs kept on disk between processes.
    pub fn program_cache(&self) -> &ProgramCache {
        &self.program_cache
    }

    /// Fails with [`Error::Unsupported`] when `T` needs fp64 and the device lacks it.
    pub fn require<T: crate::ClType>(&self, function: &str) -> Result<()> {
        if T::NEEDS_FP64 && !self.fp64 {
            return Err(Error::Unsupported {
                what: format!(
                    "{function}: `{}` needs fp64 (cl_khr_fp64), which device `{}` lacks",
                    T::CL_NAME,
                    self.info.name
                ),
            });
        }
        Ok(())
    }

    /// Takes this device's ordering lock for one enqueue: gathering a
    /// command's wait list, enqueueing it and recording its event are one
    /// step for every thread using the device (see [`crate::EventLists`]).
    /// Nothing that blocks on the device may run while it is held: enqueue
    /// non-blocking, release, then wait. Each device has its own, so that
    /// threads driving different devices never queue behind one another.
    /// `touches` are the buffers the command uses and how: the calling
    /// thread's pending sweep is launched first, and another thread's when
    /// it uses one of them (one side writing), so that commands run in the
    /// order their dependences require (see [`crate::sweep`]).
    pub(crate) fn ordered(
        &self,
        touches: &[(u64, crate::Access)],
    ) -> Result<std::sync::MutexGuard<'_, Option<Box<dyn HeldLaunches>>>> {
        let mut held = self.ordering_only();
        if let Some(held) = held.as_mut() {
            held.launch_before(touches)?;
        }
        Ok(held)
    }

    /// The ordering lock without launching held launches: for holding one.
    pub(crate) fn ordering_only(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn HeldLaunches>>> {
        // A panic elsewhere leaves at worst launches that never run; the
        // lists stay valid.
        self.ordering.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until every enqueued command has finished (pending sweeps
    /// launched first).
    pub fn finish(&self) -> Result<()> {
        self.launch_held()?;
        if let Some(side) = self.side_queue.get() {
            side.finish().call("clFinish")?;
        }
        self.queue.finish().call("clFinish")
    }

    /// Submits the commands queued so far to the device without waiting
    /// for them, so that it starts on them while the host queues more.
    ///
    /// ```
    /// clfuse_core::Runtime::get()?.flush()?;
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.queue.flush().call("clFlush")
    }
}
