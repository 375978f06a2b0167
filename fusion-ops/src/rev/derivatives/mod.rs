//! The derivatives of the engine's hand-written operations (element-wise
//! functions declare theirs in their `elementwise!` line). Each file follows
//! the engine module whose nodes it differentiates.

mod evaluated;
mod leaves;
mod structural;
