//! `kernel_impl!`: a hand-written kernel's typed launcher, checked against
//! its OpenCL C source at compile time.
//!
//! ```text
//! crate = $crate;
//! /// docs
//! pub fn pack<T>(out packed: T, in unpacked: T, n: i32, view: i32) = file "cl/pack.cl";
//! pub fn draw<T>(out d: T, n: i32) = file "cl/philox.cl" + "cl/draw.cl"; // files joined in order
//! pub fn scale(inout x: f32, c: f32) = source "__kernel void scale(__global float* x, float c) { .. }";
//! ```
//! `in` buffers must be `const __global`, `out`/`inout` buffers `__global`
//! without `const`, scalars plain values; `T` (when the launcher is generic)
//! matches `T` in the source, `f64`/`f32`/`i32` match `double`/`float`/`int`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitStr, Path, Token, Visibility, parenthesized};

mod kw {
    syn::custom_keyword!(out);
    syn::custom_keyword!(inout);
    syn::custom_keyword!(file);
    syn::custom_keyword!(source);
    syn::custom_keyword!(options);
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    In,
    Out,
    InOut,
    Value,
}

struct Arg {
    direction: Direction,
    name: Ident,
    ty: Ident,
}

enum Source {
    /// Files joined in order (helpers first, the kernel's file last).
    File(Vec<LitStr>),
    Inline(LitStr),
}

struct Decl {
    krate: Path,
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    generic: Option<Ident>,
    args: Vec<Arg>,
    source: Source,
    options: Option<LitStr>,
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let direction = if input.peek(Token![in]) {
            input.parse::<Token![in]>()?;
            Direction::In
        } else if input.peek(kw::out) {
            input.parse::<kw::out>()?;
            Direction::Out
        } else if input.peek(kw::inout) {
            input.parse::<kw::inout>()?;
            Direction::InOut
        } else {
            Direction::Value
        };
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty: Ident = input.parse()?;
        Ok(Arg {
            direction,
            name,
            ty,
        })
    }
}

impl Parse for Decl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<Token![crate]>()?;
        input.parse::<Token![=]>()?;
        let krate: Path = input.parse()?;
        input.parse::<Token![;]>()?;
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        input.parse::<Token![fn]>()?;
        let name: Ident = input.parse()?;
        let generic = if input.peek(Token![<]) {
            input.parse::<Token![<]>()?;
            let g: Ident = input.parse()?;
            input.parse::<Token![>]>()?;
            Some(g)
        } else {
            None
        };
        let content;
        parenthesized!(content in input);
        let args = content
            .parse_terminated(Arg::parse, Token![,])?
            .into_iter()
            .collect();
        input.parse::<Token![=]>()?;
        let source = if input.peek(kw::file) {
            input.parse::<kw::file>()?;
            let mut files = vec![input.parse()?];
            while input.peek(Token![+]) {
                input.parse::<Token![+]>()?;
                files.push(input.parse()?);
            }
            Source::File(files)
        } else {
            input.parse::<kw::source>()?;
            Source::Inline(input.parse()?)
        };
        let options = if input.peek(kw::options) {
            input.parse::<kw::options>()?;
            Some(input.parse()?)
        } else {
            None
        };
        input.parse::<Token![;]>()?;
        Ok(Decl {
            krate,
            attrs,
            vis,
            name,
            generic,
            args,
            source,
            options,
        })
    }
}

/// Removes `//` and `/* */` comments.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '/' && chars.peek() == Some(&'/') {
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for n in chars.by_ref() {
                if prev == '*' && n == '/' {
                    break;
                }
                prev = n;
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The parameter list of `__kernel void name(...)`, if the source has it.
fn kernel_params(src: &str, name: &str) -> Option<Vec<String>> {
    let src = strip_comments(src);
    let tokens: Vec<&str> = src
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let has_kernel = tokens
        .windows(3)
        .any(|w| (w[0] == "__kernel" || w[0] == "kernel") && w[1] == "void" && w[2] == name);
    if !has_kernel {
        return None;
    }
    let mut search = 0;
    while let Some(pos) = src[search..].find(name) {
        let at = search + pos;
        search = at + name.len();
        let before = src[..at].trim_end();
        let after = src[search..].trim_start();
        if before.ends_with("void") && after.starts_with('(') {
            let head = before.trim_end_matches("void").trim_end();
            if !(head.ends_with("__kernel") || head.ends_with("kernel")) {
                continue;
            }
            let open = search + (src[search..].len() - after.len());
            let close = src[open..].find(')')? + open;
            let list = &src[open + 1..close];
            if list.trim().is_empty() || list.trim() == "void" {
                return Some(Vec::new());
            }
            return Some(
                list.split(',')
                    .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
                    .collect(),
            );
        }
    }
    None
}

fn cl_type_of(ty: &Ident, generic: Option<&Ident>) -> Option<&'static str> {
    if generic.is_some_and(|g| g == ty) {
        return Some("T");
    }
    match ty.to_string().as_str() {
        "f64" => Some("double"),
        "f32" => Some("float"),
        "i32" => Some("int"),
        _ => None,
    }
}

fn check_arg(arg: &Arg, param: &str, generic: Option<&Ident>) -> syn::Result<()> {
    let words: Vec<&str> = param
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let pointer = param.contains('*');
    let global = words.iter().any(|w| *w == "__global" || *w == "global");
    let constant = words.contains(&"const");
    let want = cl_type_of(&arg.ty, generic).ok_or_else(|| {
        syn::Error::new(
            arg.ty.span(),
            "element types are f64, f32, i32 or the launcher's generic parameter",
        )
    })?;
    let found = words
        .iter()
        .find(|w| ["double", "float", "int", "T"].contains(w))
        .copied()
        .unwrap_or("?");
    let fail = |msg: String| {
        Err(syn::Error::new(
            arg.name.span(),
            format!("`{}`: {msg} (OpenCL parameter: `{param}`)", arg.name),
        ))
    };
    match arg.direction {
        Direction::Value => {
            if pointer {
                return fail("declared as a scalar, but the kernel takes a buffer".into());
            }
        }
        d => {
            if !pointer || !global {
                return fail("declared as a buffer, but the kernel takes a value".into());
            }
            if d == Direction::In && !constant {
                return fail("an `in` buffer must be `const __global` in the kernel".into());
            }
            if d != Direction::In && constant {
                return fail("the kernel declares this buffer `const`, so it cannot be written (`out`/`inout`)".into());
            }
        }
    }
    if found != want {
        return fail(format!(
            "element type `{}` is `{want}` in OpenCL C, but the kernel has `{found}`",
            arg.ty
        ));
    }
    Ok(())
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let d: Decl = syn::parse2(input)?;
    let k = &d.krate;
    let (text, source_expr, source_span) = match &d.source {
        Source::Inline(lit) => (lit.value(), quote!(#lit), lit.span()),
        Source::File(files) => {
            let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
            let mut text = String::new();
            for lit in files {
                let path = std::path::Path::new(&dir).join(lit.value());
                text += &std::fs::read_to_string(&path).map_err(|e| {
                    syn::Error::new(lit.span(), format!("cannot read {}: {e}", path.display()))
                })?;
            }
            let parts = files.iter().map(|lit| {
                let rel = lit.value();
                quote!(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", #rel)))
            });
            let last = files.last().map_or_else(Span::call_site, |lit| lit.span());
            (text, quote!(concat!(#(#parts),*)), last)
        }
    };
    let name_str = d.name.to_string();
    let params = kernel_params(&text, &name_str).ok_or_else(|| {
        syn::Error::new(
            source_span,
            format!("no `__kernel void {name_str}(...)` in this source"),
        )
    })?;
    if params.len() != d.args.len() {
        return Err(syn::Error::new(
            d.name.span(),
            format!(
                "`{name_str}` declares {} arguments, but the OpenCL kernel has {}: ({})",
                d.args.len(),
                params.len(),
                params.join(", ")
            ),
        ));
    }
    for (arg, param) in d.args.iter().zip(&params) {
        check_arg(arg, param, d.generic.as_ref())?;
    }
    let specs = d.args.iter().map(|a| {
        let ty = &a.ty;
        match a.direction {
            Direction::In => quote!(#k::In<#ty>),
            Direction::Out => quote!(#k::Out<#ty>),
            Direction::InOut => quote!(#k::InOut<#ty>),
            Direction::Value => quote!(#ty),
        }
    });
    let options = d
        .options
        .as_ref()
        .map_or_else(|| quote!(""), |o| quote!(#o));
    let (attrs, vis, name) = (&d.attrs, &d.vis, &d.name);
    let arg_doc = d
        .args
        .iter()
        .map(|a| {
            let dir = match a.direction {
                Direction::In => "in ",
                Direction::Out => "out ",
                Direction::InOut => "inout ",
                Direction::Value => "",
            };
            format!("{dir}{}: {}", a.name, a.ty)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let doc = format!(
        "Typed launcher of the OpenCL kernel `{name_str}({arg_doc})`, checked against its source at compile time."
    );
    let generics = d.generic.as_ref().map(|g| quote!(<#g: #k::ClType>));
    let _ = Span::call_site();
    Ok(quote! {
        #(#attrs)*
        #[doc = #doc]
        #vis fn #name #generics () -> #k::TypedKernel<(#(#specs,)*)> {
            const SOURCE: &str = #source_expr;
            #k::TypedKernel::new(#name_str, SOURCE, #options)
        }
    })
}
