//! report.json, report.md and the PNG plots.

use crate::timing::Record;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

pub struct DeviceLine {
    pub device: String,
    pub driver: String,
    pub platform: String,
}

/// report.json: the device line, the command and every record.
#[derive(serde::Serialize)]
pub struct Report<'a> {
    pub device: &'a str,
    pub driver: &'a str,
    pub platform: &'a str,
    pub command: &'a str,
    pub records: Vec<RecordJson<'a>>,
}

/// One record of report.json, with its derived rates.
#[derive(serde::Serialize)]
pub struct RecordJson<'a> {
    #[serde(flatten)]
    pub record: &'a Record,
    pub device: &'a str,
    pub driver: &'a str,
    pub gbps: f64,
    pub tflops: f64,
}

pub fn json<'a>(records: &'a [Record], dev: &'a DeviceLine, command: &'a str) -> Report<'a> {
    Report {
        device: &dev.device,
        driver: &dev.driver,
        platform: &dev.platform,
        command,
        records: records
            .iter()
            .map(|r| RecordJson {
                record: r,
                device: &dev.device,
                driver: &dev.driver,
                gbps: if r.bytes > 0.0 { r.gbps() } else { 0.0 },
                tflops: if r.flops > 0.0 {
                    r.flops / r.median_s / 1e12
                } else {
                    0.0
                },
            })
            .collect(),
    }
}

fn fmt_time(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// Peak measured copy bandwidth (GB/s).
pub fn copy_peak(records: &[Record]) -> f64 {
    records
        .iter()
        .filter(|r| r.workload == "copy")
        .map(Record::gbps)
        .fold(0.0, f64::max)
}

/// Compute-bound workloads: TFLOP/s, and the speedup over the CPU (faer)
/// measured in the same run.
fn flops_table(out: &mut String, rows: &[&Record]) {
    out.push_str("| n | variant | median | min | max | TFLOP/s | speedup vs CPU |\n|---|---|---|---|---|---|---|\n");
    let mut by_n: BTreeMap<usize, Vec<&Record>> = BTreeMap::new();
    for r in rows {
        by_n.entry(r.n).or_default().push(r);
    }
    for (n, rs) in by_n {
        let cpu = rs
            .iter()
            .find(|r| r.variant.contains("CPU"))
            .map(|r| r.median_s);
        for r in rs {
            let speedup = match cpu {
                Some(c) if !r.variant.contains("CPU") => format!("{:.1}x", c / r.median_s),
                _ => String::new(),
            };
            out.push_str(&format!(
                "| {n} | {} | {} | {} | {} | {:.2} | {speedup} |\n",
                r.variant,
                fmt_time(r.median_s),
                fmt_time(r.min_s),
                fmt_time(r.max_s),
                r.flops / r.median_s / 1e12
            ));
        }
    }
    out.push('\n');
}

pub fn markdown(records: &[Record], dev: &DeviceLine, command: &str, date: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "# fusion benchmark report\n\n- device: {} ({})\n- driver: {}\n- date: {date}\n- command: `{command}`\n- timing: median of {} repetitions after a warm-up, each ending with clFinish; GB/s = bytes that must move / median time\n\n",
        dev.device,
        dev.platform,
        dev.driver,
        records.iter().map(|r| r.repetitions).max().unwrap_or(0),
    ));
    let peak = copy_peak(records);
    if peak > 0.0 {
        out.push_str(&format!(
            "Measured device copy bandwidth (clEnqueueCopyBuffer, best size): **{peak:.1} GB/s**\n\n"
        ));
    }
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let rows: Vec<&Record> = records.iter().filter(|r| r.workload == w).collect();
        out.push_str(&format!("## {w}\n\n"));
        if w.starts_with("host cost") {
            out.push_str("| variant | time per launch | relative to raw |\n|---|---|---|\n");
            let raw_plain = rows
                .iter()
                .find(|r| r.variant.starts_with("raw opencl3 ExecuteKernel"))
                .map(|r| r.median_s);
            let raw_gen = rows
                .iter()
                .find(|r| {
                    r.variant
                        .starts_with("raw opencl3 enqueue of the generated")
                })
                .map(|r| r.median_s);
            for r in &rows {
                let base = if r.variant.contains("c*(a+b)") {
                    raw_gen
                } else {
                    raw_plain
                };
                let rel = base.map_or(String::new(), |b| format!("{:.2}x", r.median_s / b));
                out.push_str(&format!(
                    "| {} | {} | {rel} |\n",
                    r.variant,
                    fmt_time(r.median_s)
                ));
            }
            out.push('\n');
            continue;
        }
        if crate::seeds::is_seed_workload(w) {
            seeds_table(&mut out, &rows);
            continue;
        }
        if rows.iter().any(|r| r.flops > 0.0) {
            flops_table(&mut out, &rows);
            continue;
        }
        out.push_str("| n | variant | median | min | max | GB/s | % of copy | speedup vs chain |\n|---|---|---|---|---|---|---|---|\n");
        let mut by_n: BTreeMap<usize, Vec<&Record>> = BTreeMap::new();
        for r in rows {
            by_n.entry(r.n).or_default().push(r);
        }
        for (n, rs) in by_n {
            let chain = rs.iter().find(|r| r.variant == "chain").map(|r| r.median_s);
            for r in rs {
                let speedup = match (chain, r.variant.as_str()) {
                    (Some(c), v) if v != "chain" && r.bytes > 0.0 => {
                        format!("{:.2}x", c / r.median_s)
                    }
                    _ => String::new(),
                };
                let (gbps, pct) = if r.bytes > 0.0 {
                    (
                        format!("{:.1}", r.gbps()),
                        if peak > 0.0 {
                            format!("{:.0}%", 100.0 * r.gbps() / peak)
                        } else {
                            String::new()
                        },
                    )
                } else {
                    (String::new(), String::new())
                };
                out.push_str(&format!(
                    "| {n} | {} | {} | {} | {} | {gbps} | {pct} | {speedup} |\n",
                    r.variant,
                    fmt_time(r.median_s),
                    fmt_time(r.min_s),
                    fmt_time(r.max_s)
                ));
            }
        }
        out.push('\n');
    }
    if records
        .iter()
        .any(|r| r.variant.contains("CPU") && r.flops > 0.0)
    {
        out.push_str("![GPU vs CPU](gpu_vs_cpu.png)\n\n");
    }
    if records.iter().any(|r| r.variant == "fused") {
        out.push_str("![speedup](speedup.png)\n\n![bandwidth](bandwidth.png)\n");
    }
    out
}

/// A seeds workload: each size's device time, and each CPU peer's time with
/// the device's speedup over it.
fn seeds_table(out: &mut String, rows: &[&Record]) {
    out.push_str("| n | variant | median | min | max | device speedup over it |\n|---|---|---|---|---|---|\n");
    let mut by_n: BTreeMap<usize, Vec<&Record>> = BTreeMap::new();
    for r in rows {
        by_n.entry(r.n).or_default().push(r);
    }
    for (n, rs) in by_n {
        let device = rs
            .iter()
            .find(|r| r.variant == crate::seeds::DEVICE)
            .map(|r| r.median_s);
        for r in rs {
            let speedup = match device {
                Some(d) if r.variant != crate::seeds::DEVICE => format!("{:.2}x", r.median_s / d),
                _ => String::new(),
            };
            out.push_str(&format!(
                "| {n} | {} | {} | {} | {} | {speedup} |\n",
                r.variant,
                fmt_time(r.median_s),
                fmt_time(r.min_s),
                fmt_time(r.max_s)
            ));
        }
    }
    out.push('\n');
    if let Some(first) = rows.first() {
        out.push_str(&format!(
            "![{}]({})\n\n",
            first.workload,
            seeds_plot_name(&first.workload)
        ));
    }
}

/// The file name of a seeds workload's plot.
fn seeds_plot_name(workload: &str) -> String {
    let slug: String = workload
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let slug: Vec<&str> = slug.split('_').filter(|s| !s.is_empty()).collect();
    format!("seeds_{}.png", slug.join("_"))
}

/// One plot per seeds workload: the device's speedup over each CPU peer.
fn seeds_plots(records: &[Record], dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if crate::seeds::is_seed_workload(&r.workload) && !workloads.contains(&r.workload.as_str())
        {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let mut series: Series = Vec::new();
        for r in records
            .iter()
            .filter(|r| r.workload == w && r.variant != crate::seeds::DEVICE)
        {
            let device = records
                .iter()
                .find(|d| d.workload == w && d.n == r.n && d.variant == crate::seeds::DEVICE);
            if let Some(d) = device {
                let point = (r.n as f64, r.median_s / d.median_s);
                let name = format!("over {}", r.variant);
                match series.iter_mut().find(|(s, _)| *s == name) {
                    Some((_, points)) => points.push(point),
                    None => series.push((name, vec![point])),
                }
            }
        }
        for (_, points) in &mut series {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let x_label = if w.starts_with("Figure 5") || w.starts_with("Figure 7") {
            "n (matrix size)"
        } else {
            "N (rows of data)"
        };
        line_plot(
            &dir.join(seeds_plot_name(w)),
            w,
            x_label,
            "device speedup (CPU time / device time)",
            &series,
            Some((1.0, "1x")),
        )?;
    }
    Ok(())
}

type Series = Vec<(String, Vec<(f64, f64)>)>;

fn line_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &Series,
    hline: Option<(f64, &str)>,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (xmin, xmax) = xs.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let ymax = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(hline.map_or(0.0, |h| h.0), f64::max)
        * 1.15;
    if !xmin.is_finite() || xmax <= xmin || ymax <= 0.0 {
        return Ok(());
    }
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .draw()?;
    for (k, (name, points)) in series.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    if let Some((y, label)) = hline {
        chart
            .draw_series(LineSeries::new(
                vec![(xmin, y), (xmax, y)],
                BLACK.stroke_width(1),
            ))?
            .label(label.to_string())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

pub fn plots(records: &[Record], dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    seeds_plots(records, dir)?;
    let mut speedup: Series = Vec::new();
    let mut bandwidth: Series = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if r.bytes > 0.0 && r.workload != "copy" && !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let fused: Vec<&Record> = records
            .iter()
            .filter(|r| r.workload == w && r.variant == "fused")
            .collect();
        let points: Vec<(f64, f64)> = fused
            .iter()
            .filter_map(|f| {
                records
                    .iter()
                    .find(|c| c.workload == w && c.variant == "chain" && c.n == f.n)
                    .map(|c| (f.n as f64, c.median_s / f.median_s))
            })
            .collect();
        speedup.push((w.to_string(), points));
        bandwidth.push((
            format!("{w} (fused)"),
            fused.iter().map(|f| (f.n as f64, f.gbps())).collect(),
        ));
    }
    line_plot(
        &dir.join("speedup.png"),
        "Fused kernel speedup over a chain of single-operation kernels",
        "n (elements)",
        "speedup (chain time / fused time)",
        &speedup,
        Some((1.0, "1x")),
    )?;
    // Paper Figure 5 style: GPU speedup over the CPU (faer) per routine and size.
    let mut versus_cpu: Series = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.variant.contains("CPU") && r.flops > 0.0)
    {
        let gpu = records
            .iter()
            .find(|g| g.workload == r.workload && g.n == r.n && !g.variant.contains("CPU"));
        if let Some(g) = gpu {
            match versus_cpu.iter_mut().find(|(name, _)| *name == r.workload) {
                Some((_, points)) => points.push((r.n as f64, r.median_s / g.median_s)),
                None => versus_cpu.push((
                    r.workload.clone(),
                    vec![(r.n as f64, r.median_s / g.median_s)],
                )),
            }
        }
    }
    if !versus_cpu.is_empty() {
        line_plot(
            &dir.join("gpu_vs_cpu.png"),
            "Hand-written kernels: speedup over faer on all CPU cores",
            "n (matrix size)",
            "speedup (CPU time / OpenCL time)",
            &versus_cpu,
            Some((1.0, "1x")),
        )?;
    }
    let peak = copy_peak(records);
    line_plot(
        &dir.join("bandwidth.png"),
        "Achieved bandwidth of fused kernels",
        "n (elements)",
        "GB/s (bytes that must move / time)",
        &bandwidth,
        Some((peak, "device copy bandwidth")),
    )?;
    Ok(())
}
