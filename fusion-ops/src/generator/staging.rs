//! Row-block kernels: blocks of rows walked by each work-group, matrices
//! staged block by block in registers, and rows fetched one block ahead.

use super::{Generator, Index, Section};
use crate::binder::Identity;

/// Element (`row`, `col`) of buffer `base`, or 0 outside the rows, the first
/// `cols` columns or the buffer's view: how staged blocks and rows fetched
/// ahead are read (every work item runs it, in range or not).
fn guarded_element(base: &str, row: &str, col: &str, cols: &str) -> String {
    format!(
        "({row} < rows && {col} < {cols} && in_view({row}, {col}, {base}_view)) ? {base}_global[{row} + {base}_rows * {col}] : 0"
    )
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

impl Generator {
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
    pub(super) fn shares_rows(&self) -> bool {
        self.staged.iter().any(|s| s.layout.shares_rows())
    }

    /// The staged form of matrix `identity`, when the kernel stages it.
    pub fn staged(&self, identity: Identity) -> Option<StagedMatrix> {
        self.staged.iter().find(|t| t.identity == identity).cloned()
    }
}
