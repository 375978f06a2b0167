//! Several devices in one process: a [`Device`] handle per context.
//!
//! Every matrix belongs to the device it was made on, and every kernel runs
//! on one device: the calling thread's current one, the default unless the
//! work runs inside [`Device::run`]. A kernel given a matrix of another
//! device is an [`Error::DeviceMismatch`] naming both (OpenCL buffers cannot
//! cross contexts); [`MatrixCl::to_device`](crate::MatrixCl::to_device)
//! copies a matrix across explicitly. Each device has its own kernel cache,
//! buffer pool and queue.

use crate::device_info::DeviceInfo;
use crate::error::{Error, Result};
use crate::runtime::{CurrentGuard, Runtime, RuntimeConfig};

/// One OpenCL device's context, queue and caches.
///
/// ```
/// use clfuse_core::{Device, MatrixCl};
/// let default = Device::default_device()?;
/// // A second context on the same device: its matrices are its own.
/// let second = Device::open_new(clfuse_core::RuntimeConfig {
///     device: Some(default.info().index.to_string()),
///     ..Default::default()
/// })?;
/// let x = second.run(|| MatrixCl::from_slice(2, 1, &[1.0f32, 2.0]))?;
/// assert_eq!(x.device(), Some(second));
/// let here = x.to_device(default)?;
/// assert_eq!(here.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Device {
    runtime: &'static Runtime,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device{}", self.runtime.label())
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.runtime.slot() == other.runtime.slot()
    }
}

impl Eq for Device {}

impl Device {
    pub(crate) fn of(runtime: &'static Runtime) -> Self {
        Device { runtime }
    }

    /// The process's default device (`configure`, else `FUSION_DEVICE`).
    pub fn default_device() -> Result<Self> {
        Runtime::default_runtime().map(Device::of)
    }

    /// The calling thread's current device (the default outside [`run`](Self::run)).
    pub fn current() -> Result<Self> {
        Runtime::get().map(Device::of)
    }

    /// The device `selector` names (an index in [`list_devices`](crate::list_devices)
    /// order or a case-insensitive name substring), sharing the context of
    /// a runtime already open on it (the default one included), else
    /// opening one with the environment's other settings.
    ///
    /// ```
    /// let name = clfuse_core::Device::default_device()?.info().name.clone();
    /// let again = clfuse_core::Device::open(&name)?;
    /// assert_eq!(again, clfuse_core::Device::default_device()?);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn open(selector: &str) -> Result<Self> {
        let config = RuntimeConfig {
            device: Some(selector.to_string()),
            ..RuntimeConfig::from_env()?
        };
        // The default first: opening it must not make a second context.
        let default = Runtime::default_runtime()?;
        let wanted = crate::runtime::chosen_device(&config)?;
        let open = crate::runtime::all_runtimes()
            .into_iter()
            .find(|rt| rt.device_info().index == wanted.index);
        match open {
            Some(runtime) => Ok(Device::of(runtime)),
            None if default.device_info().index == wanted.index => Ok(Device::of(default)),
            None => Runtime::open(&config).map(Device::of),
        }
    }

    /// A new context and queue on the device `config` picks, even if one is
    /// open on it already: work isolated from the rest of the process (its
    /// own queue and caches), or a second device object for testing.
    pub fn open_new(config: RuntimeConfig) -> Result<Self> {
        Runtime::default_runtime()?;
        Runtime::open(&config).map(Device::of)
    }

    /// Every device open in the process, by slot.
    pub fn opened() -> Vec<Self> {
        crate::runtime::all_runtimes()
            .into_iter()
            .map(Device::of)
            .collect()
    }

    /// Runs `work` with this device as the calling thread's current one:
    /// the matrices it makes live here and the kernels it launches run
    /// here. Nested calls restore the outer device on return (and on panic).
    ///
    /// ```
    /// let d = clfuse_core::Device::default_device()?;
    /// let m = d.run(|| clfuse_core::MatrixCl::<f64>::zeros(2, 2))?;
    /// assert_eq!(m.device(), Some(d));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn run<R>(&self, work: impl FnOnce() -> R) -> R {
        let _current = CurrentGuard::enter(self.runtime);
        work()
    }

    /// Bytes of this device's memory that the buffer pool keeps for reuse
    /// (each device has its own pool and limit; see
    /// [`cached_buffer_bytes`](crate::cached_buffer_bytes) for all of them).
    ///
    /// ```
    /// let d = clfuse_core::Device::default_device()?;
    /// let before = d.cached_buffer_bytes();
    /// drop(d.run(|| clfuse_core::MatrixCl::<f64>::zeros(1000, 1))?);
    /// assert!(d.cached_buffer_bytes() >= before);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn cached_buffer_bytes(&self) -> usize {
        crate::buffer_pool::cached_bytes_of(self.runtime.slot())
    }

    /// The device's description.
    pub fn info(&self) -> &'static DeviceInfo {
        self.runtime.device_info()
    }

    /// Its runtime (context, queue, caches).
    pub fn runtime(&self) -> &'static Runtime {
        self.runtime
    }

    /// `[slot] name`, as error messages name devices.
    pub fn label(&self) -> String {
        self.runtime.label()
    }

    /// Waits for every command queued on this device.
    pub fn finish(&self) -> Result<()> {
        self.runtime.finish()
    }

    /// The error for `what` finding a matrix of `found` where `expected` works.
    pub(crate) fn mismatch(what: &str, expected: &Runtime, found: &Runtime) -> Error {
        Error::DeviceMismatch {
            what: what.to_string(),
            expected: expected.label(),
            found: found.label(),
        }
    }
}
