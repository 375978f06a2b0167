//! The OpenCL devices of the machine: what each one is ([`DeviceInfo`]),
//! how they are listed, and how a selector picks one.

use crate::error::{ClResultExt, Error, Result};
use opencl3::command_queue::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
use opencl3::device::{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU, Device};
use opencl3::platform::get_platforms;

/// A description of one OpenCL device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// Position in [`list_devices`].
    pub index: usize,
    /// Index of its platform.
    pub platform_index: usize,
    /// Platform name.
    pub platform_name: String,
    /// Device name.
    pub name: String,
    /// Vendor name.
    pub vendor: String,
    /// Driver version string.
    pub driver_version: String,
    /// OpenCL version string.
    pub version: String,
    /// Whether it is a GPU.
    pub is_gpu: bool,
    /// Whether it supports double precision.
    pub fp64: bool,
    /// Compute units.
    pub compute_units: u32,
    /// Global memory in bytes.
    pub global_mem_bytes: u64,
    /// Local memory per work-group in bytes.
    pub local_mem_bytes: u64,
    /// Largest work-group size.
    pub max_work_group_size: usize,
    /// Bytes of arguments one kernel may take (`CL_DEVICE_MAX_PARAMETER_SIZE`).
    pub max_parameter_bytes: usize,
    /// The alignment of a buffer's start in bytes (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`,
    /// given in bits): where a sub-buffer may begin.
    pub mem_base_align_bytes: usize,
    /// Whether host queues may execute out of order.
    pub out_of_order: bool,
    /// NVIDIA's compute capability (major, minor), from the
    /// `cl_nv_device_attribute_query` extension; `None` elsewhere.
    pub nv_compute_capability: Option<(u32, u32)>,
}

impl DeviceInfo {
    /// Whether the device has FP64 tensor cores (`mma` with `.f64`): NVIDIA
    /// compute capability 8.0 (A100) and 9.0 or later (H100, H200).
    ///
    /// ```
    /// let info = clfuse_core::Runtime::get()?.device_info();
    /// if info.nv_compute_capability.is_none() {
    ///     assert!(!info.has_fp64_tensor_cores());
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn has_fp64_tensor_cores(&self) -> bool {
        matches!(self.nv_compute_capability, Some((8, 0)) | Some((9.., _)))
    }
}

/// A device found by [`discover`]: its description and its OpenCL handle.
pub(crate) struct Found {
    pub(crate) info: DeviceInfo,
    pub(crate) device: Device,
}

/// Every device of every platform, in [`list_devices`] order.
pub(crate) fn discover() -> Result<Vec<Found>> {
    let platforms = get_platforms().map_err(|e| Error::NoPlatform {
        detail: opencl3::error_codes::error_text(e.0).to_string(),
    })?;
    if platforms.is_empty() {
        return Err(Error::NoPlatform {
            detail: "the OpenCL loader lists no platforms".into(),
        });
    }
    let mut found = Vec::new();
    for (platform_index, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_default();
        // A platform without devices reports CL_DEVICE_NOT_FOUND; skip it.
        let ids = platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for id in ids {
            let device = Device::new(id);
            let fp64 = device.double_fp_config().unwrap_or(0) != 0;
            let info = DeviceInfo {
                index: found.len(),
                platform_index,
                platform_name: platform_name.clone(),
                name: device
                    .name()
                    .call("clGetDeviceInfo(NAME)")?
                    .trim()
                    .to_string(),
                vendor: device.vendor().unwrap_or_default(),
                driver_version: device.driver_version().unwrap_or_default(),
                version: device.version().unwrap_or_default(),
                is_gpu: device.dev_type().unwrap_or(0) & CL_DEVICE_TYPE_GPU != 0,
                fp64,
                compute_units: device.max_compute_units().unwrap_or(1),
                global_mem_bytes: device.global_mem_size().unwrap_or(0),
                local_mem_bytes: device.local_mem_size().unwrap_or(0),
                max_work_group_size: device.max_work_group_size().unwrap_or(1),
                // OpenCL's least value when the driver does not say.
                max_parameter_bytes: device.max_parameter_size().unwrap_or(1024),
                // OpenCL's least value for a full profile (1024 bits) when the driver does not say.
                mem_base_align_bytes: device
                    .mem_base_addr_align()
                    .map_or(128, |bits| bits as usize / 8),
                out_of_order: device.queue_on_host_properties().unwrap_or(0)
                    & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
                    != 0,
                nv_compute_capability: device
                    .extensions()
                    .is_ok_and(|e| e.contains("cl_nv_device_attribute_query"))
                    .then(|| {
                        Some((
                            device.compute_capability_major_nv().ok()?,
                            device.compute_capability_minor_nv().ok()?,
                        ))
                    })
                    .flatten(),
            };
            found.push(Found { info, device });
        }
    }
    Ok(found)
}

/// Lists every OpenCL device of every platform.
///
/// ```no_run
/// for d in clfuse_core::list_devices()? {
///     println!("[{}] {} (fp64: {})", d.index, d.name, d.fp64);
/// }
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    Ok(discover()?.into_iter().map(|f| f.info).collect())
}

fn matches(selector: &str, index: usize, name: &str) -> bool {
    match selector.trim().parse::<usize>() {
        Ok(i) => i == index,
        Err(_) => name
            .to_lowercase()
            .contains(&selector.trim().to_lowercase()),
    }
}

/// The device that `platform` and `device` select (each an index or a
/// case-insensitive name substring; `device` counts within the platform
/// when one is named), else the first GPU, else the first device.
pub(crate) fn choose(
    found: Vec<Found>,
    platform: Option<&str>,
    device: Option<&str>,
) -> Result<Found> {
    let available = found
        .iter()
        .map(|f| {
            format!(
                "[{}] {} / {}",
                f.info.index, f.info.platform_name, f.info.name
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut candidates: Vec<Found> = match platform {
        Some(p) => found
            .into_iter()
            .filter(|f| matches(p, f.info.platform_index, &f.info.platform_name))
            .collect(),
        None => found,
    };
    let pick = match device {
        Some(d) => {
            let within_platform = platform.is_some();
            candidates.iter().position(|f| {
                let local_index = if within_platform {
                    f.info.index - candidates[0].info.index
                } else {
                    f.info.index
                };
                matches(d, local_index, &f.info.name)
            })
        }
        None => candidates
            .iter()
            .position(|f| f.info.is_gpu)
            .or(if candidates.is_empty() { None } else { Some(0) }),
    };
    match pick {
        Some(i) => Ok(candidates.swap_remove(i)),
        None => Err(Error::NoDevice {
            selector: format!(
                "platform={} device={}",
                platform.unwrap_or("*"),
                device.unwrap_or("*")
            ),
            available,
        }),
    }
}
