//! Building the OpenCL C source of a fused kernel.
//!
//! Operations emit statements for one element `(i, j)`; the generator names
//! variables (`var1`, `var2`, ...), declares kernel parameters once per
//! distinct leaf, collects device helper functions once each, and assembles
//! the kernel.

use crate::binder::Identity;

const IN_VIEW: &str = "\
// Whether element (i, j) lies in a triangular view: bit 0 = lower part, bit 1 = upper part.
inline bool in_view(int i, int j, int view) {
  return i == j || ((i > j ? view & 1 : view & 2) != 0);
}";

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
}

/// The source of a kernel under construction.
#[derive(Debug, Default)]
pub struct Generator {
    params: Vec<Param>,
    body: Vec<String>,
    helpers: Vec<String>,
    next_var: usize,
    names: Vec<(Identity, String)>,
    uses_fp64: bool,
    indent: usize,
}

impl Generator {
    /// An empty kernel.
    pub fn new() -> Self {
        Generator {
            indent: 1,
            ..Default::default()
        }
    }

    fn note_type(&mut self, cl_type: &str) {
        if cl_type == "double" {
            self.uses_fp64 = true;
        }
    }

    /// A new variable name.
    pub fn fresh(&mut self) -> String {
        self.next_var += 1;
        format!("var{}", self.next_var)
    }

    /// Declares `cl_type varN = value;` and returns `varN`.
    pub fn declare(&mut self, cl_type: &'static str, value: &str) -> String {
        self.note_type(cl_type);
        let var = self.fresh();
        self.statement(&format!("{cl_type} {var} = {value};"));
        var
    }

    /// Appends one statement line (indented to the current block).
    pub fn statement(&mut self, line: &str) {
        if line.starts_with('}') {
            self.indent = self.indent.saturating_sub(1);
        }
        self.body.push(format!("{}{}", "  ".repeat(self.indent), line));
        if line.ends_with('{') {
            self.indent += 1;
        }
    }

    /// Declares a scalar kernel parameter and returns its name.
    pub fn value_param(&mut self, cl_type: &'static str) -> String {
        self.note_type(cl_type);
        let name = self.fresh();
        self.params.push(Param::Value {
            name: name.clone(),
            cl_type,
        });
        name
    }

    /// Declares an `int` kernel parameter with a chosen name.
    pub fn int_param(&mut self, name: &str) {
        self.params.push(Param::Value {
            name: name.to_string(),
            cl_type: "int",
        });
    }

    /// Declares a buffer parameter `<base>_global` with `<base>_rows` (and
    /// `<base>_view` when `with_view`) for the leaf `identity`.
    pub fn buffer_param(
        &mut self,
        identity: Identity,
        base: &str,
        cl_type: &'static str,
        with_view: bool,
    ) {
        self.note_type(cl_type);
        self.params.push(Param::Buffer {
            base: base.to_string(),
            cl_type,
            with_view,
            written: false,
        });
        self.names.push((identity, base.to_string()));
    }

    /// Marks the buffer declared with `base` as written (its parameter loses `const`).
    pub fn mark_written(&mut self, base: &str) {
        for p in &mut self.params {
            if let Param::Buffer { base: b, written, .. } = p {
                if b == base {
                    *written = true;
                }
            }
        }
    }

    /// The name given to `identity` earlier in this kernel, if any.
    pub fn known(&self, identity: Identity) -> Option<String> {
        self.names
            .iter()
            .find(|(id, _)| *id == identity)
            .map(|(_, name)| name.clone())
    }

    /// Remembers the name of a shared sub-expression's value.
    pub fn remember(&mut self, identity: Identity, name: &str) {
        self.names.push((identity, name.to_string()));
    }

    /// Adds a device helper function (emitted once, before the kernel).
    pub fn helper(&mut self, source: String) {
        if !self.helpers.contains(&source) {
            self.helpers.push(source);
        }
    }

    /// Whether any `double` appears.
    pub fn uses_fp64(&self) -> bool {
        self.uses_fp64
    }

    /// The finished kernel `calculate` over `(i, j) < (rows, cols)`.
    pub fn kernel_source(&self) -> String {
        let mut out = String::new();
        if self.uses_fp64 {
            out.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n");
        }
        out.push_str(IN_VIEW);
        out.push_str("\n\n");
        for h in &self.helpers {
            out.push_str(h.trim());
            out.push_str("\n\n");
        }
        let mut params: Vec<String> = Vec::new();
        for p in &self.params {
            match p {
                Param::Buffer {
                    base,
                    cl_type,
                    with_view,
                    written,
                } => {
                    let constness = if *written { "" } else { "const " };
                    params.push(format!("__global {constness}{cl_type}* restrict {base}_global"));
                    params.push(format!("int {base}_rows"));
                    if *with_view {
                        params.push(format!("int {base}_view"));
                    }
                }
                Param::Value { name, cl_type } => params.push(format!("{cl_type} {name}")),
            }
        }
        params.push("int rows".into());
        params.push("int cols".into());
        out.push_str("__kernel void calculate(\n");
        out.push_str(
            &params
                .iter()
                .map(|p| format!("    {p}"))
                .collect::<Vec<_>>()
                .join(",\n"),
        );
        out.push_str(") {\n");
        out.push_str("  const int i = get_global_id(0);\n");
        out.push_str("  const int j = get_global_id(1);\n");
        out.push_str("  if (i >= rows || j >= cols) {\n    return;\n  }\n");
        for line in &self.body {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("}\n");
        out
    }
}
