//! `clfuse::dist`: every density's value against statrs (or the density
//! written plainly where statrs lacks it), its gradient in every variable
//! against finite differences, its argument checks, and the edges of its
//! support. One test binary (`cargo test --test dist`); one test per
//! density, each a line of a table (`continuous.rs`, `discrete.rs`).
//! `FUSION_SOAK=1` adds larger sizes and the form with `1 x 1` variable
//! parameters for every density (by default for a representative third).

#[path = "../common/mod.rs"]
mod common;

mod api;
mod categorical;
mod cdf;
mod checks;
mod continuous;
mod deferred_checks;
mod discrete;
mod mixture;
mod multi_normal;
mod multivariate;
mod random;
mod random_forms;
mod support;
