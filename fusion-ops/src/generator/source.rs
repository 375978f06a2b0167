//! Assembling the kernel's text: the pragma and helpers, the signature,
//! and the body around the generated sections (an element grid, row
//! blocks, or a GEMM's epilogue).

use super::Generator;

pub(super) const IN_VIEW: &str = "\
// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}";

/// `__kernel void name(` with one parameter per line, then `) {`.
fn kernel_header(name: &str, params: &[String]) -> String {
    let params: Vec<String> = params.iter().map(|p| format!("    {p}")).collect();
    format!("__kernel void {name}(\n{}) {{\n", params.join(",\n"))
}

impl Generator {
    /// The finished kernel: the signature, then the body of a row-block
    /// kernel or of an element-grid one over `(i, j) < (rows, cols)`, or
    /// the statements of a kernel of its own ([`Generator::named`]).
    pub fn kernel_source(&self) -> String {
        let mut out = self.signature();
        if !self.element_grid {
            self.own_grid_body(&mut out);
        } else if self.row_blocks {
            self.row_block_body(&mut out);
        } else {
            self.element_grid_body(&mut out);
        }
        out.push_str("}\n");
        out
    }

    /// The pragmas, the helpers and `__kernel void name(...) {`.
    fn signature(&self) -> String {
        let mut out = String::new();
        self.preamble(&mut out, false);
        let mut params: Vec<String> = self.parameters().into_iter().map(|(p, _)| p).collect();
        if self.row_blocks {
            params.push("int block_rows".into());
        }
        out.push_str(&kernel_header(&self.name, &params));
        out
    }

    /// The pragmas (`cl_khr_fp64` when the kernel uses `double`, or `fp64`
    /// says a part it does not generate does; the extensions enabled) and
    /// the helpers (a fused kernel's first is `in_view`).
    fn preamble(&self, out: &mut String, fp64: bool) {
        let fp64 = (self.uses_fp64 || fp64).then_some("cl_khr_fp64");
        let extensions: Vec<&str> = fp64
            .into_iter()
            .chain(self.extensions.iter().copied())
            .collect();
        for extension in &extensions {
            out.push_str(&format!("#pragma OPENCL EXTENSION {extension} : enable\n"));
        }
        if !extensions.is_empty() {
            out.push('\n');
        }
        for h in &self.helpers {
            out.push_str(h.trim());
            out.push_str("\n\n");
        }
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
            && self.element_grid
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

    /// A kernel of its own: `lid` and `lsize` when it uses them, then its
    /// statements as written.
    fn own_grid_body(&self, out: &mut String) {
        debug_assert!(
            self.sections[1..].iter().all(Vec::is_empty),
            "a kernel of its own has no guard to put statements around"
        );
        if self.needs_local_size {
            out.push_str("  const int lid = get_local_id(0);\n");
            out.push_str("  const int lsize = get_local_size(0);\n");
        }
        for line in &self.sections[0] {
            out.push_str(line);
            out.push('\n');
        }
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
