//! `clfuse::nuts`'s multi-chain front end (feature `nuts`): the
//! diagnostics against ArviZ on fixed draws, sampling models with known
//! posteriors, seeded reproducibility, initial points, invalid settings and
//! the fit's tables. One test binary (`cargo test --features nuts --test
//! nuts`), a module per topic.

mod batched;
mod constrained;
mod diagnostics;
mod fit;
mod front_end;
mod settings;
mod split;
