//! The recorder under [`record`](crate::record): while a thread records,
//! every command it queues passes through [`command`], which notes what
//! makes the command the same from call to call (its signature) and how to
//! issue it again. Launches also leave a note a replay may bind (see
//! `replay` and `bound_launch`). The lowest layer of replaying: the
//! commands (launches, sweeps, transfers) use it, and nothing here knows
//! them.

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

/// Issues a recorded command again; a read returns its queued copy.
type Again = Box<dyn Fn() -> Result<Option<QueuedRead>> + Send>;

/// One recorded command: how to issue it again as it was issued, and,
/// for a kernel launch or a sweep's member, the launch itself, which a
/// replay binds to a kernel object of its own (see `bound_launch`).
pub(crate) struct Command {
    again: Again,
    /// What a replay may bind (a `launch::LaunchNote`), when it is a launch.
    launch: Option<Box<dyn Any + Send>>,
}

impl Command {
    /// A command issued again by `again`.
    pub(crate) fn new(again: impl Fn() -> Result<Option<QueuedRead>> + Send + 'static) -> Self {
        Command {
            again: Box::new(again),
            launch: None,
        }
    }

    /// A launch issued again by `again`, bindable as `launch` says.
    pub(crate) fn launch(
        again: impl Fn() -> Result<Option<QueuedRead>> + Send + 'static,
        launch: impl Any + Send,
    ) -> Self {
        Command {
            again: Box::new(again),
            launch: Some(Box::new(launch)),
        }
    }

    /// Issues it again as it was issued.
    pub(crate) fn again(&self) -> Result<Option<QueuedRead>> {
        (self.again)()
    }

    /// What a replay may bind, when it is a launch noted as a `T`.
    pub(crate) fn launch_note<T: Any>(&self) -> Option<&T> {
        self.launch.as_ref()?.downcast_ref()
    }
}

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

/// The commands a recording noted, in order, and its signature.
pub(crate) type Noted = (Vec<Command>, u64);

/// Runs `f`, noting the device commands this thread queues meanwhile
/// (see `replay::record`): `f`'s result and the commands, or why they
/// cannot be replayed.
pub(crate) fn noting<R>(
    f: impl FnOnce() -> Result<R>,
) -> Result<(R, std::result::Result<Noted, &'static str>)> {
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
        Some(recorder) => Ok((recorder.commands, recorder.signature.finish())),
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

/// Whether this thread is recording (see [`record`]).
pub(crate) fn recording() -> bool {
    RECORDER.with(|r| r.borrow().is_some())
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
