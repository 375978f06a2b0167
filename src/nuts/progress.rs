//! Progress bars of a run ([`Sampler::progress`](super::Sampler::progress)):
//! one per chain, on stderr.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bars of one run; none when progress is off.
pub(crate) struct RunProgress {
    // Kept so that the bars draw together for the whole run.
    _multi: Option<MultiProgress>,
    bars: Vec<Option<ProgressBar>>,
}

impl RunProgress {
    /// A bar of `iterations` per chain on stderr, or nothing.
    pub(crate) fn new(enabled: bool, chains: usize, iterations: u64) -> Self {
        if !enabled {
            return RunProgress {
                _multi: None,
                bars: vec![None; chains],
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        // The template is a constant: should indicatif refuse it, plain bars remain.
        let style = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} ({eta}) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bars = (0..chains)
            .map(|c| {
                Some(
                    multi.add(
                        ProgressBar::new(iterations)
                            .with_style(style.clone())
                            .with_prefix(format!("chain {}", c + 1)),
                    ),
                )
            })
            .collect();
        RunProgress {
            _multi: Some(multi),
            bars,
        }
    }

    /// Chain `chain`'s bar (a no-op one when progress is off).
    pub(crate) fn bar(&self, chain: usize) -> ChainProgress {
        ChainProgress(self.bars.get(chain).cloned().flatten())
    }
}

/// One chain's bar.
pub(crate) struct ChainProgress(Option<ProgressBar>);

impl ChainProgress {
    /// One iteration done.
    pub(crate) fn step(&self, tuning: bool, divergences: usize, step_size: f64) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
            // A new message per iteration would allocate in the sampling
            // loop; every 16th is often enough for the eye.
            if bar.position() % 16 == 1 {
                let phase = if tuning { "warm-up" } else { "sampling" };
                bar.set_message(format!(
                    "{phase}, step {step_size:.3}, {divergences} divergent"
                ));
            }
        }
    }

    /// The chain is done (`ok`) or failed.
    pub(crate) fn finish(&self, ok: bool) {
        if let Some(bar) = &self.0 {
            if ok {
                bar.finish_with_message("done");
            } else {
                bar.abandon_with_message("failed");
            }
        }
    }
}
