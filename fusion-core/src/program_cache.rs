//! Compiled programs kept on disk between processes (`CL_PROGRAM_BINARIES`).
//!
//! A program built from source is stored as the device's binary under the
//! user's cache directory; a later process that builds the same source with
//! the same options on the same device and driver loads the binary instead
//! of compiling. Files are never trusted: each carries its key and a
//! checksum of its payload, and one that does not match (truncated, corrupt,
//! written for another key) is deleted and rebuilt from source. Writers put
//! the whole file in a temporary beside it and rename it into place, so two
//! processes storing the same entry never leave a mixed file.

use crate::device_info::DeviceInfo;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where compiled programs are kept between processes (`FUSION_CACHE_DIR`).
///
/// ```
/// use clfuse_core::ProgramCacheSetting;
/// assert_eq!(ProgramCacheSetting::parse("off"), ProgramCacheSetting::Off);
/// assert_eq!(ProgramCacheSetting::parse("/tmp/k"), ProgramCacheSetting::Dir("/tmp/k".into()));
/// assert_eq!(ProgramCacheSetting::Off.folder(), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProgramCacheSetting {
    /// `clfuse/programs` under the user's cache directory
    /// (`$XDG_CACHE_HOME`, else `~/.cache` on Linux).
    #[default]
    Default,
    /// This folder.
    Dir(PathBuf),
    /// No disk cache: every process compiles its programs.
    Off,
}

impl ProgramCacheSetting {
    /// The setting a `FUSION_CACHE_DIR` value describes: `off`, `0` or
    /// `none` turn the cache off; anything else is a folder.
    pub fn parse(value: &str) -> Self {
        match value.trim() {
            "off" | "0" | "none" | "false" => ProgramCacheSetting::Off,
            folder => ProgramCacheSetting::Dir(PathBuf::from(folder)),
        }
    }

    /// The folder this setting names (`None` when off, or when the user
    /// has no cache directory).
    pub fn folder(&self) -> Option<PathBuf> {
        match self {
            ProgramCacheSetting::Default => {
                dirs::cache_dir().map(|base| base.join("clfuse").join("programs"))
            }
            ProgramCacheSetting::Dir(folder) => Some(folder.clone()),
            ProgramCacheSetting::Off => None,
        }
    }
}

/// Counts of the disk cache's traffic since the process started.
///
/// ```
/// let stats = clfuse_core::program_cache_stats();
/// assert!(stats.loaded <= stats.loaded + stats.stored);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProgramCacheStats {
    /// Programs loaded from disk instead of compiled.
    pub loaded: u64,
    /// Programs written to disk after a compile.
    pub stored: u64,
    /// Files found but not used: corrupt, truncated, foreign, or rejected
    /// by the driver. Each was deleted and its program rebuilt.
    pub rejected: u64,
    /// Stores that failed (a read-only or full disk); the cache goes on
    /// without them.
    pub store_failures: u64,
}

static LOADED: AtomicU64 = AtomicU64::new(0);
static STORED: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);
static STORE_FAILURES: AtomicU64 = AtomicU64::new(0);

/// The process-wide counters of the disk cache.
pub fn program_cache_stats() -> ProgramCacheStats {
    ProgramCacheStats {
        loaded: LOADED.load(Ordering::Relaxed),
        stored: STORED.load(Ordering::Relaxed),
        rejected: REJECTED.load(Ordering::Relaxed),
        store_failures: STORE_FAILURES.load(Ordering::Relaxed),
    }
}

/// Identifies the file format; the last byte is its version.
const MAGIC: &[u8; 16] = b"clfuse-program\x00\x01";
/// Magic, key, payload length, payload checksum.
const HEADER_BYTES: usize = 16 + 32 + 8 + 32;

/// The key of one program: everything its binary depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramKey([u8; 32]);

impl ProgramKey {
    /// The key of `source` built with `options` on `device`, by this
    /// version of the library.
    ///
    /// ```
    /// # let device = clfuse_core::Runtime::get()?.device_info();
    /// use clfuse_core::ProgramKey;
    /// let a = ProgramKey::new("kernel void k() {}", "", device);
    /// assert_eq!(a, ProgramKey::new("kernel void k() {}", "", device));
    /// assert_ne!(a, ProgramKey::new("kernel void k() {}", "-cl-fast-relaxed-math", device));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn new(source: &str, options: &str, device: &DeviceInfo) -> Self {
        let mut hasher = blake3::Hasher::new();
        // Each part is length-prefixed so that no two lists of parts hash alike.
        for part in [
            env!("CARGO_PKG_VERSION"),
            &device.platform_name,
            &device.name,
            &device.vendor,
            &device.driver_version,
            &device.version,
            options,
            source,
        ] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        ProgramKey(*hasher.finalize().as_bytes())
    }

    fn file_name(&self) -> String {
        let hex: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}.bin")
    }
}

/// The disk cache of one runtime: a folder, or nothing when off or unusable.
#[derive(Debug)]
pub struct ProgramCache {
    folder: Option<PathBuf>,
    /// Whether a failed store was already reported (once per process).
    warned: AtomicBool,
}

impl ProgramCache {
    /// The cache `setting` describes. A folder that cannot be created only
    /// turns the cache off, with one warning on standard error.
    pub(crate) fn open(setting: &ProgramCacheSetting) -> Self {
        let folder = setting.folder().and_then(|folder| {
            match std::fs::create_dir_all(&folder) {
                Ok(()) => Some(folder),
                Err(error) => {
                    eprintln!(
                        "clfuse: warning: program cache folder {} is unusable ({error}); compiled programs are not kept between processes",
                        folder.display()
                    );
                    None
                }
            }
        });
        ProgramCache {
            folder,
            warned: AtomicBool::new(false),
        }
    }

    /// The folder in use (`None` when the cache is off).
    ///
    /// ```
    /// let rt = clfuse_core::Runtime::get()?;
    /// if let Some(folder) = rt.program_cache().folder() {
    ///     assert!(folder.is_dir());
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn folder(&self) -> Option<&Path> {
        self.folder.as_deref()
    }

    /// The stored binary of `key`, when a whole, matching file exists. A
    /// file that does not check out is deleted (it would fail again).
    pub(crate) fn load(&self, key: &ProgramKey) -> Option<Vec<u8>> {
        let path = self.folder.as_ref()?.join(key.file_name());
        let bytes = std::fs::read(&path).ok()?;
        match payload(&bytes, key) {
            Some(binary) => Some(binary.to_vec()),
            None => {
                self.reject(key);
                None
            }
        }
    }

    /// Records that the file of `key` was not usable and removes it.
    pub(crate) fn reject(&self, key: &ProgramKey) {
        REJECTED.fetch_add(1, Ordering::Relaxed);
        if let Some(folder) = &self.folder {
            // Another process may have removed or replaced it already.
            let _ = std::fs::remove_file(folder.join(key.file_name()));
        }
    }

    /// Counts a program loaded from its stored binary.
    pub(crate) fn note_loaded(&self) {
        LOADED.fetch_add(1, Ordering::Relaxed);
    }

    /// Stores `binary` as the program of `key`. Failures only warn (once).
    pub(crate) fn store(&self, key: &ProgramKey, binary: &[u8]) {
        let Some(folder) = &self.folder else { return };
        if binary.is_empty() {
            return;
        }
        match write_entry(folder, key, binary) {
            Ok(()) => {
                STORED.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                STORE_FAILURES.fetch_add(1, Ordering::Relaxed);
                if !self.warned.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "clfuse: warning: cannot store compiled programs in {} ({error}); they are compiled again in each process",
                        folder.display()
                    );
                }
            }
        }
    }
}

/// The payload of a stored file, if its header matches `key` and its checksum.
fn payload<'a>(bytes: &'a [u8], key: &ProgramKey) -> Option<&'a [u8]> {
    if bytes.len() < HEADER_BYTES || &bytes[..16] != MAGIC || bytes[16..48] != key.0 {
        return None;
    }
    let length = u64::from_le_bytes(bytes[48..56].try_into().ok()?);
    let body = &bytes[HEADER_BYTES..];
    if usize::try_from(length).ok()? != body.len() {
        return None;
    }
    (blake3::hash(body).as_bytes() == &bytes[56..88]).then_some(body)
}

/// Writes the whole entry to a temporary file in `folder`, then renames it
/// into place: readers see the old file, no file, or the new one, whole.
fn write_entry(folder: &Path, key: &ProgramKey, binary: &[u8]) -> std::io::Result<()> {
    let mut file = tempfile::Builder::new()
        .prefix(".writing-")
        .tempfile_in(folder)?;
    file.write_all(MAGIC)?;
    file.write_all(&key.0)?;
    file.write_all(&(binary.len() as u64).to_le_bytes())?;
    file.write_all(blake3::hash(binary).as_bytes())?;
    file.write_all(binary)?;
    file.as_file().sync_data()?;
    file.persist(folder.join(key.file_name()))
        .map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> ProgramKey {
        ProgramKey([n; 32])
    }

    #[test]
    fn entries_round_trip_and_reject_damage() {
        let folder = tempfile::tempdir().unwrap();
        let cache = ProgramCache::open(&ProgramCacheSetting::Dir(folder.path().into()));
        assert!(cache.load(&key(1)).is_none());
        cache.store(&key(1), b"binary bytes");
        assert_eq!(cache.load(&key(1)).as_deref(), Some(&b"binary bytes"[..]));
        // Another key's file under this key's name is foreign.
        let path = folder.path().join(key(1).file_name());
        std::fs::copy(&path, folder.path().join(key(2).file_name())).unwrap();
        assert!(cache.load(&key(2)).is_none());
        assert!(!folder.path().join(key(2).file_name()).exists());
        // A truncated file and a flipped byte are both rejected and removed.
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
        assert!(cache.load(&key(1)).is_none());
        assert!(!path.exists());
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(cache.load(&key(1)).is_none());
        // Nothing but whole entries is left behind.
        cache.store(&key(3), b"x");
        let names: Vec<_> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(key(3).file_name())]);
    }

    #[test]
    fn an_unusable_folder_turns_the_cache_off() {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let cache = ProgramCache::open(&ProgramCacheSetting::Dir(file.join("below")));
        assert!(cache.folder().is_none());
        cache.store(&key(1), b"ignored");
        assert!(cache.load(&key(1)).is_none());
    }
}
