//! A result an output reads back to the host after its kernel (a check's
//! flag, a full reduction's partial sums): queued by the output's
//! `start_reads` so that all of a kernel's read-backs share one round trip,
//! collected by its `verify`.

use clfuse_core::{ClType, MatrixCl, PendingRead, ReadBatch, Result};
use std::sync::Mutex;

#[derive(Debug)]
pub(crate) struct ReadBack<T: ClType>(Mutex<Option<PendingRead<T>>>);

impl<T: ClType> Default for ReadBack<T> {
    fn default() -> Self {
        ReadBack(Mutex::new(None))
    }
}

impl<T: ClType> ReadBack<T> {
    /// Queues the copy of `m` without waiting, as one of `batch`'s reads.
    pub fn start(&self, m: &MatrixCl<T>, batch: &ReadBatch) -> Result<()> {
        let read = m.read_later_in(batch)?;
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(read);
        Ok(())
    }

    /// The queued copy, or a blocking read of `m` when none was queued.
    pub fn finish(&self, m: &MatrixCl<T>) -> Result<Vec<T>> {
        let queued = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match queued {
            Some(read) => read.wait(),
            None => m.to_vec(),
        }
    }
}
