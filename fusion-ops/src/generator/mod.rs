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
//!
//! This file holds the generator and its statements; beside it, `params.rs`
//! declares the kernel's parameters and the buffers behind them, `memo.rs`
//! remembers values per scope, `staging.rs` handles row blocks and staged
//! and prefetched matrices, and `source.rs` assembles the kernel's text.

mod memo;
mod params;
mod source;
mod staging;

pub use staging::{StageLayout, StagedMatrix};

use crate::binder::Identity;
use params::Param;

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
    /// Before the bounds guard (every work item runs it); in a kernel of
    /// its own ([`Generator::named`]), all of its statements.
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

/// The source of a kernel under construction.
#[derive(Debug)]
pub struct Generator {
    /// The kernel's name.
    name: String,
    /// Whether the kernel computes the element grid `(i, j) < (rows, cols)`
    /// (a fused kernel: a bounds guard, row blocks or a reduction's loop
    /// around the statements); otherwise its statements run as written.
    element_grid: bool,
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
    /// OpenCL extensions enabled besides `cl_khr_fp64` (which `double` enables).
    extensions: Vec<&'static str>,
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
    /// The product node whose element a GEMM hands to these statements
    /// (see [`for_epilogue`](Self::for_epilogue)).
    epilogue_product: Option<usize>,
    /// Names whose value is the same for every element (kernel arguments,
    /// `1 x 1` operands and pure functions of them): see
    /// [`declare_pure`](Self::declare_pure).
    uniform: std::collections::HashSet<String>,
    /// Uniform floating-point names declared before the element loop, each
    /// with its type and its reciprocal once one was needed (see
    /// [`declare`](Self::declare)).
    reciprocals: std::collections::HashMap<String, (&'static str, Option<String>)>,
    /// The gathers checking their indices, by node address: each one's slot
    /// in the gather flags (see [`gather_flags`](Self::gather_flags)).
    gathers: Vec<usize>,
    /// Slots of the finished-groups counter taken so far (see
    /// [`groups_done_slot`](Self::groups_done_slot)).
    groups_done_slots: usize,
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
    /// An empty fused kernel, `calculate`: its statements compute one
    /// element of the grid `(i, j) < (rows, cols)`, and the helper
    /// `in_view` comes first.
    pub fn new() -> Self {
        let mut g = Self::empty("calculate", true);
        g.helper(source::IN_VIEW.to_string());
        g
    }

    /// An empty kernel named `name` with a grid of its own (a reverse-mode
    /// adjoint kernel): no element guard and no helper until one is added;
    /// its statements, all in [`Section::Before`], run as written, and its
    /// parameters are only those declared (see
    /// [`grid_params`](Self::grid_params)).
    pub fn named(name: &str) -> Self {
        let mut g = Self::empty(name, false);
        g.section = Section::Before;
        g
    }

    fn empty(name: &str, element_grid: bool) -> Self {
        Generator {
            name: name.to_string(),
            element_grid,
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
            extensions: Vec::new(),
            needs_local_size: false,
            declared: Vec::new(),
            recordings: Vec::new(),
            recorded: Vec::new(),
            replays: Vec::new(),
            keyed_params: Vec::new(),
            memos: Vec::new(),
            epilogue_refused: false,
            epilogue_product: None,
            uniform: std::collections::HashSet::new(),
            reciprocals: std::collections::HashMap::new(),
            gathers: Vec::new(),
            groups_done_slots: 0,
        }
    }

    /// An empty fused kernel whose statements are to be the epilogue of the
    /// GEMM computing the product node `node` (see `crate::epilogue` and
    /// [`epilogue_prelude`](Self::epilogue_prelude)): that node generates
    /// the GEMM's element instead of reading a matrix.
    pub fn for_epilogue(node: usize) -> Self {
        Generator {
            epilogue_product: Some(node),
            ..Self::new()
        }
    }

    /// Whether `node` is the product whose element the GEMM hands to these
    /// statements.
    pub fn is_epilogue_product(&self, node: usize) -> bool {
        self.epilogue_product == Some(node)
    }

    pub(crate) fn note_type(&mut self, cl_type: &str) {
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
    ///
    /// A floating-point `value` ending in a division by a uniform name
    /// declared before the element loop (`(y - mu) / sigma` of a `1 x 1`
    /// `sigma`) multiplies by that name's reciprocal instead, computed once
    /// before the loop: an FP64 division costs a GPU many instructions, and
    /// two per element made a density's kernel compute-bound (76 µs instead
    /// of 55 at 1e7 elements on an H200). `*` and `/` bind alike, so the
    /// expression keeps its structure; the result may differ in the last
    /// bit, and a subnormal denominator (below 2⁻¹⁰²², whose reciprocal
    /// overflows) gives infinities where the quotient was finite.
    pub fn declare(&mut self, cl_type: &'static str, value: &str) -> String {
        self.note_type(cl_type);
        let rewritten = match cl_type {
            "double" | "float" => self.times_reciprocal(value),
            _ => None,
        };
        let value = rewritten.as_deref().unwrap_or(value);
        let var = self.fresh();
        self.statement(&format!("{cl_type} {var} = {value};"));
        var
    }

    /// `value` with its final division by a uniform name (see
    /// [`declare`](Self::declare)) made a product with that name's
    /// reciprocal, declared before the loop once; `None` when it ends
    /// otherwise. The denominator must be the whole text after the last
    /// ` / `, so a division inside parentheses or a call is left alone.
    fn times_reciprocal(&mut self, value: &str) -> Option<String> {
        let (numerator, denominator) = value.rsplit_once(" / ")?;
        let (cl_type, known) = self.reciprocals.get(denominator)?.clone();
        if numerator.trim() == "1" {
            return None; // a reciprocal itself
        }
        let reciprocal = match known {
            Some(name) => name,
            None => {
                let name = self.declare_uniform(cl_type, &format!("1 / {denominator}"));
                self.reciprocals
                    .insert(denominator.to_string(), (cl_type, Some(name.clone())));
                name
            }
        };
        Some(format!("{numerator} * {reciprocal}"))
    }

    /// Declares a pure value (`cl_type varN = value;`, never assigned
    /// again) and returns `varN`. A value computed only from names that are
    /// the same for every element ([`declare_uniform`](Self::declare_uniform),
    /// kernel arguments) is itself such a name, and goes before the element
    /// loop: `log(sigma)` of a `1 x 1` `sigma` is computed once per work
    /// item instead of once per element. A GEMM's epilogue has no such
    /// place, so there it stays where it is.
    pub fn declare_pure(&mut self, cl_type: &'static str, value: &str) -> String {
        if self.epilogue_product.is_some() || !self.only_uniform_names(value) {
            return self.declare(cl_type, value);
        }
        self.declare_uniform(cl_type, value)
    }

    /// Declares `value`, which the caller knows to be the same for every
    /// element (a `1 x 1` operand's element `(0, 0)`), before the element
    /// loop (see [`declare_pure`](Self::declare_pure)).
    pub fn declare_uniform(&mut self, cl_type: &'static str, value: &str) -> String {
        if self.epilogue_product.is_some() {
            return self.declare(cl_type, value);
        }
        let var = self.before_elements(|g| g.declare(cl_type, value));
        self.uniform.insert(var.clone());
        if matches!(cl_type, "double" | "float") {
            self.reciprocals.insert(var.clone(), (cl_type, None));
        }
        var
    }

    /// Runs `generate` with its statements before the element loop (where
    /// [`declare_uniform`](Self::declare_uniform) puts values): for an
    /// operand read at one fixed element. In a GEMM's epilogue they stay in
    /// place.
    pub fn before_elements<R>(&mut self, generate: impl FnOnce(&mut Self) -> R) -> R {
        if self.epilogue_product.is_some() {
            return generate(self);
        }
        let section = std::mem::replace(&mut self.section, Section::Before);
        let result = generate(self);
        self.section = section;
        result
    }

    /// Whether `name` is the same for every element (see
    /// [`declare_pure`](Self::declare_pure)).
    pub fn is_uniform(&self, name: &str) -> bool {
        self.uniform.contains(name)
    }

    /// Records that `name` (a kernel argument) is the same for every element.
    pub(crate) fn mark_uniform(&mut self, name: &str) {
        self.uniform.insert(name.to_string());
    }

    /// Whether `value` names at least one value and every name in it is
    /// uniform, apart from the functions it calls and the types it casts
    /// to. An unknown name (an index, a buffer) makes it per element.
    fn only_uniform_names(&self, value: &str) -> bool {
        const TYPES: &[&str] = &["double", "float", "int", "uint", "long", "ulong", "bool"];
        let bytes = value.as_bytes();
        let mut named = false;
        let mut k = 0;
        while k < bytes.len() {
            let c = bytes[k];
            if c.is_ascii_digit() || (c == b'.' && bytes.get(k + 1).is_some_and(u8::is_ascii_digit))
            {
                // A number, with its exponent and suffix (`1.5e-3f`).
                k += 1;
                while k < bytes.len() {
                    let d = bytes[k];
                    let exponent_sign =
                        (d == b'-' || d == b'+') && matches!(bytes[k - 1], b'e' | b'E');
                    if d.is_ascii_alphanumeric() || d == b'.' || exponent_sign {
                        k += 1;
                    } else {
                        break;
                    }
                }
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let start = k;
                while k < bytes.len() && (bytes[k].is_ascii_alphanumeric() || bytes[k] == b'_') {
                    k += 1;
                }
                let name = &value[start..k];
                let calls = value[k..].trim_start().starts_with('(');
                if calls || TYPES.contains(&name) {
                    continue;
                }
                if !self.uniform.contains(name) {
                    return false;
                }
                named = true;
            } else {
                k += 1;
            }
        }
        named
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

    /// Appends each line of `lines` as a [`statement`](Self::statement),
    /// its own indentation dropped (the generator indents), blank lines
    /// skipped: a block of OpenCL C written out as it reads.
    pub fn statements(&mut self, lines: &str) {
        for line in lines.lines().map(str::trim).filter(|l| !l.is_empty()) {
            self.statement(line);
        }
    }

    /// Opens `for (int k = 0; k < count; k++) {`, unrolled: a loop over the
    /// elements each work item holds of a staged row. The caller closes it
    /// with a `}` statement.
    pub fn open_unrolled_loop(&mut self, count: usize) {
        self.statement("#pragma unroll");
        self.statement(&format!("for (int k = 0; k < {count}; k++) {{"));
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

    /// Adds a device helper function (emitted once, before the kernel).
    pub fn helper(&mut self, source: String) {
        if !self.helpers.contains(&source) {
            self.helpers.push(source);
        }
    }

    /// Enables the OpenCL extension `name` (`cl_khr_int64_base_atomics`)
    /// with a pragma before the helpers.
    pub fn enable_extension(&mut self, name: &'static str) {
        if !self.extensions.contains(&name) {
            self.extensions.push(name);
        }
    }

    /// Declares that the kernel uses `lid` / `lsize` (local id and size along rows).
    pub fn use_local_ids(&mut self) {
        self.needs_local_size = true;
    }

    /// A slot of the finished-groups counter (`clfuse_core::groups_done_counter`)
    /// for one reduction of this kernel that ends in a last-group step, so
    /// that several such reductions count their groups apart. Past the
    /// counter's [`GROUPS_DONE_SLOTS`](clfuse_core::GROUPS_DONE_SLOTS) the
    /// kernel carries an `#error`: it fails to build with that message
    /// rather than share a count.
    pub fn groups_done_slot(&mut self) -> usize {
        let slot = self.groups_done_slots;
        self.groups_done_slots += 1;
        if slot >= clfuse_core::GROUPS_DONE_SLOTS {
            self.helper(format!(
                "#error \"more than {} reductions end in a last-group step in one kernel\"",
                clfuse_core::GROUPS_DONE_SLOTS
            ));
        }
        slot
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_counters_slots_a_kernel_fails_to_build_naming_the_limit() -> clfuse_core::Result<()>
    {
        let slots = clfuse_core::GROUPS_DONE_SLOTS;
        let mut g = Generator::named("k");
        let taken: Vec<usize> = (0..slots).map(|_| g.groups_done_slot()).collect();
        assert_eq!(taken, (0..slots).collect::<Vec<_>>());
        let source = g.kernel_source();
        assert!(!source.contains("#error"), "{source}");
        clfuse_core::compile_kernel("k", &source, "", "k_all_slots")?;
        // One reduction more than the counter has slots for.
        assert_eq!(g.groups_done_slot(), slots);
        let source = g.kernel_source();
        let limit = format!("more than {slots} reductions");
        assert!(source.contains(&limit), "{source}");
        match clfuse_core::compile_kernel("k", &source, "", "k_too_many_slots") {
            Err(clfuse_core::Error::Build { log, .. }) => assert!(log.contains(&limit), "{log}"),
            other => panic!("expected a build error naming the limit, got {other:?}"),
        }
        Ok(())
    }

    #[test]
    fn a_division_by_a_uniform_float_multiplies_by_its_reciprocal_once() {
        let mut g = Generator::named("k");
        let sigma = g.declare_uniform("double", "1.5");
        let count = g.declare_uniform("int", "3");
        let a = g.declare("double", &format!("y / {sigma}"));
        let b = g.declare("double", &format!("-{a} / {sigma}"));
        let inside = g.declare("double", &format!("(y / {sigma})"));
        let integer = g.declare("double", &format!("i / {count}"));
        let one = g.declare("double", &format!("1 / {sigma}"));
        let source = g.kernel_source();
        let reciprocal = format!("= 1 / {sigma};");
        // Declared once before the loop, and the template's own `1 / sigma` stays.
        assert_eq!(source.matches(&reciprocal).count(), 2, "{source}");
        assert!(source.contains(&format!("{a} = y * var")), "{source}");
        assert!(source.contains(&format!("{b} = -{a} * var")), "{source}");
        assert!(
            source.contains(&format!("{inside} = (y / {sigma});")),
            "{source}"
        );
        assert!(
            source.contains(&format!("{integer} = i / {count};")),
            "{source}"
        );
        assert!(
            source.contains(&format!("{one} = 1 / {sigma};")),
            "{source}"
        );
    }
}
