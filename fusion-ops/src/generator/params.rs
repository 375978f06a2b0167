//! The kernel's parameters: buffers (declared once each, with their row
//! count and view), scalar and local-memory parameters, shared sub-trees
//! that bind theirs once, and which buffers are read and written where.

use super::{Generator, Index};
use crate::binder::Identity;

/// A parameter of the kernel, in declaration order.
#[derive(Debug)]
pub(super) enum Param {
    Buffer {
        base: String,
        cl_type: &'static str,
        with_view: bool,
        written: bool,
    },
    Value {
        name: String,
        cl_type: &'static str,
    },
    Local {
        name: String,
        cl_type: &'static str,
    },
}

impl Generator {
    /// Declares a scalar kernel parameter and returns its name.
    pub fn value_param(&mut self, cl_type: &'static str) -> String {
        if let Some(name) = self.replays.last_mut().and_then(|r| r.pop_front()) {
            return name;
        }
        self.note_type(cl_type);
        let name = self.fresh();
        self.params.push(Param::Value {
            name: name.clone(),
            cl_type,
        });
        for r in &mut self.recordings {
            r.push(name.clone());
        }
        name
    }

    /// The scalar parameter named by `key`, declared on first use (a
    /// leaf's extra argument, bound with its first occurrence; shared
    /// sub-trees replayed elsewhere find it by its key).
    pub fn keyed_param(&mut self, key: &str, cl_type: &'static str) -> String {
        if let Some((_, name)) = self.keyed_params.iter().find(|(k, _)| k == key) {
            return name.clone();
        }
        self.note_type(cl_type);
        let name = self.fresh();
        self.params.push(Param::Value {
            name: name.clone(),
            cl_type,
        });
        self.keyed_params.push((key.to_string(), name.clone()));
        name
    }

    /// Declares a `__local cl_type*` parameter and returns its name.
    pub fn local_param(&mut self, cl_type: &'static str) -> String {
        if let Some(name) = self.replays.last_mut().and_then(|r| r.pop_front()) {
            return name;
        }
        self.note_type(cl_type);
        let name = format!("{}_local", self.fresh());
        self.params.push(Param::Local {
            name: name.clone(),
            cl_type,
        });
        for r in &mut self.recordings {
            r.push(name.clone());
        }
        name
    }

    /// Generates a shared sub-tree (`identity`) at another index: the first
    /// generation declares its scalar parameters, later ones reuse them, so
    /// the kernel binds each shared value once, as the binder does.
    pub fn shared_subtree(
        &mut self,
        identity: Identity,
        generate: impl FnOnce(&mut Generator) -> String,
    ) -> String {
        let previous = self
            .recorded
            .iter()
            .find(|(id, _)| *id == identity)
            .map(|(_, names)| names.clone());
        match previous {
            Some(names) => {
                self.replays.push(names.into());
                let var = generate(self);
                self.replays.pop();
                var
            }
            None => {
                self.recordings.push(Vec::new());
                let var = generate(self);
                let names = self.recordings.pop().unwrap_or_default();
                self.recorded.push((identity, names));
                var
            }
        }
    }

    /// The parameter base name of buffer `identity`, declaring
    /// `<base>_global`, `<base>_rows` (and `<base>_view`) on first use.
    pub fn buffer(&mut self, identity: Identity, cl_type: &'static str, with_view: bool) -> String {
        if let Some((_, base)) = self.buffers.iter().find(|(id, _)| *id == identity) {
            return base.clone();
        }
        self.note_type(cl_type);
        let base = self.fresh();
        self.params.push(Param::Buffer {
            base: base.clone(),
            cl_type,
            with_view,
            written: false,
        });
        self.buffers.push((identity, base.clone()));
        base
    }

    /// Records that buffer `identity` is read at `at` (for alias detection).
    pub fn note_read(&mut self, identity: Identity, at: &Index) {
        self.reads.push((identity, at.clone()));
    }

    /// Emits `<base>_global[row + <base>_rows * col] = value;` for a buffer
    /// target and records the store.
    pub fn store(&mut self, identity: Identity, cl_type: &'static str, at: &Index, value: &str) {
        let base = self.buffer(identity, cl_type, false);
        for p in &mut self.params {
            if let Param::Buffer {
                base: b, written, ..
            } = p
                && *b == base
            {
                *written = true;
            }
        }
        self.stores.push((identity, at.clone()));
        self.statement(&format!(
            "{base}_global[{} + {base}_rows * {}] = {value};",
            at.i, at.j
        ));
    }

    /// Marks buffer `identity` as written through code the generator did not emit.
    pub fn mark_written(&mut self, identity: Identity) {
        let Some(base) = self
            .buffers
            .iter()
            .find(|(id, _)| *id == identity)
            .map(|(_, b)| b.clone())
        else {
            return;
        };
        for p in &mut self.params {
            if let Param::Buffer {
                base: b, written, ..
            } = p
                && *b == base
            {
                *written = true;
            }
        }
    }

    /// Whether some buffer that is written is also read at an index other
    /// than the one it is written at: then writing in place could overwrite
    /// values other work items still need, and a temporary is required.
    pub fn reads_target_elsewhere(&self) -> bool {
        self.stores.iter().any(|(id, stored_at)| {
            self.reads
                .iter()
                .any(|(rid, read_at)| rid == id && read_at != stored_at)
        })
    }

    /// The kernel's parameters, each declared and named, ending with the
    /// element grid's `rows` and `cols`.
    pub(super) fn parameters(&self) -> Vec<(String, String)> {
        let mut params = Vec::new();
        for p in &self.params {
            match p {
                Param::Buffer {
                    base,
                    cl_type,
                    with_view,
                    written,
                } => {
                    let constness = if *written { "" } else { "const " };
                    params.push((
                        format!("__global {constness}{cl_type}* restrict {base}_global"),
                        format!("{base}_global"),
                    ));
                    params.push((format!("int {base}_rows"), format!("{base}_rows")));
                    if *with_view {
                        params.push((format!("int {base}_view"), format!("{base}_view")));
                    }
                }
                Param::Value { name, cl_type } => {
                    params.push((format!("{cl_type} {name}"), name.clone()))
                }
                Param::Local { name, cl_type } => {
                    params.push((format!("__local {cl_type}* {name}"), name.clone()))
                }
            }
        }
        params.push(("int rows".into(), "rows".into()));
        params.push(("int cols".into(), "cols".into()));
        params
    }
}
