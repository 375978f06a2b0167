//! Check verdicts read once per gradient evaluation instead of once per
//! kernel. Inside [`deferring`], every [`CheckSet`](crate::CheckSet)
//! records its failures in slots of one per-thread flag buffer (the
//! arena) instead of a buffer of its own, and nothing waits for them
//! after its kernel: the host goes on queueing the next steps while the
//! device runs. The caller reads the used slots with its result (one
//! transfer for the value, the gradient and every verdict) and, when one
//! failed, evaluates again with the checks immediate, which reproduces
//! the exact error (the failing argument, element and value).
//!
//! A deferred check must not protect a read outside a buffer: those
//! guards (gathers' indices) stay immediate. Deferred checks only guard
//! values, so a failed one makes a result that is thrown away.
//!
//! Each evaluation names its owner (the parameter buffer it differentiates
//! by), and each owner has an arena of its own: the chains a thread
//! interleaves then never write one flag buffer, so their replays can be
//! launched together (`clfuse_core::ReplayBatch`), and one chain's failure
//! never shows in another's verdicts.

use clfuse_core::{Device, MatrixCl, Result};
use std::cell::RefCell;

/// Slots in one thread's arena; a call needing more checks than this has
/// its later checks immediate.
const CAPACITY: usize = 512;

/// Arenas a thread keeps at most (the oldest goes first; a recording that
/// still uses it keeps its buffer alive).
const MAX_ARENAS: usize = 64;

/// One owner's flag buffer and how much of it the current evaluation
/// has claimed.
struct Arena {
    /// The evaluation's owner (see [`deferring`]).
    owner: u64,
    flags: MatrixCl<i32>,
    /// Slots claimed since the evaluation began.
    used: usize,
    /// Some slot may hold a failure (a failed or abandoned evaluation):
    /// reset before the next evaluation claims any.
    dirty: bool,
}

thread_local! {
    /// This thread's arenas, one per owner (kept between evaluations, with
    /// `used` reset).
    static ARENAS: RefCell<Vec<Arena>> = const { RefCell::new(Vec::new()) };
    /// The owner of the evaluation running now.
    static OWNER: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static ACTIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` on the current owner's arena (`None` when it has none yet).
fn with_arena<R>(f: impl FnOnce(Option<&mut Arena>) -> R) -> R {
    let owner = OWNER.with(std::cell::Cell::get);
    ARENAS.with(|arenas| f(arenas.borrow_mut().iter_mut().find(|a| a.owner == owner)))
}

/// Claims `count` consecutive slots for a check set's flags: the arena (a
/// handle sharing its buffer) and the first slot, or `None` when checks
/// are immediate here (no deferring evaluation, another device, or the
/// arena full).
pub(crate) fn claim(count: usize) -> Result<Option<(MatrixCl<i32>, usize)>> {
    if count == 0 || !ACTIVE.with(std::cell::Cell::get) {
        return Ok(None);
    }
    let here = Device::current()?;
    with_arena(|arena| {
        let Some(a) = arena.filter(|a| a.flags.device() == Some(here)) else {
            return Ok(None);
        };
        if a.used + count > CAPACITY {
            return Ok(None);
        }
        let offset = a.used;
        a.used += count;
        Ok(Some((a.flags.share(), offset)))
    })
}

/// The arena's slots that an evaluation claimed: what its final read
/// appends to the result.
pub(crate) struct Claimed {
    pub(crate) flags: MatrixCl<i32>,
    pub(crate) used: usize,
}

/// Runs `f` with this thread's check sets deferring their verdicts into
/// `owner`'s arena (an identity of what is evaluated, such as the buffer
/// of the parameters it differentiates by). `f` gets nothing to read yet; when it finishes its steps it
/// calls [`claimed`] for the slots to read with its result, and reports
/// through [`verdict`] what it read. Nested calls run `f` inside the
/// outer evaluation (its read then verifies the outer's slots so far too;
/// a failure stays in the arena, so the outer evaluation fails as well).
pub(crate) fn deferring<R>(owner: u64, f: impl FnOnce() -> Result<R>) -> Result<R> {
    if ACTIVE.with(std::cell::Cell::get) {
        return f();
    }
    OWNER.with(|o| o.set(owner));
    prepare_arena()?;
    let outcome = with_active(true, f);
    with_arena(|arena| {
        if let Some(a) = arena {
            // Claimed slots whose verdict was not read as clean (an error
            // before the read, or a failure) are reset before reuse.
            if a.used > 0 {
                a.dirty = true;
            }
            a.used = 0;
        }
    });
    outcome
}

/// Runs `f` with every check immediate, also inside a deferring
/// evaluation (the retry that names a failed check's error).
pub(crate) fn immediate<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    with_active(false, f)
}

/// Runs `f` with deferral on or off, restoring the previous setting after
/// it, also when `f` panics (a thread that goes on must not stay in a
/// deferring evaluation that has ended).
fn with_active<R>(active: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ACTIVE.with(|a| a.replace(active)));
    f()
}

/// The slots claimed so far in this thread's deferring evaluation (`None`
/// when it claimed none).
pub(crate) fn claimed() -> Option<Claimed> {
    with_arena(|arena| {
        arena.filter(|a| a.used > 0).map(|a| Claimed {
            flags: a.flags.share(),
            used: a.used,
        })
    })
}

/// Records the verdict read back for the claimed slots: `true` when every
/// slot was clean, so the arena serves the next evaluation unreset.
pub(crate) fn verdict(slots: &[i32]) -> bool {
    let clean = slots.iter().all(|&first| first == i32::MAX);
    if clean {
        with_arena(|arena| {
            if let Some(a) = arena {
                a.used = 0;
            }
        });
    }
    clean
}

/// Makes the current owner's arena ready on the current device: created on
/// first use, reset when a previous evaluation may have left a failure in it.
fn prepare_arena() -> Result<()> {
    let here = Device::current()?;
    let owner = OWNER.with(std::cell::Cell::get);
    ARENAS.with(|arenas| {
        let mut arenas = arenas.borrow_mut();
        let mine = arenas.iter().position(|a| a.owner == owner);
        match mine.map(|k| &mut arenas[k]) {
            Some(a) if a.flags.device() == Some(here) => {
                if a.dirty {
                    a.flags.fill(i32::MAX)?;
                    a.dirty = false;
                }
                a.used = 0;
            }
            _ => {
                let arena = Arena {
                    owner,
                    flags: MatrixCl::constant(CAPACITY, 1, i32::MAX)?,
                    used: 0,
                    dirty: false,
                };
                if let Some(k) = mine {
                    arenas[k] = arena;
                } else {
                    if arenas.len() >= MAX_ARENAS {
                        arenas.remove(0);
                    }
                    arenas.push(arena);
                }
            }
        }
        Ok(())
    })
}
