//! `MatrixCl<T>`: a column-major matrix in device memory with a triangular view
//! and its own read/write event lists (paper §2.2–2.3).

use crate::buffer_pool;
use crate::cl_type::ClType;
use crate::device::Device;
use crate::error::{ClResultExt, Error, Result};
use crate::events::{Access, ClEvent, EventLists, raw_handles};
use crate::launch::KernelArg;
use crate::pending_read::PendingRead;
use crate::runtime::Runtime;
use crate::view::View;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::types::{CL_NON_BLOCKING, cl_mem};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A buffer identity never used before (matrices take theirs from here).
pub(crate) fn next_buffer_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A matrix on the OpenCL device.
///
/// # Computing into a matrix
///
/// The everyday operations are trait methods, in scope with
/// `use clfuse::prelude::*`:
/// - `d.assign(expr)?` computes any expression into `d` with one fused
///   kernel; `add_assign`, `sub_assign`, `mul_assign` are the compound
///   forms (`clfuse_ops::AssignExt`).
/// - `expr.eval()?` computes an expression into a new matrix
///   (`clfuse_ops::ExprMethods::eval`).
/// - `fuse((output(&d, e1), output(&s, colwise_sum(e2))))?` computes several
///   outputs in one kernel.
/// - Arithmetic operators (`&a + &b`, `2.0 * &a`, `&a * &b` for the GEMM)
///   build expressions; nothing runs until one of the above.
/// - Host data: [`from_slice`](Self::from_slice), [`to_vec`](Self::to_vec),
///   and `TryFrom` conversions with nalgebra, faer and ndarray matrices
///   (cargo features `nalgebra`, `faer`, `ndarray`).
///
/// Storage is column-major. Every method takes `&self`: like an OpenCL buffer
/// handle, a `MatrixCl` may be read and written by many commands, and the
/// event lists order them. That is also what lets `a.assign(&a + &b)` compile.
///
/// # Ordering across threads
///
/// A `MatrixCl` may be shared between threads (`Arc<MatrixCl<T>>`). Every
/// command on it — a kernel, a fill, a copy, a write from or read to the
/// host — is ordered after the commands already enqueued on it, whichever
/// thread enqueued them: a command that reads the matrix waits for every
/// earlier write; one that writes it waits for every earlier read and
/// write. So a read-back returns the contents after some whole sequence of
/// writes, never a mix of two. (Gathering a command's wait list, enqueueing
/// it and recording its event happen under one process-wide lock, held for
/// the enqueue only, never while waiting on the device.) Which of two
/// threads' commands comes first is up to the threads.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let m = MatrixCl::from_slice(2, 3, &[1.0f32, 2., 3., 4., 5., 6.])?;
/// assert_eq!((m.rows(), m.cols()), (2, 3));
/// assert_eq!(m.to_vec()?, vec![1.0, 2., 3., 4., 5., 6.]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub struct MatrixCl<T: ClType> {
    storage: Arc<Storage<T>>,
    rows: usize,
    cols: usize,
    view: AtomicI32,
}

/// The device buffer behind one or more handles ([`MatrixCl::share`]): the
/// buffer, its event lists and identity live as long as any handle does.
struct Storage<T: ClType> {
    buffer: Option<Buffer<T>>,
    events: EventLists,
    id: u64,
    /// The device the buffer lives on (`None` for a matrix without one).
    home: Option<&'static Runtime>,
    /// The buffer's size class in the pool.
    bytes: usize,
}

impl<T: ClType> std::fmt::Debug for MatrixCl<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixCl")
            .field("type", &T::CL_NAME)
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("view", &self.view())
            .finish()
    }
}

/// Largest element count: generated kernels index with 32-bit `int`.
pub const MAX_ELEMENTS: usize = i32::MAX as usize;

fn checked_len(function: &'static str, rows: usize, cols: usize) -> Result<usize> {
    match rows.checked_mul(cols) {
        Some(n) if n <= MAX_ELEMENTS => Ok(n),
        _ => Err(Error::InvalidArgument {
            function,
            argument: "rows * cols",
            reason: format!("{rows} x {cols} exceeds the limit of {MAX_ELEMENTS} elements"),
        }),
    }
}

impl<T: ClType> MatrixCl<T> {
    fn with_buffer(
        rows: usize,
        cols: usize,
        buffer: Option<(Buffer<T>, usize, EventLists)>,
        home: Option<&'static Runtime>,
    ) -> Self {
        let (buffer, bytes, events) = match buffer {
            Some((buffer, bytes, events)) => (Some(buffer), bytes, events),
            None => (None, 0, EventLists::default()),
        };
        MatrixCl {
            storage: Arc::new(Storage {
                buffer,
                events,
                id: next_buffer_id(),
                home,
                bytes,
            }),
            rows,
            cols,
            view: AtomicI32::new(View::Entire.bits()),
        }
    }

    fn buffer(&self) -> Option<&Buffer<T>> {
        self.storage.buffer.as_ref()
    }

    fn home(&self) -> Option<&'static Runtime> {
        self.storage.home
    }

    /// The runtime of the device the matrix lives on (for a matrix without
    /// a buffer, the calling thread's).
    pub fn runtime(&self) -> Result<&'static Runtime> {
        match self.home() {
            Some(runtime) => Ok(runtime),
            None => Runtime::get(),
        }
    }

    /// The device the matrix lives on (`None` for one without a buffer,
    /// which any device may use).
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(1, 1, &[1.0f32])?;
    /// assert_eq!(m.device(), Some(clfuse_core::Device::current()?));
    /// assert_eq!(clfuse_core::MatrixCl::<f32>::empty().device(), None);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn device(&self) -> Option<Device> {
        self.home().map(Device::of)
    }

    /// A copy of the matrix on `device` (through the host when the devices
    /// differ; a device-side copy when they are the same). The view is kept.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(2, 1, &[1, 2])?;
    /// let same = m.to_device(clfuse_core::Device::current()?)?;
    /// assert_eq!(same.to_vec()?, vec![1, 2]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn to_device(&self, device: Device) -> Result<Self> {
        if self.device() == Some(device) {
            return device.run(|| self.try_clone());
        }
        let host = self.to_vec()?;
        let copy = device.run(|| Self::from_slice(self.rows, self.cols, &host))?;
        copy.set_view(self.view());
        Ok(copy)
    }

    /// A `0 x 0` matrix. It owns no buffer, so making it needs no device
    /// and cannot fail.
    ///
    /// ```
    /// assert!(clfuse_core::MatrixCl::<f64>::empty().is_empty());
    /// ```
    pub fn empty() -> Self {
        Self::with_buffer(0, 0, None, None)
    }

    /// An uninitialised matrix (contents unspecified); used for outputs.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::<f32>::uninitialized(4, 0)?;
    /// assert!(m.is_empty());
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn uninitialized(rows: usize, cols: usize) -> Result<Self> {
        let len = checked_len("MatrixCl::uninitialized", rows, cols)?;
        let rt = Runtime::get()?;
        rt.require::<T>("MatrixCl::uninitialized")?;
        if len == 0 {
            return Ok(Self::with_buffer(rows, cols, None, Some(rt)));
        }
        let class = buffer_pool::size_class(len * std::mem::size_of::<T>());
        if let Some((mem, events)) = buffer_pool::take(rt.slot(), class) {
            // The pool passes its one reference to `mem`, a live buffer of
            // `class` bytes; the new `Buffer` releases it on drop.
            let buffer = Buffer::<T>::new(mem);
            return Ok(Self::with_buffer(
                rows,
                cols,
                Some((buffer, class, events)),
                Some(rt),
            ));
        }
        // A small matrix is a sub-buffer of a larger one (`arena`).
        if let Some(mem) = crate::arena::carve(rt, class) {
            // `carve` passes its one reference to `mem`, a sub-buffer of
            // `class` bytes; the new `Buffer` releases it on drop.
            let buffer = Buffer::<T>::new(mem);
            return Ok(Self::with_buffer(
                rows,
                cols,
                Some((buffer, class, EventLists::default())),
                Some(rt),
            ));
        }
        let create = || {
            // SAFETY: no host pointer is passed; the size is non-zero and bounded.
            unsafe {
                Buffer::<T>::create(
                    rt.context(),
                    CL_MEM_READ_WRITE,
                    class / std::mem::size_of::<T>(),
                    std::ptr::null_mut(),
                )
            }
        };
        // Out of memory: give the pool's buffers back and try once more.
        let buffer = match create() {
            Ok(buffer) => buffer,
            Err(_) if buffer_pool::release_cached_buffers() > 0 => {
                create().call("clCreateBuffer")?
            }
            Err(e) => return Err(e).call("clCreateBuffer"),
        };
        Ok(Self::with_buffer(
            rows,
            cols,
            Some((buffer, class, EventLists::default())),
            Some(rt),
        ))
    }

    /// Copies a column-major host slice to the device.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(2, 2, &[1, 2, 3, 4])?;
    /// assert_eq!(m.to_vec()?, vec![1, 2, 3, 4]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn from_slice(rows: usize, cols: usize, data: &[T]) -> Result<Self> {
        let len = checked_len("MatrixCl::from_slice", rows, cols)?;
        if data.len() != len {
            return Err(Error::SizeMismatch {
                function: "MatrixCl::from_slice",
                argument: "data",
                expected: len,
                actual: data.len(),
            });
        }
        let m = Self::uninitialized(rows, cols)?;
        match data {
            // One element (a scalar parameter, a flag): a fill is queued
            // without waiting for the device, where a write would wait.
            [value] => m.fill(*value)?,
            _ => m.write(data)?,
        }
        Ok(m)
    }

    /// A matrix with every element equal to `value`.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::constant(2, 2, 7.5f32)?;
    /// assert_eq!(m.to_vec()?, vec![7.5; 4]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn constant(rows: usize, cols: usize, value: T) -> Result<Self> {
        let m = Self::uninitialized(rows, cols)?;
        m.fill(value)?;
        Ok(m)
    }

    /// A matrix of zeros.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::<i32>::zeros(3, 1)?;
    /// assert_eq!(m.to_vec()?, vec![0, 0, 0]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn zeros(rows: usize, cols: usize) -> Result<Self> {
        Self::constant(rows, cols, T::default())
    }

    /// Sets every element to `value` on the device (after pending reads and writes).
    pub fn fill(&self, value: T) -> Result<()> {
        self.fill_labelled(value, "fill")
    }

    /// [`fill`](Self::fill), named `label` in a profile's timeline.
    pub(crate) fn fill_labelled(&self, value: T, label: &str) -> Result<()> {
        let Some(buffer) = self.buffer() else {
            return Ok(());
        };
        // A fill that joins the thread's sweep is recorded as the sweep's
        // member it is (a replay launches the sweep whole).
        if crate::small_writes::fill_joined(
            KernelArg::buffer(self, Access::Write),
            self.len(),
            value,
            self.runtime()?,
        )? {
            return Ok(());
        }
        crate::recorder::command(
            false,
            |notes| {
                notes.mix(("fill", value.to_f64().to_bits(), self.len()));
                notes.buffer(self.storage.id, Access::Write);
                let (again, label) = (self.share(), label.to_string());
                crate::recorder::Command::new(move || {
                    again.fill_labelled(value, &label).map(|()| None)
                })
            },
            || self.fill_now(buffer, value, label),
        )
    }

    /// [`fill_labelled`](Self::fill_labelled) of a matrix with a buffer by
    /// a fill command, not recorded.
    fn fill_now(&self, buffer: &Buffer<T>, value: T, label: &str) -> Result<()> {
        let rt = self.runtime()?;
        let _ordering = rt.ordered(&[(self.storage.id, Access::Write)])?;
        let mut wait = Vec::new();
        self.storage.events.wait_list_for_write(&mut wait);
        let pattern = [value];
        let size = self.len() * std::mem::size_of::<T>();
        // SAFETY: the buffer is live and `size` bytes long; the pattern is
        // copied by the call before it returns.
        let event = unsafe {
            rt.queue().enqueue_fill_buffer(
                &mut buffer_alias(buffer),
                &pattern,
                0,
                size,
                &raw_handles(&wait),
            )
        }
        .call("clEnqueueFillBuffer")?;
        let event = ClEvent::new(event);
        crate::profile::record_transfer(label, &event);
        self.storage.events.add_write(event);
        Ok(())
    }

    /// Overwrites the contents with a column-major host slice (blocking).
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::SizeMismatch {
                function: "MatrixCl::write",
                argument: "data",
                expected: self.len(),
                actual: data.len(),
            });
        }
        let Some(buffer) = self.buffer() else {
            return Ok(());
        };
        crate::recorder::command(
            false,
            |notes| {
                notes.mix("write");
                for v in data {
                    notes.mix(v.to_f64().to_bits());
                }
                notes.buffer(self.storage.id, Access::Write);
                let (again, data) = (self.share(), data.to_vec());
                crate::recorder::Command::new(move || again.write(&data).map(|()| None))
            },
            || self.write_now(buffer, data),
        )
    }

    /// [`write`](Self::write) of a matrix with a buffer, not recorded.
    fn write_now(&self, buffer: &Buffer<T>, data: &[T]) -> Result<()> {
        self.host_copy("write", Access::Write, |queue, wait| {
            // SAFETY: `data`, whose length matches the buffer, stays borrowed
            // until `host_copy` has seen the copy end.
            unsafe {
                queue.enqueue_write_buffer(
                    &mut buffer_alias(buffer),
                    CL_NON_BLOCKING,
                    0,
                    data,
                    wait,
                )
            }
            .call("clEnqueueWriteBuffer")
        })
    }

    /// Overwrites the contents with a column-major host slice without
    /// waiting for the device where it can: up to 1024 elements travel as
    /// the arguments of small kernels, sixteen to a vector argument, copied
    /// when they are queued (and on GPUs joining the thread's sweep of small
    /// launches), so the call returns at once. A sampler writing its position each call thus saves
    /// a round trip. A longer slice is written as by [`write`](Self::write).
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::<f64>::zeros(3, 1)?;
    /// m.write_queued(&[1.0, 2.0, 3.0])?;
    /// assert_eq!(m.to_vec()?, vec![1.0, 2.0, 3.0]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn write_queued(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::SizeMismatch {
                function: "MatrixCl::write_queued",
                argument: "data",
                expected: self.len(),
                actual: data.len(),
            });
        }
        if self.buffer().is_none() {
            return Ok(());
        }
        if crate::small_writes::write_as_arguments(
            KernelArg::buffer(self, Access::Write),
            data,
            self.runtime()?,
        )? {
            return Ok(());
        }
        self.write(data)
    }

    /// Copies the matrix to the host, column-major (waits for pending writes).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len()];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Copies the matrix into `out` (column-major, `rows * cols` long).
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::SizeMismatch {
                function: "MatrixCl::read_into",
                argument: "out",
                expected: self.len(),
                actual: out.len(),
            });
        }
        let Some(buffer) = self.buffer() else {
            return Ok(());
        };
        crate::recorder::command(
            true,
            |notes| self.read_again(notes),
            || self.read_now(buffer, out),
        )
    }

    /// Notes a read of this matrix to a recording; the command reads it
    /// again into a new `Vec<T>`.
    fn read_again(&self, notes: &mut crate::recorder::Notes<'_>) -> crate::recorder::Command {
        notes.mix(("read", self.len()));
        notes.buffer(self.storage.id, Access::Read);
        let again = self.share();
        crate::recorder::Command::new(move || {
            // On the main queue, as a read waited for at once is (see `read_now`).
            let pending = again.queue_read(None, true)?;
            Ok(Some(Box::new(move || {
                Ok(Box::new(pending.wait()?) as crate::ReadBack)
            })))
        })
    }

    /// [`read_into`](Self::read_into) of a matrix with a buffer, not recorded.
    fn read_now(&self, buffer: &Buffer<T>, out: &mut [T]) -> Result<()> {
        if std::mem::size_of_val(out) <= crate::pinned::MAX_BYTES {
            // Small: through page-locked memory, which some drivers (NVIDIA)
            // complete sooner than a read into pageable memory.
            // Waited for at once: on the main queue, behind the commands it
            // waits for anyway (a transfer queue would add a marker, two
            // flushes and a wait across queues to every such read).
            out.copy_from_slice(&self.queue_read(None, true)?.wait()?);
            return Ok(());
        }
        self.host_copy("read", Access::Read, |queue, wait| {
            // SAFETY: `out`, whose length matches the buffer, stays borrowed
            // until `host_copy` has seen the copy end.
            unsafe { queue.enqueue_read_buffer(buffer, CL_NON_BLOCKING, 0, out, wait) }
                .call("clEnqueueReadBuffer")
        })
    }

    /// Enqueues a copy between host memory and this matrix (`enqueue`, given
    /// the queue and the wait list) under the ordering lock, records it as a
    /// read or a write of the matrix, then waits for it outside the lock:
    /// the host memory the copy uses stays borrowed for the whole call.
    /// Should the wait fail, the queue is drained before returning, so that
    /// the device no longer touches memory the caller may free.
    fn host_copy(
        &self,
        label: &str,
        access: Access,
        enqueue: impl FnOnce(
            &opencl3::command_queue::CommandQueue,
            &[opencl3::types::cl_event],
        ) -> Result<opencl3::event::Event>,
    ) -> Result<()> {
        let rt = self.runtime()?;
        let event = {
            let _ordering = rt.ordered(&[(self.storage.id, access)])?;
            let mut wait = Vec::new();
            match access {
                Access::Read => self.storage.events.wait_list_for_read(&mut wait),
                Access::Write | Access::ReadWrite => {
                    self.storage.events.wait_list_for_write(&mut wait)
                }
            }
            let event = ClEvent::new(enqueue(rt.queue(), &raw_handles(&wait))?);
            crate::profile::record_transfer(label, &event);
            match access {
                Access::Read => self.storage.events.add_read(event.clone()),
                Access::Write | Access::ReadWrite => self.storage.events.add_write(event.clone()),
            }
            event
        };
        let waited = rt
            .queue()
            .flush()
            .call("clFlush")
            .and_then(|()| event.wait());
        if waited.is_err() {
            let _ = rt.finish();
        }
        waited
    }

    /// Queues a copy of the matrix to the host and returns at once; the
    /// [`PendingRead`] waits for it. Reading several small matrices this way
    /// costs one round trip to the device instead of one each.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(1, 2, &[5, 6])?;
    /// assert_eq!(m.read_later()?.wait()?, vec![5, 6]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn read_later(&self) -> Result<PendingRead<T>> {
        crate::recorder::command(
            true,
            |notes| self.read_again(notes),
            || self.queue_read(None, false),
        )
    }

    /// [`read_later`](Self::read_later) as one of the reads of `batch`,
    /// which share the wait for the main queue and the queues' flushes
    /// (see [`ReadBatch`](crate::ReadBatch)); the read is submitted by the
    /// batch's `finish`.
    pub fn read_later_in(&self, batch: &crate::ReadBatch) -> Result<PendingRead<T>> {
        crate::recorder::command(
            true,
            |notes| self.read_again(notes),
            || self.queue_read(Some(batch), false),
        )
    }

    /// Queues the read on the transfer queue when there is one (so that it
    /// overlaps later kernels), or on the main queue when `main` (a read
    /// waited for at once) or without a transfer queue.
    fn queue_read(&self, batch: Option<&crate::ReadBatch>, main: bool) -> Result<PendingRead<T>> {
        let mut data = vec![T::default(); self.len()];
        let Some(buffer) = self.buffer() else {
            return Ok(PendingRead::new(data, None, None));
        };
        let rt = self.runtime()?;
        let _ordering = rt.ordered(&[(self.storage.id, Access::Read)])?;
        let mut wait = Vec::new();
        self.storage.events.wait_list_for_read(&mut wait);
        let batch = batch.filter(|b| b.serves(rt));
        let queue = match rt.transfer_queue().filter(|_| !main) {
            Some(transfer) if let Some(batch) = batch => {
                wait.extend(batch.behind_main_queue(rt)?);
                transfer
            }
            Some(transfer) => {
                if !rt.tracks_events() {
                    // Kernels on the in-order main queue record no events:
                    // the copy waits for a marker behind all of them.
                    // SAFETY: an empty wait list; the marker's event is
                    // released when `wait` drops, after the read is queued.
                    let marker = unsafe { rt.queue().enqueue_marker_with_wait_list(&[]) }
                        .call("clEnqueueMarkerWithWaitList")?;
                    wait.push(ClEvent::new(marker));
                }
                // The copy waits for commands of the main queue: they must
                // be submitted before anything waits for the copy.
                rt.queue().flush().call("clFlush")?;
                transfer
            }
            None => rt.queue(),
        };
        // Into page-locked memory when a slot is free and suitably aligned
        // (see `pinned`), else straight into `data`.
        let slot = match crate::pinned::take(rt, self.len() * std::mem::size_of::<T>()) {
            Some(slot) if slot.ptr().align_offset(std::mem::align_of::<T>()) == 0 => Some(slot),
            Some(slot) => {
                crate::pinned::give(slot);
                None
            }
            None => None,
        };
        let destination: &mut [T] = match &slot {
            // SAFETY: the slot holds at least `len` elements' bytes at an
            // address aligned for `T`, and belongs to this read alone.
            Some(slot) => unsafe {
                std::slice::from_raw_parts_mut(slot.ptr().cast::<T>(), self.len())
            },
            None => &mut data,
        };
        // SAFETY: a non-blocking read into `destination` (the slot's
        // page-locked memory or `data`'s heap block), whose length matches
        // the buffer; the `PendingRead` owns both and waits for the event
        // before handing the data out or freeing them (a leaked
        // `PendingRead` leaks them too, so neither is freed early).
        let event = unsafe {
            queue.enqueue_read_buffer(
                buffer,
                opencl3::types::CL_NON_BLOCKING,
                0,
                destination,
                &raw_handles(&wait),
            )
        }
        .call("clEnqueueReadBuffer")?;
        let event = ClEvent::new(event);
        crate::profile::record_transfer("read", &event);
        if rt.transfer_queue().is_some() && !main {
            // Later commands of the main queue may wait for this copy (a
            // write to the buffer): OpenCL requires the copy's queue to be
            // flushed before another queue's commands wait for its events
            // (a batch's reads once, when it finishes).
            match batch {
                Some(batch) => batch.transfer_queued(),
                None => queue.flush().call("clFlush")?,
            }
        }
        self.storage.events.add_read(event.clone());
        Ok(PendingRead::new(data, slot, Some((rt, event, main))))
    }

    /// The same buffer seen as `rows x cols` (column-major order kept; the
    /// view becomes `Entire`), e.g. a `1 x n` row as an `n x 1` column.
    ///
    /// ```
    /// let row = clfuse_core::MatrixCl::from_slice(1, 3, &[1, 2, 3])?;
    /// let col = row.reshape(3, 1)?;
    /// assert_eq!((col.rows(), col.cols()), (3, 1));
    /// assert!(col.reshape(2, 2).is_err());
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn reshape(mut self, rows: usize, cols: usize) -> Result<Self> {
        if rows.checked_mul(cols) != Some(self.len()) {
            return Err(Error::InvalidArgument {
                function: "MatrixCl::reshape",
                argument: "rows, cols",
                reason: format!(
                    "{rows} x {cols} does not hold the {} elements of a {} x {} matrix",
                    self.len(),
                    self.rows,
                    self.cols
                ),
            });
        }
        self.rows = rows;
        self.cols = cols;
        self.set_view(View::Entire);
        Ok(self)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `rows * cols`.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Whether the matrix has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Which part may be non-zero.
    pub fn view(&self) -> View {
        View::from_bits(self.view.load(Ordering::Relaxed))
    }

    /// Declares which part may be non-zero; elements outside it are treated as zero.
    pub fn set_view(&self, view: View) {
        self.view.store(view.bits(), Ordering::Relaxed);
    }

    /// Builder form of [`set_view`](Self::set_view).
    pub fn with_view(self, view: View) -> Self {
        self.set_view(view);
        self
    }

    /// The pending read/write events of this matrix.
    pub fn events(&self) -> &EventLists {
        &self.storage.events
    }

    /// What owns the buffer, for a launch's argument.
    pub(crate) fn owner(&self) -> &dyn crate::events::BufferOwner {
        &self.storage
    }

    /// A process-unique identity of the underlying buffer (used to detect aliasing).
    pub fn buffer_id(&self) -> u64 {
        self.storage.id
    }

    /// The raw `cl_mem` handle (null for an empty matrix).
    pub fn raw_mem(&self) -> cl_mem {
        self.buffer().map_or(std::ptr::null_mut(), |b| b.get())
    }

    /// Copies a column-major device buffer range of `other` (same shape) into `self`.
    pub fn copy_from(&self, other: &MatrixCl<T>) -> Result<()> {
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return Err(Error::DimensionMismatch {
                operation: "MatrixCl::copy_from".into(),
                lhs: (self.rows, self.cols),
                rhs: (other.rows, other.cols),
            });
        }
        let (Some(dst), Some(src)) = (self.buffer(), other.buffer()) else {
            return Ok(());
        };
        if self.storage.id == other.storage.id {
            return Ok(());
        }
        crate::recorder::command(
            false,
            |notes| {
                notes.mix(("copy", self.len()));
                notes.buffer(other.storage.id, Access::Read);
                notes.buffer(self.storage.id, Access::Write);
                let (again, from) = (self.share(), other.share());
                crate::recorder::Command::new(move || again.copy_from(&from).map(|()| None))
            },
            || self.copy_now(dst, src, other),
        )
    }

    /// [`copy_from`](Self::copy_from) of distinct non-empty buffers, not recorded.
    fn copy_now(&self, dst: &Buffer<T>, src: &Buffer<T>, other: &MatrixCl<T>) -> Result<()> {
        let rt = self.runtime()?;
        let source = other.runtime()?;
        if rt.slot() != source.slot() {
            return Err(Device::mismatch("MatrixCl::copy_from", rt, source));
        }
        let _ordering = rt.ordered(&[
            (self.storage.id, Access::Write),
            (other.storage.id, Access::Read),
        ])?;
        let mut wait = Vec::new();
        self.storage.events.wait_list_for_write(&mut wait);
        other.storage.events.wait_list_for_read(&mut wait);
        // SAFETY: both buffers are live and hold exactly `len` elements.
        let event = unsafe {
            rt.queue().enqueue_copy_buffer(
                src,
                &mut buffer_alias(dst),
                0,
                0,
                self.len() * std::mem::size_of::<T>(),
                &raw_handles(&wait),
            )
        }
        .call("clEnqueueCopyBuffer")?;
        let event = ClEvent::new(event);
        crate::profile::record_transfer("copy", &event);
        other.storage.events.add_read(event.clone());
        self.storage.events.add_write(event);
        self.set_view(other.view());
        Ok(())
    }

    /// Another handle to the same device buffer, with no copy: commands
    /// through either handle are ordered by the one set of event lists, and
    /// the buffer lives until the last handle drops. The handle has its own
    /// shape and view (a copy of this one's). The reverse pass keeps
    /// constants this way and compares [`EventLists::write_count`] to see
    /// whether they were written since.
    ///
    /// ```
    /// let m = clfuse_core::MatrixCl::from_slice(2, 1, &[1, 2])?;
    /// let kept = m.share();
    /// drop(m);
    /// assert_eq!(kept.to_vec()?, vec![1, 2]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn share(&self) -> Self {
        MatrixCl {
            storage: Arc::clone(&self.storage),
            rows: self.rows,
            cols: self.cols,
            view: AtomicI32::new(self.view().bits()),
        }
    }

    /// A device-side copy with its own buffer.
    pub fn try_clone(&self) -> Result<Self> {
        let device = Device::of(self.runtime()?);
        let m = device.run(|| Self::uninitialized(self.rows, self.cols))?;
        m.copy_from(self)?;
        Ok(m)
    }
}

impl<'a> KernelArg<'a> {
    /// A buffer argument for `matrix`.
    ///
    /// ```
    /// use clfuse_core::{Access, KernelArg, MatrixCl};
    /// let m = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
    /// assert!(matches!(KernelArg::buffer(&m, Access::Read), KernelArg::Buffer { .. }));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn buffer<T: ClType>(matrix: &'a MatrixCl<T>, access: Access) -> Self {
        KernelArg::Buffer {
            mem: matrix.raw_mem(),
            id: matrix.buffer_id(),
            home: matrix.device().map(|d| d.runtime()),
            owner: matrix.owner(),
            access,
        }
    }
}

impl<T: ClType> crate::events::BufferOwner for Arc<Storage<T>> {
    fn events(&self) -> &EventLists {
        &self.events
    }

    fn retain(&self) -> Arc<dyn crate::events::BufferOwner> {
        Arc::new(Arc::clone(self))
    }
}

impl<T: ClType> Drop for Storage<T> {
    fn drop(&mut self) {
        // OpenCL keeps the buffer alive for pending commands by itself; this
        // wait is only for PoCL, which must not be busy when the process exits.
        if self.home.is_some_and(Runtime::settles_on_drop) {
            let _ = self.events.wait_for_all();
        }
        if let (Some(buffer), Some(home)) = (self.buffer.take(), self.home) {
            let mem = buffer.get();
            // The pool takes over the buffer's reference (and its pending events).
            std::mem::forget(buffer);
            buffer_pool::give(
                home.slot(),
                mem,
                self.bytes,
                std::mem::take(&mut self.events),
            );
        }
    }
}

/// A second `Buffer` value for the same `cl_mem`, for opencl3 calls that take
/// `&mut Buffer` although the handle is shared; it retains the object so its
/// drop is balanced.
fn buffer_alias<T>(buffer: &Buffer<T>) -> Buffer<T> {
    let mem = buffer.get();
    // SAFETY: `mem` is a live buffer; retaining it balances the release done
    // when the alias drops.
    unsafe {
        let _ = opencl3::memory::retain_mem_object(mem);
        Buffer::new(mem)
    }
}
