//! Reading settings from the environment: a variable's value, and the
//! parsers and error every setting shares (the error names the variable and
//! what it accepts).

use crate::error::{Error, Result};
use std::ops::RangeInclusive;

/// The value of environment variable `name`, when set and not empty.
pub(crate) fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A whole number in `range`, from variable `name`.
pub(crate) fn parse_count(
    name: &'static str,
    text: &str,
    range: RangeInclusive<usize>,
) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(invalid(
            name,
            text,
            &format!("a whole number {}–{}", range.start(), range.end()),
        )),
    }
}

/// `0`/`1` (or `false`/`true`), from variable `name`.
pub(crate) fn parse_flag(name: &'static str, text: &str) -> Result<bool> {
    match text.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(invalid(name, text, "0 or 1")),
    }
}

/// The error for a bad value of variable `name`.
pub(crate) fn invalid(name: &'static str, value: &str, accepted: &str) -> Error {
    Error::InvalidArgument {
        function: "RuntimeConfig::from_env",
        argument: name,
        reason: format!("{name}={value:?} is not accepted; expected {accepted}"),
    }
}
