//! Building the OpenCL C source of a fused kernel.
//!
//! Operations emit statements computing one element at an [`Index`] (usually
//! `(i, j)`, the work item's position; structural operations pass transformed
//! indices to their operands). The generator names variables (`var1`, ...),
//! declares each distinct buffer's parameters once, remembers values already
//! computed in the current scope, collects device helper functions once each,
//! and assembles the kernel from three parts: before the bounds guard,
//! inside it (the values, then the outputs' side effects), and after it
//! (where reductions combine work-group results); row-block kernels add
//! per-block sections around the body (see [`Section`]).

use crate::binder::Identity;

const IN_VIEW: &str = "\
// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}";

/// Element (`row`, `col`) of buffer `base`, or 0 outside the rows, the first
/// `cols` columns or the buffer's view: how staged blocks and rows fetched
/// ahead are read (every work item runs it, in range or not).
fn guarded_element(base: &str, row: &str, col: &str, cols: &str) -> String {
    format!(
        "({row} < rows && {col} < {cols} && in_view({row}, {col}, {base}_view)) ? {base}_global[{row} + {base}_rows * {col}] : 0"
    )
}

/// `__kernel void name(` with one parameter per line, then `) {`.
pub fn kernel_header(name: &str, params: &[String]) -> String {
    let params: Vec<String> = params.iter().map(|p| format!("    {p}")).collect();
    format!("__kernel void {name}(\n{}) {{\n", params.join(",\n"))
}

/// The position an operation computes: OpenCL C expressions for the row and column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Index {
    /// Row expression.
    pub i: String,
    /// Column expression.
    pub j: String,
}

impl Index {
    /// The work item's own position `(i, j)`.
    pub fn work_item() -> Self {
        Index::new("i", "j")
    }

    /// An index from two expressions.
    pub fn new(i: impl Into<String>, j: impl Into<String>) -> Self {
        Index {
            i: i.into(),
            j: j.into(),
        }
    }
}

/// A position in the kernel's statements; see [`Generator::insertion_point`].
#[derive(Debug, Clone, Copy)]
pub struct InsertionPoint {
    section: usize,
    line: usize,
    indent: usize,
}

/// Where statements go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Before the bounds guard (every work item runs it).
    Before,
    /// Row-block kernels only: at the start of each block of rows (every
    /// work item, no synchronisation after it; staged matrices move here).
    Prologue,
    /// Row-block kernels only: before the body (every work item; work on
    /// the block's rows shared among all of them, then a barrier).
    Prepare,
    /// Inside `if (i < rows && j < cols)`.
    Body,
    /// After the body, inside the guard: the outputs' side effects (stores,
    /// reductions' running values, checks). When several work items share a
    /// row of a row-block kernel (see [`StageLayout`]), each computes the
    /// row's body and only the first of them runs this.
    Outputs,
    /// Row-block kernels only: after the body of each block of rows (every
    /// work item, after a barrier; per-block results are combined here).
    Epilogue,
    /// After the guard (every work item; reductions synchronise here).
    After,
}

/// How a row-block kernel holds a staged matrix: work item `lid` holds row
/// `tile_row = lid % block_rows` of the block, columns `tile_col + tile_col_step * k`
/// for `k < per_item` (`tile_col = lid / block_rows`, `tile_col_step = lsize / block_rows`).
/// Decided per launch and part of the kernel's cache key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StageLayout {
    /// Elements of a row each work item holds in registers.
    pub per_item: usize,
    /// Work items sharing each row (`tile_col_step`, a power of two): when
    /// more than one, their partial row-wise products meet in local memory,
    /// one barrier per block.
    pub team: usize,
    /// Whether the next block is fetched while the current one is used
    /// (twice the registers; hides latency where barriers would expose it).
    pub prefetch: bool,
}

impl StageLayout {
    /// Whether several work items share each row.
    pub fn shares_rows(&self) -> bool {
        self.team > 1
    }

    /// The layout as a number for the kernel cache key (the team size
    /// follows from the work-group size and `block_rows`, which are bound).
    pub fn code(&self) -> u32 {
        (self.per_item as u32) << 2 | u32::from(self.shares_rows()) << 1 | u32::from(self.prefetch)
    }
}

/// A matrix staged block by block in registers, spread over the work-group
/// as its [`StageLayout`] says: work item `lid` holds its elements of the
/// current block in `held[k]`.
#[derive(Debug, Clone)]
pub struct StagedMatrix {
    identity: Identity,
    /// The register array holding this work item's elements of the current block.
    held: String,
    /// The kernel parameter with the matrix's column count.
    pub cols: String,
    /// How the block is spread over the work-group.
    pub layout: StageLayout,
}

impl StagedMatrix {
    /// This work item's `k`-th element of its row of the current block
    /// (an OpenCL C expression; 0 outside the matrix or its view).
    pub fn element(&self, k: &str) -> String {
        format!("{}[{k}]", self.held)
    }
}

#[derive(Debug)]
enum Param {
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

/// The source of a kernel under construction.
#[derive(Debug)]
pub struct Generator {
    params: Vec<Param>,
    sections: [Vec<String>; 7],
    section: Section,
    indent: [usize; 7],
    row_blocks: bool,
    staged: Vec<StagedMatrix>,
    /// Buffers read one block ahead (see [`Generator::prefetched_row_load`]).
    prefetched: Vec<(Identity, String)>,
    helpers: Vec<String>,
    next_var: usize,
    buffers: Vec<(Identity, String)>,
    values: Vec<((Identity, Index), String)>,
    scopes: Vec<usize>,
    reads: Vec<(Identity, Index)>,
    stores: Vec<(Identity, Index)>,
    uses_fp64: bool,
    needs_local_size: bool,
    declared: Vec<String>,
    recordings: Vec<Vec<String>>,
    recorded: Vec<(Identity, Vec<String>)>,
    replays: Vec<std::collections::VecDeque<String>>,
    keyed_params: Vec<(String, String)>,
    /// Values a layer above the engine computes per leaf element (reverse
    /// mode's tangents), scoped like `values`; the engine never reads them.
    memos: Vec<((Identity, Index), std::rc::Rc<dyn std::any::Any>, usize)>,
    epilogue_refused: bool,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

fn section_index(s: Section) -> usize {
    match s {
        Section::Before => 0,
        Section::Prologue => 1,
        Section::Prepare => 2,
        Section::Body => 3,
        Section::Outputs => 4,
        Section::Epilogue => 5,
        Section::After => 6,
    }
}

impl Generator {
    /// An empty kernel.
    pub fn new() -> Self {
        Generator {
            params: Vec::new(),
            sections: Default::default(),
            section: Section::Body,
            indent: [1, 1, 1, 2, 2, 1, 1],
            row_blocks: false,
            staged: Vec::new(),
            prefetched: Vec::new(),
            helpers: Vec::new(),
            next_var: 0,
            buffers: Vec::new(),
            values: Vec::new(),
            scopes: Vec::new(),
            reads: Vec::new(),
            stores: Vec::new(),
            uses_fp64: false,
            needs_local_size: false,
            declared: Vec::new(),
            recordings: Vec::new(),
            recorded: Vec::new(),
            replays: Vec::new(),
            keyed_params: Vec::new(),
            memos: Vec::new(),
            epilogue_refused: false,
        }
    }

    fn note_type(&mut self, cl_type: &str) {
        if cl_type == "double" {
            self.uses_fp64 = true;
        }
    }

    /// Where statements go now.
    pub fn section(&self) -> Section {
        self.section
    }

    /// Sends further statements to `section`.
    pub fn set_section(&mut self, section: Section) {
        self.section = section;
    }

    /// A new variable name.
    pub fn fresh(&mut self) -> String {
        self.next_var += 1;
        format!("var{}", self.next_var)
    }

    /// Whether a variable with this name was declared already.
    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.iter().any(|d| d == name)
    }

    /// Records a variable declaration.
    pub fn mark_declared(&mut self, name: &str) {
        self.declared.push(name.to_string());
    }

    /// Declares `cl_type varN = value;` and returns `varN`.
    pub fn declare(&mut self, cl_type: &'static str, value: &str) -> String {
        self.note_type(cl_type);
        let var = self.fresh();
        self.statement(&format!("{cl_type} {var} = {value};"));
        var
    }

    /// Appends one statement line, indented to the current block (a line
    /// ending in `{` opens a block, one starting with `}` closes it).
    pub fn statement(&mut self, line: &str) {
        let s = section_index(self.section);
        if line.starts_with('}') {
            self.indent[s] = self.indent[s].saturating_sub(1);
        }
        let text = format!("{}{}", "  ".repeat(self.indent[s]), line);
        self.sections[s].push(text);
        if line.ends_with('{') {
            self.indent[s] += 1;
        }
    }

    /// Opens `for (int k = 0; k < count; k++) {`, unrolled: a loop over the
    /// elements each work item holds of a staged row. The caller closes it
    /// with a `}` statement.
    pub fn open_unrolled_loop(&mut self, count: usize) {
        self.statement("#pragma unroll");
        self.statement(&format!("for (int k = 0; k < {count}; k++) {{"));
    }

    /// Opens a scope (a loop or branch body): values computed inside are
    /// forgotten when it closes.
    pub fn open_scope(&mut self) {
        self.scopes.push(self.values.len());
    }

    /// Closes the innermost scope.
    pub fn close_scope(&mut self) {
        if let Some(len) = self.scopes.pop() {
            self.values.truncate(len);
        }
        let depth = self.scopes.len();
        self.memos.retain(|(_, _, d)| *d <= depth);
    }

    /// A value of type `M` remembered in the current scope for `key` at
    /// `at` by [`remember_memo`](Self::remember_memo). Layers above the
    /// engine keep their own per-element results here (reverse mode keeps
    /// a shared sub-expression's tangents), so that they follow the same
    /// scoping as generated values.
    pub fn known_memo<M: Clone + 'static>(&self, key: Identity, at: &Index) -> Option<M> {
        self.memos
            .iter()
            .rev()
            .filter(|((id, idx), _, _)| *id == key && idx == at)
            .find_map(|(_, memo, _)| memo.downcast_ref::<M>().cloned())
    }

    /// Remembers `memo` for `key` at `at` until the current scope closes.
    pub fn remember_memo<M: 'static>(&mut self, key: Identity, at: &Index, memo: M) {
        let depth = self.scopes.len();
        self.memos
            .push(((key, at.clone()), std::rc::Rc::new(memo), depth));
    }

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

    /// Where the next statement of the current section will go: declarations
    /// inserted there later ([`insert_statement`](Self::insert_statement))
    /// come before a branch whose body assigns them.
    pub fn insertion_point(&self) -> InsertionPoint {
        let s = section_index(self.section);
        InsertionPoint {
            section: s,
            line: self.sections[s].len(),
            indent: self.indent[s],
        }
    }

    /// Inserts a statement at `point` and moves `point` past it.
    pub fn insert_statement(&mut self, point: &mut InsertionPoint, line: &str) {
        let text = format!("{}{}", "  ".repeat(point.indent), line);
        self.sections[point.section].insert(point.line, text);
        point.line += 1;
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

    /// A value computed earlier in the current scope for `key` at `at`.
    pub fn known(&self, key: Identity, at: &Index) -> Option<String> {
        self.values
            .iter()
            .rev()
            .find(|((id, idx), _)| *id == key && idx == at)
            .map(|(_, v)| v.clone())
    }

    /// Remembers the variable holding `key`'s value at `at`.
    pub fn remember(&mut self, key: Identity, at: &Index, var: &str) {
        self.values.push(((key, at.clone()), var.to_string()));
    }

    /// Adds a device helper function (emitted once, before the kernel).
    pub fn helper(&mut self, source: String) {
        if !self.helpers.contains(&source) {
            self.helpers.push(source);
        }
    }

    /// Declares that the kernel uses `lid` / `lsize` (local id and size along rows).
    pub fn use_local_ids(&mut self) {
        self.needs_local_size = true;
    }

    /// Switches the kernel to row blocks: each work-group walks blocks of
    /// `block_rows` rows (a kernel argument); per block, every work item runs
    /// the [`Section::Prologue`] and [`Section::Prepare`], row
    /// `i = block + r` is computed (the [`Section::Body`]) by work item
    /// `r` — or, when a staged matrix's rows are shared, by every work item of
    /// the row's team, the first of them running the [`Section::Outputs`] —
    /// and, when there is one, after a barrier every work item runs the
    /// [`Section::Epilogue`]. Outputs that combine the rows of a block
    /// (`transpose_vector_multiply`) need this.
    pub fn use_row_blocks(&mut self) {
        self.needs_local_size = true;
        self.row_blocks = true;
    }

    /// Whether the kernel walks blocks of rows.
    pub fn uses_row_blocks(&self) -> bool {
        self.row_blocks
    }

    /// Stages matrix `identity` (with `cols_param` columns) block by block
    /// in registers spread over the work-group as `layout` says (see
    /// [`StagedMatrix`]): operations that can work on the distributed block
    /// (the row-wise product with a vector, `xᵀ·v`) use it through
    /// [`Generator::staged`], so the matrix leaves global memory once however
    /// many of them read it. Elements outside the matrix or its view are held
    /// as 0. All staged matrices of a kernel share one layout.
    pub fn stage(
        &mut self,
        identity: Identity,
        cl_type: &'static str,
        cols_param: &str,
        layout: StageLayout,
    ) {
        self.use_row_blocks();
        if self.staged(identity).is_some() {
            return;
        }
        let base = self.buffer(identity, cl_type, true);
        // Read at every position: a kernel that also writes it goes through temporaries.
        self.note_read(identity, &Index::new("staged", "staged"));
        let per_item = layout.per_item;
        let (held, next, next_block) = (self.fresh(), self.fresh(), self.fresh());
        let section = self.section;
        let fetch = |g: &mut Generator, into: &str, block: &str| {
            g.open_unrolled_loop(per_item);
            g.statement(&format!("const int row = {block} + tile_row;"));
            g.statement("const int col = tile_col + tile_col_step * k;");
            g.statement(&format!(
                "{into}[k] = {};",
                guarded_element(&base, "row", "col", cols_param)
            ));
            g.statement("}");
        };
        self.set_section(Section::Before);
        if self.staged.is_empty() {
            self.statement("const int tile_row = lid % block_rows;");
            self.statement("const int tile_col = lid / block_rows;");
            self.statement("const int tile_col_step = lsize / block_rows;");
        }
        self.statement(&format!("{cl_type} {held}[{per_item}];"));
        if layout.prefetch {
            self.statement(&format!("{cl_type} {next}[{per_item}];"));
            // The group's first block, element by element: NVIDIA's compiler
            // now and then left a loop here (run once, before the block loop)
            // rolled, which puts the whole array in local memory (the GLM at
            // (1e6, 100) on an H200: 460 µs against 300).
            self.statement("{");
            self.statement("const int row = get_group_id(0) * block_rows + tile_row;");
            self.statement("int col = tile_col;");
            for k in 0..per_item {
                if k > 0 {
                    self.statement("col += tile_col_step;");
                }
                self.statement(&format!(
                    "{next}[{k}] = {};",
                    guarded_element(&base, "row", "col", cols_param)
                ));
            }
            self.statement("}");
            self.set_section(Section::Prologue);
            self.open_unrolled_loop(per_item);
            self.statement(&format!("{held}[k] = {next}[k];"));
            self.statement("}");
            self.statement(&format!(
                "const int {next_block} = block + get_num_groups(0) * block_rows;"
            ));
            fetch(self, &next, &next_block);
        } else {
            self.set_section(Section::Prologue);
            fetch(self, &held, "block");
        }
        self.set_section(section);
        self.staged.push(StagedMatrix {
            identity,
            held,
            cols: cols_param.to_string(),
            layout,
        });
    }

    /// In a row-block kernel whose staged blocks are prefetched, the element
    /// of buffer `base` (declared by [`Generator::buffer`] with its view) at
    /// the work item's own position, fetched one block ahead like the staged
    /// matrix; `None` in other kernels. Read after the block's barrier, such
    /// an element (a GLM's `y`) put a memory round trip on every block's
    /// critical path: the bernoulli GLM at (1e6, 100) took 350 µs on an H200
    /// against 303 µs with `y` fetched ahead.
    pub fn prefetched_row_load(
        &mut self,
        identity: Identity,
        base: &str,
        cl_type: &'static str,
    ) -> Option<String> {
        if !self.staged.iter().any(|s| s.layout.prefetch) {
            return None;
        }
        if let Some((_, var)) = self.prefetched.iter().find(|(id, _)| *id == identity) {
            return Some(var.clone());
        }
        let var = if self.is_declared(base) {
            self.fresh()
        } else {
            base.to_string()
        };
        self.mark_declared(&var);
        let next = format!("{var}_next");
        let fetch = |row: &str| guarded_element(base, row, "j", "cols");
        let section = self.section;
        // The rows fetched, named once for every buffer fetched ahead.
        let first_declaration = !self.is_declared("next_row");
        self.set_section(Section::Before);
        if first_declaration {
            self.statement("const int first_row = get_group_id(0) * block_rows + tile_row;");
        }
        self.statement(&format!("{cl_type} {next} = {};", fetch("first_row")));
        self.set_section(Section::Prologue);
        if first_declaration {
            self.mark_declared("next_row");
            self.statement(
                "const int next_row = block + get_num_groups(0) * block_rows + tile_row;",
            );
        }
        self.statement(&format!("const {cl_type} {var} = {next};"));
        self.statement(&format!("{next} = {};", fetch("next_row")));
        self.set_section(section);
        self.prefetched.push((identity, var.clone()));
        Some(var)
    }

    /// Whether several work items share each row of the kernel's blocks
    /// (a staged layout with `shares_rows`).
    fn shares_rows(&self) -> bool {
        self.staged.iter().any(|s| s.layout.shares_rows())
    }

    /// The staged form of matrix `identity`, when the kernel stages it.
    pub fn staged(&self, identity: Identity) -> Option<StagedMatrix> {
        self.staged.iter().find(|t| t.identity == identity).cloned()
    }

    /// Records that the statements cannot be a GEMM's epilogue (see
    /// [`epilogue_prelude`](Self::epilogue_prelude)): the product was read
    /// at another element than the work item's.
    pub fn refuse_epilogue(&mut self) {
        self.epilogue_refused = true;
    }

    /// Whether any `double` appears.
    pub fn uses_fp64(&self) -> bool {
        self.uses_fp64
    }

    /// The finished kernel `calculate` over `(i, j) < (rows, cols)`: the
    /// signature, then the body of a row-block kernel or of an element-grid one.
    pub fn kernel_source(&self) -> String {
        let mut out = self.signature();
        if self.row_blocks {
            self.row_block_body(&mut out);
        } else {
            self.element_grid_body(&mut out);
        }
        out.push_str("}\n");
        out
    }

    /// The fp64 pragma, the helpers and `__kernel void calculate(...) {`.
    fn signature(&self) -> String {
        let mut out = String::new();
        self.preamble(&mut out, false);
        let mut params: Vec<String> = self.parameters().into_iter().map(|(p, _)| p).collect();
        if self.row_blocks {
            params.push("int block_rows".into());
        }
        out.push_str(&kernel_header("calculate", &params));
        out
    }

    /// The pragma (when the kernel uses `double`, or `fp64` says a part
    /// it does not generate does), `in_view` and the helpers every kernel
    /// starts with.
    fn preamble(&self, out: &mut String, fp64: bool) {
        if self.uses_fp64 || fp64 {
            out.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n");
        }
        out.push_str(IN_VIEW);
        out.push_str("\n\n");
        for h in &self.helpers {
            out.push_str(h.trim());
            out.push_str("\n\n");
        }
    }

    /// The kernel's parameters, each declared and named, ending with the
    /// element grid's `rows` and `cols`.
    fn parameters(&self) -> Vec<(String, String)> {
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

    /// The generated statements as the epilogue of a GEMM kernel (see
    /// `clfuse_kernels::EpilogueGemm`): the function
    /// `epilogue(i, j, product, ...)` running the body and the outputs'
    /// stores for one element, and the macros `EPILOGUE_PARAMS` and
    /// `EPILOGUE_ARGS` that pass the kernel's parameters on to it.
    /// `product` (of type `product_type`) is the element of the product
    /// the GEMM computed. `None` when the statements need more than one
    /// element's work item: row blocks, local memory, code before or after
    /// the element guard (reductions), the product read at another element
    /// ([`refuse_epilogue`](Self::refuse_epilogue)).
    pub fn epilogue_prelude(&self, product: &str, product_type: &'static str) -> Option<String> {
        let [before, prologue, prepare, body, outputs, epilogue, after] = &self.sections;
        let per_element = !self.epilogue_refused
            && !self.row_blocks
            && !self.needs_local_size
            && [before, prologue, prepare, epilogue, after]
                .iter()
                .all(|section| section.is_empty());
        if !per_element {
            return None;
        }
        let mut out = String::new();
        self.preamble(&mut out, product_type == "double");
        let params = self.parameters();
        out.push_str("// The kernel's parameters that the epilogue reads, passed on to it.\n");
        out.push_str("#define EPILOGUE_PARAMS \\\n");
        let declarations: Vec<String> = params.iter().map(|(d, _)| format!("    , {d}")).collect();
        out.push_str(&declarations.join(" \\\n"));
        out.push('\n');
        let names: Vec<&str> = params.iter().map(|(_, n)| n.as_str()).collect();
        out.push_str(&format!("#define EPILOGUE_ARGS , {}\n\n", names.join(", ")));
        out.push_str(&format!(
            "// Element (i, j) of the assignment, from the product's element there.\ninline void epilogue(const int i, const int j, const {product_type} {product} EPILOGUE_PARAMS) {{\n"
        ));
        for line in body.iter().chain(outputs) {
            // Body lines are indented for the guarded form; drop one level.
            out.push_str(line.strip_prefix("  ").unwrap_or(line));
            out.push('\n');
        }
        out.push_str("}\n");
        Some(out)
    }

    /// Row blocks: work-groups walk blocks of `block_rows` rows; staged
    /// matrices are read once per block into registers or local memory.
    fn row_block_body(&self, out: &mut String) {
        let [before, prologue, prepare, body, outputs, epilogue, after] = &self.sections;
        let push_lines = |out: &mut String, lines: &[String], prefix: &str| {
            for line in lines {
                out.push_str(prefix);
                out.push_str(line);
                out.push('\n');
            }
        };
        out.push_str("  const int j = get_global_id(1);\n");
        out.push_str("  const int lid = get_local_id(0);\n");
        out.push_str("  const int lsize = get_local_size(0);\n");
        push_lines(out, before, "");
        // Work that shares a block through local memory (the prepare
        // step) alternates between two halves of it, so one barrier per
        // block separates writers from readers.
        let (parity_init, parity_step) = if prepare.is_empty() {
            ("", "")
        } else {
            (", parity = 0", ", parity ^= 1")
        };
        out.push_str(&format!(
            "  for (int block = get_group_id(0) * block_rows{parity_init}; block < rows; block += get_num_groups(0) * block_rows{parity_step}) {{\n"
        ));
        out.push_str("    const int rows_here = min(block_rows, rows - block);\n");
        push_lines(out, prologue, "  ");
        push_lines(out, prepare, "  ");
        if !prepare.is_empty() {
            out.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
        }
        let row_in_block = if self.staged.is_empty() {
            "lid"
        } else {
            "tile_row"
        };
        out.push_str(&format!(
            "    if ({row_in_block} < rows_here && j < cols) {{\n"
        ));
        out.push_str(&format!("      const int i = block + {row_in_block};\n"));
        push_lines(out, body, "  ");
        if self.shares_rows() && !outputs.is_empty() {
            out.push_str("      if (tile_col == 0) {\n");
            push_lines(out, outputs, "    ");
            out.push_str("      }\n");
        } else {
            push_lines(out, outputs, "  ");
        }
        out.push_str("    }\n");
        if !epilogue.is_empty() {
            out.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
            push_lines(out, epilogue, "  ");
            if prepare.is_empty() {
                // The next body overwrites what the epilogue reads (with a
                // prepare step, its barrier separates them).
                out.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
            }
        }
        out.push_str("  }\n");
        push_lines(out, after, "");
    }

    /// One work item per element, or (reductions) per column and stride of rows.
    fn element_grid_body(&self, out: &mut String) {
        let [before, _, _, body, outputs, _, after] = &self.sections;
        let push_lines = |out: &mut String, lines: &[String], prefix: &str| {
            for line in lines {
                out.push_str(prefix);
                out.push_str(line);
                out.push('\n');
            }
        };
        let loops_over_rows = !after.is_empty();
        if !loops_over_rows {
            out.push_str("  const int i = get_global_id(0);\n");
        }
        out.push_str("  const int j = get_global_id(1);\n");
        if self.needs_local_size {
            out.push_str("  const int lid = get_local_id(0);\n");
            out.push_str("  const int lsize = get_local_size(0);\n");
        }
        push_lines(out, before, "");
        if !loops_over_rows {
            out.push_str("  if (i >= rows || j >= cols) {\n    return;\n  }\n");
            for line in body.iter().chain(outputs) {
                // Body lines are indented for the guarded form; drop one level.
                out.push_str(line.strip_prefix("  ").unwrap_or(line));
                out.push('\n');
            }
        } else {
            // Reductions: each work item accumulates rows i, i + stride, ...
            out.push_str("  if (j < cols) {\n");
            out.push_str(
                "    for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {\n",
            );
            push_lines(out, body, "  ");
            push_lines(out, outputs, "  ");
            out.push_str("    }\n");
            out.push_str("  }\n");
            push_lines(out, after, "");
        }
    }
}
