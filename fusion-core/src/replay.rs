//! Device work recorded once and issued again: a sampler's gradient call
//! does the same device work every time, only on other numbers, so after
//! recording it the host need not build it again (no expression binding,
//! no tape, no reverse planning): replaying issues the recorded commands on
//! the same buffers, as `jax.jit` replays a traced function.
//!
//! While [`record`] runs, every command this thread queues (kernel launches,
//! sweep members, fills, writes, copies, reads) is noted with what it needs
//! to be issued again: its kernel, its arguments with their buffers held
//! alive, or the host data it wrote. A recording can be replayed only when
//! its reads come last: a read in between means the host chose what came
//! next from device values, which replaying would not redo.
//!
//! Two recordings of the same work have the same
//! [`signature`](Recording::signature): the commands' kernels, ranges,
//! scalar arguments, written data, and which arguments are the same buffer.
//! A caller compares two before trusting one (the model may do other work
//! on another call).

use crate::error::Result;
use crate::events::Access;
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// What a replayed read gives back: the `Vec<T>` it read.
pub type ReadBack = Box<dyn Any + Send>;

/// A replayed read, queued: waiting for it gives its data.
pub(crate) type QueuedRead = Box<dyn FnOnce() -> Result<ReadBack> + Send>;

/// One recorded command: issues it again; a read returns its queued copy.
pub(crate) type Command = Box<dyn Fn() -> Result<Option<QueuedRead>> + Send>;

#[derive(Default)]
struct Recorder {
    commands: Vec<Command>,
    signature: DefaultHasher,
    /// Buffer ids in order of first use: the signature names a buffer by
    /// its place here, the same from one recording to the next.
    buffers: HashMap<u64, usize>,
    reads: usize,
    /// Why the recording cannot be replayed.
    broken: Option<&'static str>,
}

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// The work of one call, recorded by [`record`].
pub struct Recording {
    commands: Vec<Command>,
    signature: u64,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("commands", &self.commands.len())
            .field("signature", &self.signature)
            .finish()
    }
}

impl Recording {
    /// Identifies the work: two recordings of the same commands on the
    /// same kernels, ranges, scalars and data, with the same arguments
    /// sharing a buffer, have the same signature.
    pub fn signature(&self) -> u64 {
        self.signature
    }

    /// How many commands it holds.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether it holds no command.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Issues the recorded commands again, in order, on the buffers they
    /// used (which they kept alive), and returns what its reads read, in
    /// order. A buffer the recorded commands read is read as it is now:
    /// write new inputs into it first.
    ///
    /// ```
    /// use clfuse_core::*;
    /// let k = compile_kernel("twice", "__kernel void twice(__global const int* x, __global int* y) {
    ///   y[get_global_id(0)] = 2 * x[get_global_id(0)];
    /// }", "", "twice")?;
    /// let x = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
    /// let (first, recording) = record(|| {
    ///     let y = MatrixCl::<i32>::uninitialized(3, 1)?;
    ///     enqueue(&k, &[KernelArg::buffer(&x, Access::Read), KernelArg::buffer(&y, Access::Write)], NdRange::d1(3))?;
    ///     y.to_vec()
    /// })?;
    /// assert_eq!(first, vec![2, 4, 6]);
    /// x.write(&[5, 6, 7])?;
    /// let again = recording.map_err(|why| Error::Unsupported { what: why.into() })?.replay()?;
    /// assert_eq!(again[0].downcast_ref::<Vec<i32>>(), Some(&vec![10, 12, 14]));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn replay(&self) -> Result<Vec<ReadBack>> {
        self.replay_queued()?.wait()
    }

    /// [`replay`](Self::replay) without waiting: the commands and their
    /// reads are queued, and [`QueuedReads::wait`] waits for the reads.
    /// Between the two the host is free to queue other work (another
    /// chain's call), which the device runs behind this one's.
    ///
    /// ```
    /// use clfuse_core::*;
    /// let k = compile_kernel("plus1", "__kernel void plus1(__global int* x) {
    ///   x[get_global_id(0)] += 1;
    /// }", "", "plus1")?;
    /// let (x, y) = (MatrixCl::from_slice(2, 1, &[1, 2])?, MatrixCl::from_slice(1, 1, &[7])?);
    /// let step = |m: &MatrixCl<i32>| -> Result<Recording> {
    ///     let (_, recording) = record(|| {
    ///         enqueue(&k, &[KernelArg::buffer(m, Access::ReadWrite)], NdRange::d1(m.len()))?;
    ///         m.to_vec()
    ///     })?;
    ///     recording.map_err(|why| Error::Unsupported { what: why.into() })
    /// };
    /// let (for_x, for_y) = (step(&x)?, step(&y)?);
    /// // Both queued before either is waited for.
    /// let (queued_x, queued_y) = (for_x.replay_queued()?, for_y.replay_queued()?);
    /// assert_eq!(queued_y.wait()?[0].downcast_ref::<Vec<i32>>(), Some(&vec![9]));
    /// assert_eq!(queued_x.wait()?[0].downcast_ref::<Vec<i32>>(), Some(&vec![3, 4]));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn replay_queued(&self) -> Result<QueuedReads> {
        let mut reads = Vec::new();
        for command in &self.commands {
            if let Some(read) = command()? {
                reads.push(read);
            }
        }
        Ok(QueuedReads(reads))
    }
}

/// The reads of a replay queued by [`Recording::replay_queued`]; dropped
/// unwaited, each still waits for its copy (the host memory it fills).
pub struct QueuedReads(Vec<QueuedRead>);

impl std::fmt::Debug for QueuedReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueuedReads({})", self.0.len())
    }
}

impl QueuedReads {
    /// Waits for the reads and returns what they read, in order.
    pub fn wait(self) -> Result<Vec<ReadBack>> {
        self.0.into_iter().map(|read| read()).collect()
    }
}

/// Runs `f`, recording the device commands this thread queues meanwhile.
/// Returns `f`'s result and the recording, or why it cannot be replayed
/// (a read before a later command, a failed command, a recording already
/// running on this thread).
pub fn record<R>(
    f: impl FnOnce() -> Result<R>,
) -> Result<(R, std::result::Result<Recording, &'static str>)> {
    let nested = RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_some() {
            return true;
        }
        *r = Some(Recorder::default());
        false
    });
    if nested {
        return Ok((f()?, Err("a recording is already running on this thread")));
    }
    // Taken back even when `f` fails or panics.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            RECORDER.with(|r| r.borrow_mut().take());
        }
    }
    let stop = Stop;
    let value = f();
    let recorder = RECORDER.with(|r| r.borrow_mut().take());
    drop(stop);
    let value = value?;
    let recording = match recorder {
        None => Err("the recording was lost (a command panicked)"),
        Some(Recorder {
            broken: Some(why), ..
        }) => Err(why),
        Some(recorder) => Ok(Recording {
            commands: recorder.commands,
            signature: recorder.signature.finish(),
        }),
    };
    Ok((value, recording))
}

/// What a command tells the recording about itself.
pub(crate) struct Notes<'r> {
    recorder: &'r mut Recorder,
}

impl Notes<'_> {
    /// Adds `value` to the signature.
    pub(crate) fn mix(&mut self, value: impl Hash) {
        value.hash(&mut self.recorder.signature);
    }

    /// Adds a buffer, named by its place among the recording's buffers.
    pub(crate) fn buffer(&mut self, id: u64, access: Access) {
        let next = self.recorder.buffers.len();
        let place = *self.recorder.buffers.entry(id).or_insert(next);
        self.mix((place, access as u8));
    }
}

/// Runs `run`, a command (or a few that make one); when this thread is
/// recording and it succeeds, `note` describes it to the recording and
/// returns how to issue it again. Commands `run` queues itself are not
/// noted again. `read`: the command reads to the host.
pub(crate) fn command<R>(
    read: bool,
    note: impl FnOnce(&mut Notes<'_>) -> Command,
    run: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let Some(mut recorder) = RECORDER.with(|r| r.borrow_mut().take()) else {
        return run();
    };
    // Not recording while `run` runs: what it queues is this one command.
    // (Should it panic, the recording is lost and `record` says so.)
    let outcome = run();
    match &outcome {
        Err(_) => recorder.broken = Some("a command failed while recording"),
        Ok(_) => {
            if recorder.reads > 0 && !read {
                recorder.broken = Some("a read back to the host came before a later command");
            }
            if read {
                recorder.reads += 1;
            }
            recorder.mix_kind(read);
            let command = note(&mut Notes {
                recorder: &mut recorder,
            });
            recorder.commands.push(command);
        }
    }
    RECORDER.with(|r| *r.borrow_mut() = Some(recorder));
    outcome
}

impl Recorder {
    fn mix_kind(&mut self, read: bool) {
        (self.commands.len(), read).hash(&mut self.signature);
    }
}
