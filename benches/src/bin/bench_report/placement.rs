//! Whether a small kernel's speed follows its buffers, the compute unit it
//! runs on, the device or the host (#35: on H200s every process ran all
//! its diamonds calls at one of two speeds, 55–68 or 72–93 µs a call;
//! neither the data's buffers nor the context picked the speed). On three
//! H200 hosts (2026-11-29, BENCHMARKS.md) the chains ran alike in every
//! process and the host's cost to queue a launch took the two speeds.
//!
//! A call's sweeps are one work-group each: member after member, each
//! member's stores, a barrier with a global fence, the next member's
//! loads. The probe times that pattern alone, a chain of such rounds in
//! one work-group, on buffers allocated apart from one another (small and
//! large allocations between them), each launch noting the compute unit it
//! ran on (`%smid` on NVIDIA); then the diamonds call, as the `dist` suite
//! times it; then the chains again. Comparing processes then says whether
//! the chain's latency moves with the call's speed, and with what.

use crate::timing::{measure, median_min_max};
use crate::workloads::Ctx;
use clfuse::clfuse_core::NdRange;
use clfuse::{MatrixCl, Result, Runtime};
use std::time::Instant;

clfuse::clfuse_core::kernel! {
    /// `steps` rounds of: each work item loads its neighbour's cell, a
    /// barrier, stores its own, a barrier (both with global fences). Item 0
    /// notes the compute unit in `units[launch]` where `SM_ID` is defined.
    fn latency_chain(inout cells: f64, out units: i32, steps: i32, launch: i32) = source "
__kernel void latency_chain(__global double* cells, __global int* units, int steps, int launch) {
  const int item = get_local_id(0);
  const int next = (item + 1) % (int)get_local_size(0);
  for (int k = 0; k < steps; k++) {
    const double carried = cells[next];
    barrier(CLK_GLOBAL_MEM_FENCE);
    cells[item] = carried + 1.0;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
#ifdef SM_ID
  if (item == 0) {
    uint unit;
    asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(unit));
    units[launch] = (int)unit;
  }
#else
  if (item == 0) units[launch] = -1;
#endif
}";
}

/// Work items of the chain's one work-group (two warps).
const ITEMS: usize = 64;
/// Rounds per launch: 2 × 100 barriers with global fences.
const STEPS: i32 = 100;
/// Launches per timed repetition (queued together, then waited for).
const LAUNCHES: usize = 20;

/// A repetition's times (median, least, greatest) per launch of its
/// `LAUNCHES`.
fn per_launch((median, least, greatest): (f64, f64, f64)) -> (f64, f64, f64) {
    let launches = LAUNCHES as f64;
    (median / launches, least / launches, greatest / launches)
}

/// Queues `LAUNCHES` chains of `steps` rounds on `cells`, each noting its
/// compute unit in `units`.
fn queue_chains(
    (cells, units): (&MatrixCl<f64>, &MatrixCl<i32>),
    steps: i32,
    options: &str,
) -> Result<()> {
    for launch in 0..LAUNCHES {
        latency_chain().launch_with_options(
            NdRange::d1(ITEMS).with_local(&[ITEMS]),
            options,
            (cells, units, steps, launch as i32),
        )?;
    }
    Ok(())
}

/// The probe: chains on `buffers` buffers allocated apart (two passes),
/// the diamonds call (`copies` copies of its data, as `--copies` times
/// them), then the chains again (a third pass).
pub fn suite(ctx: &mut Ctx, buffers: usize, copies: (usize, bool)) -> Result<()> {
    let rt = Runtime::get()?;
    let options = if rt.device_info().nv_compute_capability.is_some() {
        "-D SM_ID"
    } else {
        ""
    };
    // Kept alive until the end, so that each chain buffer stays where the
    // allocations before it put it.
    let mut spacers = Vec::new();
    let mut chains = Vec::with_capacity(buffers);
    for _ in 0..buffers.max(1) {
        for _ in 0..256 {
            spacers.push(MatrixCl::<f64>::zeros(1, 1)?);
        }
        spacers.push(MatrixCl::<f64>::zeros(1 << 20, 1)?);
        chains.push((
            MatrixCl::<f64>::zeros(ITEMS, 1)?,
            MatrixCl::<i32>::zeros(LAUNCHES, 1)?,
        ));
    }
    let workload = format!(
        "latency chain: one work-group of {ITEMS}, {STEPS} rounds of load, barrier, store, barrier"
    );
    let pass = |ctx: &mut Ctx, pass: usize| -> Result<()> {
        for (buffer, (cells, units)) in chains.iter().enumerate() {
            let t = measure(ctx.reps, || queue_chains((cells, units), STEPS, options))?;
            let mut seen = units.to_vec()?;
            seen.sort_unstable();
            seen.dedup();
            ctx.push(
                &workload,
                &format!("buffer {buffer}, pass {pass}, compute units {seen:?}"),
                ITEMS,
                0.0,
                0.0,
                per_launch(t),
            );
        }
        Ok(())
    };
    pass(ctx, 1)?;
    pass(ctx, 2)?;
    launch_costs(ctx, &chains[0], options)?;
    crate::dist::diamonds_copies(ctx, copies)?;
    pass(ctx, 3)?;
    drop(spacers);
    Ok(())
}

/// What a launch of the chain costs with no rounds, and with ten times the
/// rounds: queued and finished (per launch), and the host's queuing alone
/// (the `LAUNCHES` enqueues, before the wait). If a process's speed is the
/// device's, the rounds' share moves with it; if the host's, the queuing.
fn launch_costs(
    ctx: &mut Ctx,
    (cells, units): &(MatrixCl<f64>, MatrixCl<i32>),
    options: &str,
) -> Result<()> {
    let rt = Runtime::get()?;
    let workload = "latency chain: cost per launch by rounds";
    for steps in [0, 10 * STEPS] {
        let launches = || queue_chains((cells, units), steps, options);
        let t = measure(ctx.reps, launches)?;
        ctx.push(
            workload,
            &format!("{steps} rounds, queued and finished"),
            ITEMS,
            0.0,
            0.0,
            per_launch(t),
        );
        let mut queuing = Vec::with_capacity(ctx.reps);
        for _ in 0..ctx.reps.max(1) {
            let start = Instant::now();
            launches()?;
            queuing.push(start.elapsed().as_secs_f64());
            rt.finish()?;
        }
        ctx.push(
            workload,
            &format!("{steps} rounds, the host queuing them"),
            ITEMS,
            0.0,
            0.0,
            per_launch(median_min_max(queuing)),
        );
    }
    Ok(())
}
