//! Launch-shape knobs read from the environment, for tuning on a new device
//! without rebuilding.

/// The positive integer in environment variable `name`, else `default`.
///
/// ```
/// assert_eq!(fusion_core::tuning_knob("FUSION_NO_SUCH_KNOB", 8), 8);
/// ```
pub fn tuning_knob(name: &str, default: usize) -> usize {
    tuning_override(name).unwrap_or(default)
}

/// The positive integer in environment variable `name`, when it holds one
/// (for knobs whose default depends on the launch).
///
/// ```
/// assert_eq!(fusion_core::tuning_override("FUSION_NO_SUCH_KNOB"), None);
/// ```
pub fn tuning_override(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
}
