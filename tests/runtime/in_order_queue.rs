//! The in-order queue path: the same dependent chain with the queue forced in-order.

use clfuse::Result;
use clfuse::prelude::*;
use clfuse::{QueueMode, Runtime, RuntimeConfig};

use crate::common;

#[test]
fn chain_on_an_in_order_queue() -> Result<()> {
    // Alone in its process: configures the runtime before its first use.
    if common::process::run_alone("in_order_queue::chain_on_an_in_order_queue") {
        return Ok(());
    }
    clfuse::configure(RuntimeConfig {
        queue: QueueMode::InOrder,
        ..RuntimeConfig::from_env()?
    })?;
    assert!(!Runtime::get()?.out_of_order());
    common::dependent_chain()?;
    let a = MatrixCl::from_slice(2, 1, &[1.0f32, 2.0])?;
    assert_eq!((&a + &a).eval()?.to_vec()?, vec![2.0, 4.0]);
    Ok(())
}
