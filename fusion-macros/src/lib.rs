//! Procedural macros of fusion.
//!
//! - `elementwise_impl!`: an element-wise operation from its OpenCL C snippet
//!   (struct, `Operation` impl, free function, method). Used through
//!   `clfuse_ops::elementwise!`, which supplies the crate path.
//! - `kernel_impl!`: a hand-written kernel's typed launcher, its Rust argument
//!   list checked against the OpenCL C parameter list at compile time. Used
//!   through `clfuse_core::kernel!`.

mod elementwise;
mod kernel;

use proc_macro::TokenStream;

/// Declares an element-wise operation; see `clfuse_ops::elementwise!`.
#[proc_macro]
pub fn elementwise_impl(input: TokenStream) -> TokenStream {
    elementwise::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares a typed hand-written kernel; see `clfuse_core::kernel!`.
#[proc_macro]
pub fn kernel_impl(input: TokenStream) -> TokenStream {
    kernel::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
