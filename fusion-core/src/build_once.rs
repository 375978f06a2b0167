//! A concurrent map whose missing values are built once: the kernel caches.
//!
//! When several threads ask for the same missing kernel at once, the first
//! compiles it and the others wait for that compile instead of each running
//! their own (a compile takes tens of milliseconds to seconds).

use crate::error::Result;
use dashmap::DashMap;
use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

type FxBuild = std::hash::BuildHasherDefault<rustc_hash::FxHasher>;

/// One key's value, and the lock its builder holds while building it.
#[derive(Debug)]
struct Slot<V> {
    value: OnceLock<V>,
    building: Mutex<()>,
}

/// A map from keys to values built on first use, at most once per key
/// while builds succeed (a failed build leaves the key missing, so a later
/// call tries again).
///
/// ```
/// use clfuse_core::BuildOnce;
/// let cache: BuildOnce<u32, String> = BuildOnce::new();
/// let first = cache.get_or_build(&7, || Ok("seven".to_string()))?;
/// let again = cache.get_or_build(&7, || panic!("built twice"))?;
/// assert_eq!((first.as_str(), again.as_str()), ("seven", "seven"));
/// assert_eq!(cache.len(), 1);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct BuildOnce<K: Eq + Hash, V> {
    slots: DashMap<K, Arc<Slot<V>>, FxBuild>,
}

impl<K: Eq + Hash, V> Default for BuildOnce<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Eq + Hash, V> BuildOnce<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        BuildOnce {
            slots: DashMap::with_hasher(FxBuild::default()),
        }
    }

    /// Number of keys whose value has been built.
    pub fn len(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.value().value.get().is_some())
            .count()
    }

    /// Whether no value has been built.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every value (a build under way completes for its callers
    /// but is not kept).
    pub fn clear(&self) {
        self.slots.clear();
    }
}

impl<K: Eq + Hash + Clone, V: Clone> BuildOnce<K, V> {
    /// The value of `key`, built by `build` if no thread has built it yet.
    /// A caller that finds another thread building the same key waits for it.
    pub fn get_or_build<Q>(&self, key: &Q, build: impl FnOnce() -> Result<V>) -> Result<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ToOwned<Owned = K> + ?Sized,
    {
        // The common case, a value already built: one lookup, no lock.
        let slot = match self.slots.get(key) {
            Some(slot) => {
                if let Some(value) = slot.value.get() {
                    return Ok(value.clone());
                }
                slot.clone()
            }
            None => self.slots.entry(key.to_owned()).or_default().clone(),
        };
        // No map guard is held from here on: `build` may use the map.
        let _building = slot.building.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = slot.value.get() {
            return Ok(value.clone());
        }
        let value = build()?;
        Ok(slot.value.get_or_init(|| value).clone())
    }
}

impl<V> Default for Slot<V> {
    fn default() -> Self {
        Slot {
            value: OnceLock::new(),
            building: Mutex::new(()),
        }
    }
}
