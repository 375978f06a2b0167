//! Collecting the kernel arguments of an expression, and which leaves alias.

use clfuse_core::{Access, ClType, KernelArg, MatrixCl};

/// The buffer bound for an empty matrix (an `n x 0` design, say): the
/// current device's placeholder (see `Runtime::placeholder`). A kernel never
/// touches it: the matrix has no elements to read or write.
fn placeholder() -> Option<&'static MatrixCl<i32>> {
    clfuse_core::Runtime::get()
        .and_then(clfuse_core::Runtime::placeholder)
        .ok()
}

/// What identifies a leaf: a device buffer or a shared sub-expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Identity {
    /// A `MatrixCl` buffer, by its process-unique id.
    Buffer(u64),
    /// A sub-expression shared by reference, by its address.
    Shared(usize),
    /// The local-memory tile of a buffer (row-block kernels), by buffer id.
    Tile(u64),
    /// The kernel's gather flags: where its gathers (`indexing`) report an
    /// index out of range (see `crate::gather_checks`).
    GatherFlags,
}

/// Walks an expression collecting kernel arguments in parameter order.
///
/// Every leaf reports its identity; the sequence of "first seen at" indices is
/// the alias pattern, the part of the cache key that tells `a + a` from `a + b`.
#[derive(Debug, Default)]
pub struct Binder<'a> {
    args: Vec<KernelArg<'a>>,
    seen: Vec<(Identity, usize)>,
    pattern: Vec<u32>,
    /// A leaf found without its value (a product `evaluate_leaves` did not reach).
    unevaluated: Option<&'static str>,
    /// What layers above the engine attach to the leaves they bind, in
    /// binding order (reverse mode: the variables read); never interpreted here.
    annotations: Vec<std::rc::Rc<dyn std::any::Any>>,
    /// The constant matrices of products read inline by a scalar step,
    /// each once, in binding order, by buffer id (reverse mode's inline products).
    inline_products: Vec<(u64, &'a dyn std::any::Any)>,
    /// The product node whose element a GEMM hands to the kernel (epilogue
    /// fusion, see [`for_epilogue`](Self::for_epilogue)).
    epilogue_product: Option<usize>,
    /// The gathers whose indices the kernel checks, by node address, in
    /// binding order (the slot of each in the gather flags).
    gathers: Vec<(usize, &'a dyn GatherCheck)>,
    /// Where the gather flags' buffer and row count go among `args`, until
    /// the launch attaches them.
    gather_flags_arg: Option<usize>,
}

impl<'a> Binder<'a> {
    /// An empty binder.
    pub fn new() -> Self {
        Binder {
            args: Vec::with_capacity(16),
            seen: Vec::with_capacity(8),
            pattern: Vec::with_capacity(8),
            unevaluated: None,
            annotations: Vec::new(),
            inline_products: Vec::new(),
            epilogue_product: None,
            gathers: Vec::new(),
            gather_flags_arg: None,
        }
    }

    /// An empty binder for the epilogue of the GEMM computing the product
    /// node `node` (see `crate::epilogue`): that node binds nothing.
    pub fn for_epilogue(node: usize) -> Self {
        Binder {
            epilogue_product: Some(node),
            ..Binder::new()
        }
    }

    /// Whether `node` is the product whose element the GEMM hands to the
    /// epilogue being bound; if so, its place is recorded in the alias
    /// pattern (the kernel cache key: which product the epilogue takes
    /// decides the code), and it binds nothing else.
    pub fn bind_epilogue_product(&mut self, node: usize) -> bool {
        let takes = self.epilogue_product == Some(node);
        if takes {
            self.structure(EPILOGUE_PRODUCT);
        }
        takes
    }

    /// Records the constant matrix `x` of a product `x · v` read inline by
    /// a scalar step (on its first use).
    pub fn inline_product<T: ClType>(&mut self, x: &'a MatrixCl<T>) {
        let id = x.buffer_id();
        if self.inline_products.iter().all(|(seen, _)| *seen != id) {
            self.inline_products.push((id, x));
        }
    }

    /// The matrices of products read inline, by buffer id, in binding order.
    pub fn inline_products(&self) -> &[(u64, &'a dyn std::any::Any)] {
        &self.inline_products
    }

    /// Attaches `annotation` to the leaf being bound, for the layer above
    /// that asked for it (reverse mode lists the variables a kernel reads).
    pub fn annotate(&mut self, annotation: std::rc::Rc<dyn std::any::Any>) {
        self.annotations.push(annotation);
    }

    /// The annotations attached, in binding order.
    pub fn annotations(&self) -> &[std::rc::Rc<dyn std::any::Any>] {
        &self.annotations
    }

    /// Records a leaf; returns `true` the first time `identity` is seen (the
    /// caller then binds its arguments).
    pub fn first_use(&mut self, identity: Identity) -> bool {
        match self.seen.iter().position(|(id, _)| *id == identity) {
            Some(index) => {
                self.pattern.push(index as u32);
                false
            }
            None => {
                self.pattern.push(self.seen.len() as u32);
                self.seen.push((identity, self.args.len()));
                true
            }
        }
    }

    /// Whether `identity` was recorded already.
    pub fn seen(&self, identity: Identity) -> bool {
        self.seen.iter().any(|(id, _)| *id == identity)
    }

    /// Whether `identity` was recorded more than once.
    pub fn bound_again(&self, identity: Identity) -> bool {
        self.seen
            .iter()
            .position(|(id, _)| *id == identity)
            .is_some_and(|index| self.pattern.iter().filter(|&&p| p == index as u32).count() > 1)
    }

    /// Binds a matrix leaf: its buffer, row count and view on first use; on
    /// later uses only widens the buffer's access (a read buffer also written).
    pub fn matrix<T: ClType>(&mut self, m: &'a MatrixCl<T>, access: Access, with_view: bool) {
        let identity = Identity::Buffer(m.buffer_id());
        if self.first_use(identity) {
            let mut arg = KernelArg::buffer(m, access);
            if m.is_empty()
                && let (KernelArg::Buffer { mem, id, home, .. }, Some(placeholder)) =
                    (&mut arg, placeholder())
            {
                *mem = placeholder.raw_mem();
                *id = placeholder.buffer_id();
                *home = placeholder.device().map(|d| d.runtime());
            }
            self.args.push(arg);
            self.args.push(KernelArg::Int(m.rows() as i32));
            if with_view {
                self.args.push(KernelArg::Int(m.view().bits()));
            }
            return;
        }
        let first_arg = self
            .seen
            .iter()
            .find(|(id, _)| *id == identity)
            .map(|(_, arg)| *arg);
        if let Some(KernelArg::Buffer {
            access: existing, ..
        }) = first_arg.and_then(|i| self.args.get_mut(i))
            && *existing != access
        {
            *existing = Access::ReadWrite;
        }
    }

    /// Records structure that the operation's type does not show (for
    /// operations whose shape is decided at run time): it becomes part of the
    /// cache key, so differently shaped trees never share a kernel.
    pub fn structure(&mut self, code: u32) {
        self.pattern.push(0x8000_0000 | code);
    }

    /// Binds a scalar value.
    pub fn scalar<T: ClType>(&mut self, value: T) {
        self.args.push(scalar_arg(value));
    }

    /// Binds `__local` memory of `bytes` bytes.
    pub fn local(&mut self, bytes: usize) {
        self.args.push(KernelArg::Local(bytes));
    }

    /// Binds an `int`.
    pub fn int(&mut self, value: i32) {
        self.args.push(KernelArg::Int(value));
    }

    /// Records the gather `node` (its address), whose indices the kernel
    /// checks: on the kernel's first gather, the gather flags' parameters
    /// are bound here (their buffer comes later, from
    /// [`attach_gather_flags`](Self::attach_gather_flags)); each gather
    /// then records its slot, which is part of the cache key (the same
    /// node reached twice uses one slot, as the generator gives it).
    pub(crate) fn gather(&mut self, node: usize, check: &'a dyn GatherCheck) {
        if self.first_use(Identity::GatherFlags) {
            self.gather_flags_arg = Some(self.args.len());
            self.args.push(KernelArg::Int(0));
            self.args.push(KernelArg::Int(0));
        }
        let slot = match self.gathers.iter().position(|(n, _)| *n == node) {
            Some(slot) => slot,
            None => {
                self.gathers.push((node, check));
                self.gathers.len() - 1
            }
        };
        self.structure(slot as u32);
    }

    /// The gathers recorded, in slot order.
    pub(crate) fn gathers(&self) -> Vec<&'a dyn GatherCheck> {
        self.gathers.iter().map(|(_, check)| *check).collect()
    }

    /// Binds `flags` (two per gather) where the first gather left their place.
    pub(crate) fn attach_gather_flags(&mut self, flags: &'a MatrixCl<i32>) {
        if let Some(k) = self.gather_flags_arg.take()
            && k + 1 < self.args.len()
        {
            self.args[k] = KernelArg::buffer(flags, Access::ReadWrite);
            self.args[k + 1] = KernelArg::Int(flags.rows() as i32);
        }
    }

    /// The alias pattern so far.
    pub fn pattern(&self) -> &[u32] {
        &self.pattern
    }

    /// The arguments and the alias pattern.
    /// Records a non-fusable leaf whose value was never computed: an
    /// operation that does not forward [`Operation::evaluate_leaves`](crate::Operation::evaluate_leaves)
    /// to its operands. [`finish`](Self::finish) then fails instead of
    /// launching a kernel without that argument.
    pub fn unevaluated(&mut self, leaf: &'static str) {
        self.unevaluated.get_or_insert(leaf);
    }

    /// The arguments in parameter order and the alias pattern.
    pub fn finish(self) -> clfuse_core::Result<(Vec<KernelArg<'a>>, Vec<u32>)> {
        if self.gather_flags_arg.is_some() {
            return Err(clfuse_core::Error::InvalidArgument {
                function: "assign",
                argument: "expr",
                reason: "internal: a kernel with gathers was launched without their flags".into(),
            });
        }
        if let Some(leaf) = self.unevaluated {
            return Err(clfuse_core::Error::InvalidArgument {
                function: "assign",
                argument: "expr",
                reason: format!(
                    "internal: a `{leaf}` leaf was not evaluated before binding (an operation does not forward `evaluate_leaves`)"
                ),
            });
        }
        Ok((self.args, self.pattern))
    }
}

/// The structure code marking the product that a GEMM's epilogue takes.
const EPILOGUE_PRODUCT: u32 = 0xE916_0001;

/// The kernel argument carrying `value` with its C type.
pub fn scalar_arg<'a, T: ClType>(value: T) -> KernelArg<'a> {
    match T::RANK {
        0 => KernelArg::Int(value.to_f64() as i32),
        1 => KernelArg::Float(value.to_f64() as f32),
        _ => KernelArg::Double(value.to_f64()),
    }
}

/// A gather whose indices a kernel checks: names its first bad index.
/// (Recorded by the binder; the checks themselves are in
/// `crate::gather_checks`.)
pub(crate) trait GatherCheck {
    /// The error for the gather's first bad index, first seen at flat
    /// (column-major) position `first` of its result: among its row
    /// indices, or (`column`) among its column indices (whose row index
    /// was in range). Reads the index back to name it.
    fn failure(&self, column: bool, first: i32) -> clfuse_core::Error;
}

impl std::fmt::Debug for dyn GatherCheck + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GatherCheck")
    }
}
