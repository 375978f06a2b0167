//! The counter of finished work-groups that kernels ending in a last-group
//! step share (a reduction's final sum, a `1 x 1` adjoint): each group
//! increments it as it finishes, and the last one, seeing every other
//! group's count, does the final step and sets it back to zero. So it is
//! zero between launches and one counter serves every launch of a thread.
//! It holds [`GROUPS_DONE_SLOTS`] counts, so that one kernel may end several
//! reductions this way (a step's scalar sums and its `xᵀ·v`), each counting
//! its groups in a slot of its own.
//!
//! Launches of several chains batched into one (`chain_batch`) run at the
//! same time, so each chain but the first gets a counter of its own.

use crate::error::Result;
use crate::matrix::MatrixCl;
use crate::runtime::Runtime;

thread_local! {
    /// Per device (runtime slot), this thread's counters: the shared one
    /// first, then those of a batch's further chains.
    static COUNTERS: std::cell::RefCell<Vec<(usize, Vec<MatrixCl<i32>>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// How many reductions one kernel may end with a last-group step: the
/// counts a finished-groups counter holds.
pub const GROUPS_DONE_SLOTS: usize = 8;

/// This thread's finished-groups counter on `rt`'s device
/// ([`GROUPS_DONE_SLOTS`] counts): zero between launches, since each
/// launch's last group sets its slot back. The launches that use it are
/// ordered by its event lists (each reads and writes it), and other threads
/// have their own.
///
/// ```
/// let rt = clfuse_core::Runtime::get()?;
/// let counter = clfuse_core::groups_done_counter(rt)?;
/// assert_eq!(counter.to_vec()?, vec![0; clfuse_core::GROUPS_DONE_SLOTS]);
/// assert_eq!(clfuse_core::groups_done_counter(rt)?.buffer_id(), counter.buffer_id());
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn groups_done_counter(rt: &Runtime) -> Result<MatrixCl<i32>> {
    chain_counter(rt, 0)
}

/// The counter of chain `chain` of a batched launch on `rt`'s device (0:
/// the shared one).
pub(crate) fn chain_counter(rt: &Runtime, chain: usize) -> Result<MatrixCl<i32>> {
    COUNTERS.with(|counters| {
        let mut counters = counters.borrow_mut();
        let index = match counters.iter().position(|(slot, _)| *slot == rt.slot()) {
            Some(index) => index,
            None => {
                counters.push((rt.slot(), Vec::new()));
                counters.len() - 1
            }
        };
        let own = &mut counters[index].1;
        while own.len() <= chain {
            own.push(MatrixCl::<i32>::zeros(GROUPS_DONE_SLOTS, 1)?);
        }
        Ok(own[chain].share())
    })
}

/// Whether `buffer` is this thread's shared counter on `rt`'s device.
pub(crate) fn is_shared_counter(rt: &Runtime, buffer: u64) -> bool {
    COUNTERS.with(|counters| {
        counters.borrow().iter().any(|(slot, own)| {
            *slot == rt.slot() && own.first().is_some_and(|c| c.buffer_id() == buffer)
        })
    })
}
