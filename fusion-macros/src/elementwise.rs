//! `elementwise_impl!`: one declaration per element-wise operation.
//!
//! Input (after the crate path the wrapper macro prepends):
//! ```text
//! crate = $crate;
//! /// docs
//! pub struct Exp;                 // or `impl path::To::Existing;` for node types defined elsewhere
//! fn exp(x) = "exp({x})";         // one or two operands; the template names them
//! result = real;                  // real | promote | same | int
//! view = entire;                  // keep | entire | union | intersection | first
//! helpers = [dev::INV_LOGIT];     // optional: device functions the template calls
//! example = true;                 // optional: emit a runnable doc example
//! d/dx = "{res}";                 // optional: the local derivative per operand, for autodiff
//! derivative_helpers = [dev::X];  // optional: device functions the derivatives call
//! ```
//!
//! Derivative templates name the operands (`{x}`, `{y}`), the result
//! (`{res}`) and the float suffix (`{F}`). An operation without them (and
//! not `result = int`) is not differentiable: recording it is an error.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{
    Attribute, Expr, Ident, LitBool, LitStr, Path, Token, Visibility, bracketed, parenthesized,
};

mod kw {
    syn::custom_keyword!(result);
    syn::custom_keyword!(view);
    syn::custom_keyword!(helpers);
    syn::custom_keyword!(example);
    syn::custom_keyword!(d);
    syn::custom_keyword!(derivative_helpers);
}

enum Node {
    New { vis: Visibility, name: Ident },
    Existing(Path),
}

struct Decl {
    krate: Path,
    attrs: Vec<Attribute>,
    node: Node,
    function: Ident,
    operands: Vec<Ident>,
    template: LitStr,
    result: Ident,
    view: Ident,
    helpers: Vec<Expr>,
    example: bool,
    /// Derivative templates, by operand index.
    derivatives: Vec<Option<LitStr>>,
    derivative_helpers: Vec<Expr>,
}

impl Parse for Decl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<Token![crate]>()?;
        input.parse::<Token![=]>()?;
        let krate: Path = input.parse()?;
        input.parse::<Token![;]>()?;
        let attrs = input.call(Attribute::parse_outer)?;
        let node = if input.peek(Token![impl]) {
            input.parse::<Token![impl]>()?;
            Node::Existing(input.parse()?)
        } else {
            let vis: Visibility = input.parse()?;
            input.parse::<Token![struct]>()?;
            Node::New {
                vis,
                name: input.parse()?,
            }
        };
        input.parse::<Token![;]>()?;
        input.parse::<Token![fn]>()?;
        let function: Ident = input.parse()?;
        let content;
        parenthesized!(content in input);
        let operands: Punctuated<Ident, Token![,]> =
            content.parse_terminated(Ident::parse, Token![,])?;
        let operands: Vec<Ident> = operands.into_iter().collect();
        if operands.is_empty() || operands.len() > 2 {
            return Err(syn::Error::new(
                function.span(),
                "an element-wise operation takes one or two operands",
            ));
        }
        input.parse::<Token![=]>()?;
        let template: LitStr = input.parse()?;
        input.parse::<Token![;]>()?;
        for op in &operands {
            if !template.value().contains(&format!("{{{op}}}")) {
                return Err(syn::Error::new(
                    template.span(),
                    format!("the template never uses operand `{{{op}}}`"),
                ));
            }
        }
        let mut result = None;
        let mut view = None;
        let mut helpers = Vec::new();
        let mut example = false;
        let mut derivatives: Vec<Option<LitStr>> = vec![None; operands.len()];
        let mut derivative_helpers = Vec::new();
        while !input.is_empty() {
            let look = input.lookahead1();
            if look.peek(kw::d) {
                input.parse::<kw::d>()?;
                input.parse::<Token![/]>()?;
                let wrt: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let lit: LitStr = input.parse()?;
                let name = wrt.to_string();
                let index = operands
                    .iter()
                    .position(|op| name == format!("d{op}"))
                    .ok_or_else(|| {
                        syn::Error::new(wrt.span(), "expected `d/d<operand>`, e.g. `d/dx`")
                    })?;
                derivatives[index] = Some(lit);
            } else if look.peek(kw::derivative_helpers) {
                input.parse::<kw::derivative_helpers>()?;
                input.parse::<Token![=]>()?;
                let content;
                bracketed!(content in input);
                let list: Punctuated<Expr, Token![,]> =
                    content.parse_terminated(Expr::parse, Token![,])?;
                derivative_helpers = list.into_iter().collect();
            } else if look.peek(kw::result) {
                input.parse::<kw::result>()?;
                input.parse::<Token![=]>()?;
                let r: Ident = input.parse()?;
                if !["real", "promote", "same", "int"].contains(&r.to_string().as_str()) {
                    return Err(syn::Error::new(
                        r.span(),
                        "result must be one of: real, promote, same, int",
                    ));
                }
                result = Some(r);
            } else if look.peek(kw::view) {
                input.parse::<kw::view>()?;
                input.parse::<Token![=]>()?;
                let v: Ident = input.parse()?;
                if !["keep", "entire", "union", "intersection", "first"]
                    .contains(&v.to_string().as_str())
                {
                    return Err(syn::Error::new(
                        v.span(),
                        "view must be one of: keep, entire, union, intersection, first",
                    ));
                }
                view = Some(v);
            } else if look.peek(kw::helpers) {
                input.parse::<kw::helpers>()?;
                input.parse::<Token![=]>()?;
                let content;
                bracketed!(content in input);
                let list: Punctuated<Expr, Token![,]> =
                    content.parse_terminated(Expr::parse, Token![,])?;
                helpers = list.into_iter().collect();
            } else if look.peek(kw::example) {
                input.parse::<kw::example>()?;
                input.parse::<Token![=]>()?;
                example = input.parse::<LitBool>()?.value;
            } else {
                return Err(look.error());
            }
            input.parse::<Token![;]>()?;
        }
        let result =
            result.ok_or_else(|| syn::Error::new(Span::call_site(), "missing `result = ...;`"))?;
        let view =
            view.ok_or_else(|| syn::Error::new(Span::call_site(), "missing `view = ...;`"))?;
        Ok(Decl {
            krate,
            attrs,
            node,
            function,
            operands,
            template,
            result,
            view,
            helpers,
            example,
            derivatives,
            derivative_helpers,
        })
    }
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let d: Decl = syn::parse2(input)?;
    let k = &d.krate;
    let unary = d.operands.len() == 1;
    let template = &d.template;
    let helpers = &d.helpers;
    let function = &d.function;
    let (struct_path, new_struct) = match &d.node {
        Node::New { vis, name } => (quote!(#name), Some((vis.clone(), name.clone()))),
        Node::Existing(p) => (quote!(#p), None),
    };
    let scalar_of = |t: TokenStream| -> TokenStream {
        match d.result.to_string().as_str() {
            "real" => quote!(<#t as #k::RealOf>::Real),
            "int" => quote!(i32),
            _ => t,
        }
    };
    let view_of = |a: TokenStream, b: TokenStream| -> TokenStream {
        match d.view.to_string().as_str() {
            "keep" | "first" => a,
            "entire" => quote!(#k::View::Entire),
            "union" => quote!(#a.union(#b)),
            _ => quote!(#a.intersection(#b)),
        }
    };
    // Functions get operands of their floating type (`exp(int)` is ambiguous
    // in OpenCL C); operators and comparisons rely on C's usual conversions,
    // which match `Promote`.
    let (convert_x, convert_y) = if d.result == "real" {
        (
            quote!(let x = #k::convert::<A::Scalar, Self::Scalar>(&x);),
            quote!(let y = #k::convert::<B::Scalar, Self::Scalar>(&y);),
        )
    } else {
        (quote!(), quote!())
    };
    let is_int = d.result == "int";
    let derivative_helpers = &d.derivative_helpers;
    let differentiable = !is_int && d.derivatives.iter().all(Option::is_some);
    let derivative = |index: usize| -> TokenStream {
        match d.derivatives.get(index).and_then(Option::as_ref) {
            Some(lit) => quote!(#lit),
            None => quote!(""),
        }
    };
    let operation_impl = if unary {
        let scalar = scalar_of(quote!(A::Scalar));
        let dependence = if is_int {
            quote!(#k::rev::Constant)
        } else {
            quote!(A::Dependence)
        };
        let dx = derivative(0);
        let tangents = if differentiable {
            quote! {
                fn generate_tangents(&self, g: &mut #k::Generator, at: &#k::Index) -> #k::Result<#k::rev::Dual> {
                    let a = self.0.generate_tangents(g, at)?;
                    let x = a.value.clone();
                    #convert_x
                    let cl_type = <Self::Scalar as #k::ClType>::CL_NAME;
                    #( g.helper(#k::instantiate(#helpers, cl_type)); )*
                    let res = g.declare_pure(cl_type, &#k::expand(#template, cl_type, &[&x]));
                    if !a.is_variable() {
                        return Ok(#k::rev::Dual::constant(res));
                    }
                    #( g.helper(#k::instantiate(#derivative_helpers, cl_type)); )*
                    let dx = #k::rev::local_derivative(g, cl_type, #dx, &res, &[&x]);
                    let tangents = #k::rev::Dual::chain(g, cl_type, &[(&a, dx.as_str())]);
                    Ok(#k::rev::Dual { value: res, tangents })
                }
            }
        } else {
            quote!()
        };
        let bound = if d.result == "real" {
            quote!(where A::Scalar: #k::RealOf)
        } else {
            quote!()
        };
        let view = view_of(quote!(self.0.view()), quote!(self.0.view()));
        quote! {
            impl<A: #k::rev::Depends> #k::rev::Depends for #struct_path<A> {
                type Dependence = #dependence;
            }
            impl<A: #k::rev::Differentiable> #k::rev::Differentiable for #struct_path<A> #bound {
                #tangents
                fn record_leaves(&self, reads: #k::rev::ProductReads) -> #k::Result<()> {
                    self.0.record_leaves(reads)
                }
            }
            impl<A: #k::Operation> #k::Operation for #struct_path<A> #bound {
                type Scalar = #scalar;
                type Key = #struct_path<A::Key>;
                fn shape(&self) -> #k::Result<#k::Shape> {
                    self.0.shape()
                }
                fn view(&self) -> #k::View {
                    #view
                }
                fn generate(&self, g: &mut #k::Generator, at: &#k::Index) -> ::std::string::String {
                    let x = self.0.generate(g, at);
                    #convert_x
                    let cl_type = <Self::Scalar as #k::ClType>::CL_NAME;
                    #( g.helper(#k::instantiate(#helpers, cl_type)); )*
                    g.declare_pure(cl_type, &#k::expand(#template, cl_type, &[&x]))
                }
                fn bind<'a>(&'a self, b: &mut #k::Binder<'a>) {
                    self.0.bind(b)
                }
                fn evaluate_leaves(&self, held: #k::HeldProduct) -> #k::Result<()> {
                    self.0.evaluate_leaves(held)
                }
                fn contains_reduction(&self) -> bool {
                    self.0.contains_reduction()
                }
                fn epilogue_product(&self) -> ::std::option::Option<&dyn #k::EpilogueProduct> {
                    self.0.epilogue_product()
                }
            }
        }
    } else {
        let promoted = quote!(<A::Scalar as #k::Promote<B::Scalar>>::Output);
        let scalar = scalar_of(promoted.clone());
        let bound = if d.result == "real" {
            quote!(where A::Scalar: #k::Promote<B::Scalar>, #promoted: #k::RealOf)
        } else {
            quote!(where A::Scalar: #k::Promote<B::Scalar>)
        };
        let view = view_of(quote!(self.0.view()), quote!(self.1.view()));
        let name = function.to_string();
        let dependence = if is_int {
            quote!(#k::rev::Constant)
        } else {
            quote!(#k::rev::Both<A::Dependence, B::Dependence>)
        };
        let (dx, dy) = (derivative(0), derivative(1));
        let tangents = if differentiable {
            quote! {
                fn generate_tangents(&self, g: &mut #k::Generator, at: &#k::Index) -> #k::Result<#k::rev::Dual> {
                    let a = self.0.generate_tangents(g, at)?;
                    let b = self.1.generate_tangents(g, at)?;
                    let (x, y) = (a.value.clone(), b.value.clone());
                    #convert_x
                    #convert_y
                    let cl_type = <Self::Scalar as #k::ClType>::CL_NAME;
                    #( g.helper(#k::instantiate(#helpers, cl_type)); )*
                    let res = g.declare_pure(cl_type, &#k::expand(#template, cl_type, &[&x, &y]));
                    if !a.is_variable() && !b.is_variable() {
                        return Ok(#k::rev::Dual::constant(res));
                    }
                    #( g.helper(#k::instantiate(#derivative_helpers, cl_type)); )*
                    let dx = if a.is_variable() {
                        #k::rev::local_derivative(g, cl_type, #dx, &res, &[&x, &y])
                    } else {
                        ::std::string::String::new()
                    };
                    let dy = if b.is_variable() {
                        #k::rev::local_derivative(g, cl_type, #dy, &res, &[&x, &y])
                    } else {
                        ::std::string::String::new()
                    };
                    let tangents = #k::rev::Dual::chain(g, cl_type, &[(&a, dx.as_str()), (&b, dy.as_str())]);
                    Ok(#k::rev::Dual { value: res, tangents })
                }
            }
        } else {
            quote!()
        };
        quote! {
            impl<A: #k::rev::Depends, B: #k::rev::Depends> #k::rev::Depends for #struct_path<A, B> {
                type Dependence = #dependence;
            }
            impl<A: #k::rev::Differentiable, B: #k::rev::Differentiable> #k::rev::Differentiable for #struct_path<A, B> #bound {
                #tangents
                fn record_leaves(&self, reads: #k::rev::ProductReads) -> #k::Result<()> {
                    self.0.record_leaves(reads)?;
                    self.1.record_leaves(reads)
                }
            }
            impl<A: #k::Operation, B: #k::Operation> #k::Operation for #struct_path<A, B> #bound {
                type Scalar = #scalar;
                type Key = #struct_path<A::Key, B::Key>;
                fn shape(&self) -> #k::Result<#k::Shape> {
                    #k::combine_shapes(#name, self.0.shape()?, self.1.shape()?)
                }
                fn view(&self) -> #k::View {
                    #view
                }
                fn generate(&self, g: &mut #k::Generator, at: &#k::Index) -> ::std::string::String {
                    let x = self.0.generate(g, at);
                    let y = self.1.generate(g, at);
                    #convert_x
                    #convert_y
                    let cl_type = <Self::Scalar as #k::ClType>::CL_NAME;
                    #( g.helper(#k::instantiate(#helpers, cl_type)); )*
                    g.declare_pure(cl_type, &#k::expand(#template, cl_type, &[&x, &y]))
                }
                fn bind<'a>(&'a self, b: &mut #k::Binder<'a>) {
                    self.0.bind(b);
                    self.1.bind(b);
                }
                fn evaluate_leaves(&self, held: #k::HeldProduct) -> #k::Result<()> {
                    self.0.evaluate_leaves(held)?;
                    self.1.evaluate_leaves(held)
                }
                fn contains_reduction(&self) -> bool {
                    self.0.contains_reduction() || self.1.contains_reduction()
                }
                fn epilogue_product(&self) -> ::std::option::Option<&dyn #k::EpilogueProduct> {
                    self.0.epilogue_product().or_else(|| self.1.epilogue_product())
                }
            }
        }
    };
    let Some((vis, name)) = new_struct else {
        return Ok(operation_impl);
    };
    let attrs = &d.attrs;
    let fname = function.to_string();
    let struct_doc = format!("The node built by [`{fname}()`](fn@{fname}).");
    let method_trait = format_ident!("{}Method", name);
    let example = if d.example {
        let call = if unary {
            format!("{fname}(&a)")
        } else {
            format!("{fname}(&a, 0.75f64)")
        };
        format!(
            "\n\n```\nuse clfuse_ops::prelude::*;\nlet a = MatrixCl::from_slice(1, 2, &[0.25f64, 0.5])?;\nlet r = {call}.eval()?;\nassert_eq!(r.to_vec()?.len(), 2);\n# Ok::<(), clfuse_ops::Error>(())\n```"
        )
    } else {
        String::new()
    };
    let fn_doc = format!(
        "Element-wise `{fname}` (OpenCL C: `{}`).{example}",
        template.value()
    );
    let method_doc = format!("Element-wise `{fname}`; see [`{fname}()`](fn@{fname}).");
    let trait_doc = format!("`.{fname}(..)` as a method of matrices and expressions.");
    let items = if unary {
        quote! {
            #(#attrs)*
            #[doc = #struct_doc]
            #[derive(Debug, Clone, Copy)]
            #vis struct #name<A>(pub A);

            #[doc = #fn_doc]
            #vis fn #function<A: #k::IntoOperand>(a: A) -> #k::Expr<#name<A::Operand>> {
                #k::Expr(#name(a.into_operand()))
            }

            #[doc = #trait_doc]
            #vis trait #method_trait: #k::IntoOperand + Sized {
                #[doc = #method_doc]
                fn #function(self) -> #k::Expr<#name<Self::Operand>> {
                    #k::Expr(#name(self.into_operand()))
                }
            }
            impl<O> #method_trait for #k::Expr<O> {}
            impl<'a, O> #method_trait for &'a #k::Expr<O> {}
            impl<'a, T: #k::ClType> #method_trait for &'a #k::MatrixCl<T> {}
            impl<'a, T: #k::ClType> #method_trait for &'a #k::rev::Var<T> {}
        }
    } else {
        quote! {
            #(#attrs)*
            #[doc = #struct_doc]
            #[derive(Debug, Clone, Copy)]
            #vis struct #name<A, B>(pub A, pub B);

            #[doc = #fn_doc]
            #vis fn #function<A: #k::IntoOperand, B: #k::IntoOperand>(a: A, b: B) -> #k::Expr<#name<A::Operand, B::Operand>> {
                #k::Expr(#name(a.into_operand(), b.into_operand()))
            }

            #[doc = #trait_doc]
            #vis trait #method_trait: #k::IntoOperand + Sized {
                #[doc = #method_doc]
                fn #function<B: #k::IntoOperand>(self, b: B) -> #k::Expr<#name<Self::Operand, B::Operand>> {
                    #k::Expr(#name(self.into_operand(), b.into_operand()))
                }
            }
            impl<O> #method_trait for #k::Expr<O> {}
            impl<'a, O> #method_trait for &'a #k::Expr<O> {}
            impl<'a, T: #k::ClType> #method_trait for &'a #k::MatrixCl<T> {}
            impl<'a, T: #k::ClType> #method_trait for &'a #k::rev::Var<T> {}
        }
    };
    Ok(quote! {
        #items
        #operation_impl
    })
}
