//! The kernel's parameters: buffers (declared once each, with their row
//! count and view), scalar and local-memory parameters, shared sub-trees
//! that bind theirs once, and which buffers are read and written where.

use super::{Generator, Index};
use crate::binder::Identity;
use clfuse_core::Access;

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
    /// A parameter its caller named (see [`Generator::global_param`]).
    Named {
        declaration: String,
        name: String,
    },
    /// The grid's `rows` and `cols`, declared here instead of last.
    Grid,
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
        self.mark_uniform(&name);
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
        self.mark_uniform(&name);
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

    /// The gather flags' base name (declared on the kernel's first gather,
    /// written) and the slot of the gather `node` (its address: a node
    /// generated again, at another index or in a replayed shared sub-tree,
    /// keeps its slot), in the order the binder records them.
    pub(crate) fn gather_flags(&mut self, node: usize) -> (String, usize) {
        let base = self.buffer(Identity::GatherFlags, "int", false);
        self.mark_written(Identity::GatherFlags);
        let slot = match self.gathers.iter().position(|&n| n == node) {
            Some(slot) => slot,
            None => {
                self.gathers.push(node);
                self.gathers.len() - 1
            }
        };
        (base, slot)
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

    /// Declares the buffer parameter `name` of `cl_type` elements: read
    /// (`__global const T* restrict name`) or written (`__global T* name`,
    /// without `restrict`: several written parameters may be one buffer,
    /// the adjoint of a variable that a kernel reaches several ways).
    /// Parameters a caller names are for kernels of their own
    /// ([`Generator::named`]).
    pub fn global_param(&mut self, name: &str, cl_type: &'static str, access: Access) {
        self.note_type(cl_type);
        let declaration = match access {
            Access::Read => format!("__global const {cl_type}* restrict {name}"),
            Access::Write | Access::ReadWrite => format!("__global {cl_type}* {name}"),
        };
        self.named_param(declaration, name);
    }

    /// Declares the scalar parameter `cl_type name`.
    pub fn scalar_param(&mut self, name: &str, cl_type: &'static str) {
        self.note_type(cl_type);
        self.named_param(format!("{cl_type} {name}"), name);
    }

    /// Declares the local-memory parameter `__local cl_type* name`.
    pub fn local_array_param(&mut self, name: &str, cl_type: &'static str) {
        self.note_type(cl_type);
        self.named_param(format!("__local {cl_type}* {name}"), name);
    }

    fn named_param(&mut self, declaration: String, name: &str) {
        self.params.push(Param::Named {
            declaration,
            name: name.to_string(),
        });
    }

    /// Declares the grid's `int rows` and `int cols` here, between the
    /// parameters declared before and after, instead of last.
    pub fn grid_params(&mut self) {
        self.params.push(Param::Grid);
    }

    /// The kernel's parameters, each declared and named, with the grid's
    /// `rows` and `cols` last unless [`grid_params`](Self::grid_params)
    /// placed them.
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
                Param::Named { declaration, name } => {
                    params.push((declaration.clone(), name.clone()))
                }
                Param::Grid => grid(&mut params),
            }
        }
        if !self.params.iter().any(|p| matches!(p, Param::Grid)) {
            grid(&mut params);
        }
        params
    }
}

/// The grid's `int rows` and `int cols`, declared and named.
fn grid(params: &mut Vec<(String, String)>) {
    params.push(("int rows".into(), "rows".into()));
    params.push(("int cols".into(), "cols".into()));
}
