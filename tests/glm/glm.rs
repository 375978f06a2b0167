//! GLM likelihoods against a straightforward CPU reference (value, with
//! Stan's `propto` rules) and every gradient against central finite
//! differences of that reference. Sizes N ∈ {0, 1, 7, 1000, 100000},
//! P ∈ {0, 1, 3, 50}, K ∈ {2, 5}; scalar and vector alpha/sigma/phi.
//! Bounds: value 1e-10 relative; gradients 1e-5 relative to max(|fd|, 1)
//! plus the finite difference's rounding (1e-13·|value|/h).

use crate::common;
use clfuse::Result;
use clfuse::clfuse_ops::RowBlockKind;
use clfuse::glm::*;
use clfuse::prelude::*;
use common::linalg::Rng;
use common::reference::log1p_exp;

const H: f64 = 1e-5;

/// Which terms a CPU reference keeps.
#[derive(Clone, Copy)]
struct Keep {
    constants: bool,
    aux_only: bool,
    everything: bool,
}

impl Keep {
    fn of(propto: bool, wrt: Wrt) -> Keep {
        let any = wrt.alpha || wrt.beta || wrt.x || wrt.aux;
        Keep {
            constants: !propto,
            aux_only: !propto || wrt.aux,
            everything: !propto || any,
        }
    }
}

/// Inputs on the host; `alpha`/`aux` have length 1 (scalar) or n.
#[derive(Clone)]
struct Inputs {
    n: usize,
    p: usize,
    x: Vec<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    aux: Vec<f64>,
}

impl Inputs {
    fn new(
        n: usize,
        p: usize,
        alpha_vector: bool,
        aux_vector: bool,
        aux_base: f64,
        seed: u64,
    ) -> Inputs {
        let mut rng = Rng::new(seed);
        let scale = 1.0 / (p as f64).sqrt();
        Inputs {
            n,
            p,
            x: (0..n * p).map(|_| rng.next() * scale).collect(),
            alpha: (0..if alpha_vector { n } else { 1 })
                .map(|_| 0.3 + 0.2 * rng.next())
                .collect(),
            beta: (0..p).map(|_| rng.next()).collect(),
            aux: (0..if aux_vector { n } else { 1 })
                .map(|_| aux_base + 0.5 * rng.next())
                .collect(),
        }
    }
    fn eta(&self, i: usize) -> f64 {
        let a = if self.alpha.len() == 1 {
            self.alpha[0]
        } else {
            self.alpha[i]
        };
        a + (0..self.p)
            .map(|k| self.x[i + self.n * k] * self.beta[k])
            .sum::<f64>()
    }
    fn aux(&self, i: usize) -> f64 {
        if self.aux.len() == 1 {
            self.aux[0]
        } else {
            self.aux[i]
        }
    }
    fn param<'a>(values: &[f64], device: &'a Option<MatrixCl<f64>>) -> Param<'a> {
        match device {
            Some(m) => Param::Vector(m),
            None => Param::Scalar(values[0]),
        }
    }
}

struct Device {
    x: MatrixCl<f64>,
    beta: MatrixCl<f64>,
    alpha: Option<MatrixCl<f64>>,
    aux: Option<MatrixCl<f64>>,
}

fn upload(inp: &Inputs) -> Device {
    let vector = |v: &[f64]| (v.len() > 1).then(|| MatrixCl::from_slice(v.len(), 1, v).unwrap());
    Device {
        x: MatrixCl::from_slice(inp.n, inp.p, &inp.x).unwrap(),
        beta: MatrixCl::from_slice(inp.p, 1, &inp.beta).unwrap(),
        alpha: vector(&inp.alpha),
        aux: vector(&inp.aux),
    }
}

type Cpu<'a> = dyn Fn(&Inputs, Keep) -> f64 + 'a;
type Gpu<'a> = dyn Fn(&Device, &Inputs, &GlmOptions) -> clfuse::Result<GlmOutput> + 'a;

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} (|diff| {:e} > {tol:e})",
        (got - want).abs()
    );
}

/// Central difference of the reference in one input coordinate.
fn fd(cpu: &Cpu<'_>, inp: &Inputs, field: fn(&mut Inputs) -> &mut Vec<f64>, index: usize) -> f64 {
    let keep = Keep::of(false, Wrt::ALL);
    let (mut plus, mut minus) = (inp.clone(), inp.clone());
    field(&mut plus)[index] += H;
    field(&mut minus)[index] -= H;
    (cpu(&plus, keep) - cpu(&minus, keep)) / (2.0 * H)
}

fn sample(len: usize) -> Vec<usize> {
    if len <= 8 {
        (0..len).collect()
    } else {
        vec![0, 1, len / 3, len / 2, len - 2, len - 1]
    }
}

fn check_model(name: &str, inp: &Inputs, has_aux: bool, cpu: &Cpu<'_>, gpu: &Gpu<'_>) {
    let dev = upload(inp);
    let want = cpu(inp, Keep::of(false, Wrt::ALL));
    let out = gpu(&dev, inp, &GlmOptions::gradients(Wrt::ALL)).unwrap();
    let label = format!(
        "{name} n={} p={} alpha_len={} aux_len={}",
        inp.n,
        inp.p,
        inp.alpha.len(),
        inp.aux.len()
    );
    close(
        &format!("{label}: value"),
        out.value,
        want,
        1e-10 * want.abs().max(1.0),
    );
    let grad_tol = |f: f64| 1e-5 * f.abs().max(1.0) + 1e-13 * want.abs() / H;
    let d_alpha = out.d_alpha().unwrap().to_vec().unwrap();
    assert_eq!(d_alpha.len(), inp.alpha.len());
    for i in sample(inp.alpha.len()) {
        let f = fd(cpu, inp, |s| &mut s.alpha, i);
        close(
            &format!("{label}: d_alpha[{i}]"),
            d_alpha[i],
            f,
            grad_tol(f),
        );
    }
    let d_beta = out.d_beta().unwrap().to_vec().unwrap();
    assert_eq!((out.d_beta().unwrap().rows(), d_beta.len()), (inp.p, inp.p));
    for (k, &got) in d_beta.iter().enumerate() {
        let f = fd(cpu, inp, |s| &mut s.beta, k);
        close(&format!("{label}: d_beta[{k}]"), got, f, grad_tol(f));
    }
    let d_x = out.d_x().unwrap().to_vec().unwrap();
    assert_eq!(d_x.len(), inp.n * inp.p);
    for e in sample(inp.n * inp.p) {
        let f = fd(cpu, inp, |s| &mut s.x, e);
        close(&format!("{label}: d_x[{e}]"), d_x[e], f, grad_tol(f));
    }
    if has_aux {
        let d_aux = out.d_aux().unwrap().to_vec().unwrap();
        assert_eq!(d_aux.len(), inp.aux.len());
        for i in sample(inp.aux.len()) {
            let f = fd(cpu, inp, |s| &mut s.aux, i);
            close(&format!("{label}: d_aux[{i}]"), d_aux[i], f, grad_tol(f));
        }
    } else {
        assert!(out.d_aux().is_err());
    }
    // Only what is asked for is computed; propto follows Stan's rule.
    for (wrt, propto) in [
        (Wrt::NONE, false),
        (Wrt::NONE, true),
        (Wrt::BETA, true),
        (Wrt::AUX, true),
        (Wrt::ALPHA | Wrt::X, true),
    ] {
        let out = gpu(
            &dev,
            inp,
            &GlmOptions {
                wrt,
                propto,
                prefetch: false,
            },
        )
        .unwrap();
        let want = cpu(inp, Keep::of(propto, wrt));
        close(
            &format!("{label}: value wrt={wrt:?} propto={propto}"),
            out.value,
            want,
            1e-10 * want.abs().max(1.0),
        );
        assert_eq!(out.d_alpha().is_ok(), wrt.alpha);
        assert_eq!(out.d_beta().is_ok(), wrt.beta);
        assert_eq!(out.d_x().is_ok(), wrt.x);
        assert_eq!(out.d_aux().is_ok(), wrt.aux && has_aux);
    }
    // Prefetched host gradients are the device gradients.
    let wrt = Wrt::ALPHA | Wrt::BETA;
    let mut prefetched = gpu(
        &dev,
        inp,
        &GlmOptions {
            wrt,
            propto: false,
            prefetch: true,
        },
    )
    .unwrap();
    let plain = gpu(&dev, inp, &GlmOptions::gradients(wrt)).unwrap();
    let (d_alpha, d_beta) = prefetched.host_gradients().unwrap();
    assert_eq!(
        d_alpha,
        Some(plain.d_alpha().unwrap().to_vec().unwrap()),
        "{label}"
    );
    assert_eq!(
        d_beta,
        Some(plain.d_beta().unwrap().to_vec().unwrap()),
        "{label}"
    );
}

const SHAPES: [(usize, usize); 7] = [
    (0, 3),
    (1, 1),
    (7, 3),
    (1000, 50),
    (100_000, 3),
    (1000, 1),
    (7, 0),
];

fn lgamma(v: f64) -> f64 {
    libm::lgamma(v)
}

#[test]
fn bernoulli_logit() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        let y: Vec<i32> = (0..n).map(|i| ((i * 7 + case) % 3 == 0) as i32).collect();
        let cpu = |s: &Inputs, keep: Keep| {
            if !keep.everything {
                return 0.0;
            }
            (0..s.n)
                .map(|i| -log1p_exp(-(2.0 * y[i] as f64 - 1.0) * s.eta(i)))
                .sum::<f64>()
        };
        let gpu = |d: &Device, s: &Inputs, o: &GlmOptions| {
            bernoulli_logit_glm_lpmf(&y, &d.x, Inputs::param(&s.alpha, &d.alpha), &d.beta, o)
        };
        let inp = Inputs::new(n, p, case % 2 == 1 && n > 1, false, 1.0, case as u64);
        check_model("bernoulli_logit", &inp, false, &cpu, &gpu);
    }
}

/// More predictors than a work-group can stage (16 or 32 per work item): the
/// beta gradient's second pass is the row-vector leaf instead of the fused
/// `xᵀ·d`. Against the analytic gradient on the host.
#[test]
fn wide_designs_take_the_row_vector_leaf() -> Result<()> {
    let (n, p) = (5, 4500);
    for kind in [RowBlockKind::ProductAlone, RowBlockKind::WithRowWork] {
        assert_eq!(clfuse::clfuse_ops::staged_row_team(p, kind)?, None);
    }
    let x: Vec<f64> = (0..n * p)
        .map(|k| ((k * 13) % 17) as f64 / 17.0 - 0.5)
        .collect();
    let beta: Vec<f64> = (0..p).map(|k| ((k * 7) % 11) as f64 / 1100.0).collect();
    let y = [1, 0, 0, 1, 1];
    let device_x = MatrixCl::from_slice(n, p, &x)?;
    let device_beta = MatrixCl::from_slice(p, 1, &beta)?;
    let options = GlmOptions::gradients(Wrt::BETA);
    let out = bernoulli_logit_glm_lpmf(&y[..], &device_x, 0.2, &device_beta, &options)?;
    let d_beta = out.d_beta()?.to_vec()?;
    let d_eta: Vec<f64> = (0..n)
        .map(|i| {
            let eta = 0.2 + (0..p).map(|j| x[i + n * j] * beta[j]).sum::<f64>();
            let s = 2.0 * y[i] as f64 - 1.0;
            s / (1.0 + (s * eta).exp())
        })
        .collect();
    for j in 0..p {
        let want: f64 = (0..n).map(|i| x[i + n * j] * d_eta[i]).sum();
        close(&format!("d_beta[{j}]"), d_beta[j], want, 1e-12);
    }
    Ok(())
}

#[test]
fn poisson_log() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        let y: Vec<i32> = (0..n).map(|i| ((i * 7 + case) % 5) as i32).collect();
        let cpu = |s: &Inputs, keep: Keep| {
            if !keep.everything {
                return 0.0;
            }
            (0..s.n)
                .map(|i| {
                    let eta = s.eta(i);
                    let yi = y[i] as f64;
                    yi * eta
                        - eta.exp()
                        - if keep.constants {
                            lgamma(yi + 1.0)
                        } else {
                            0.0
                        }
                })
                .sum::<f64>()
        };
        let gpu = |d: &Device, s: &Inputs, o: &GlmOptions| {
            poisson_log_glm_lpmf(&y, &d.x, Inputs::param(&s.alpha, &d.alpha), &d.beta, o)
        };
        let inp = Inputs::new(n, p, case % 2 == 0 && n > 1, false, 1.0, 10 + case as u64);
        check_model("poisson_log", &inp, false, &cpu, &gpu);
    }
}

#[test]
fn normal_id() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        let y: Vec<f64> = (0..n)
            .map(|i| ((i * 13 + case) % 11) as f64 / 5.0 - 1.0)
            .collect();
        let cpu = |s: &Inputs, keep: Keep| {
            if !keep.everything {
                return 0.0;
            }
            (0..s.n)
                .map(|i| {
                    let sigma = s.aux(i);
                    let z = (y[i] - s.eta(i)) / sigma;
                    -0.5 * z * z
                        - if keep.aux_only { sigma.ln() } else { 0.0 }
                        - if keep.constants {
                            0.5 * (2.0 * std::f64::consts::PI).ln()
                        } else {
                            0.0
                        }
                })
                .sum::<f64>()
        };
        let gpu = |d: &Device, s: &Inputs, o: &GlmOptions| {
            normal_id_glm_lpdf(
                &y,
                &d.x,
                Inputs::param(&s.alpha, &d.alpha),
                &d.beta,
                Inputs::param(&s.aux, &d.aux),
                o,
            )
        };
        let inp = Inputs::new(
            n,
            p,
            case % 2 == 1 && n > 1,
            case % 3 != 0 && n > 1,
            1.5,
            20 + case as u64,
        );
        check_model("normal_id", &inp, true, &cpu, &gpu);
    }
}

#[test]
fn neg_binomial_2_log() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        let y: Vec<i32> = (0..n).map(|i| ((i * 7 + case) % 6) as i32).collect();
        let cpu = |s: &Inputs, keep: Keep| {
            if !keep.everything {
                return 0.0;
            }
            (0..s.n)
                .map(|i| {
                    let (eta, phi, yi) = (s.eta(i), s.aux(i), y[i] as f64);
                    let l = (eta.exp() + phi).ln();
                    let mut t = yi * eta - (yi + phi) * l;
                    if keep.aux_only {
                        t += phi * phi.ln() + lgamma(yi + phi) - lgamma(phi);
                    }
                    if keep.constants {
                        t -= lgamma(yi + 1.0);
                    }
                    t
                })
                .sum::<f64>()
        };
        let gpu = |d: &Device, s: &Inputs, o: &GlmOptions| {
            neg_binomial_2_log_glm_lpmf(
                &y,
                &d.x,
                Inputs::param(&s.alpha, &d.alpha),
                &d.beta,
                Inputs::param(&s.aux, &d.aux),
                o,
            )
        };
        let inp = Inputs::new(
            n,
            p,
            case % 2 == 0 && n > 1,
            case % 2 == 1 && n > 1,
            2.0,
            30 + case as u64,
        );
        check_model("neg_binomial_2_log", &inp, true, &cpu, &gpu);
    }
}

/// Checks a GLM whose beta is `p x cols`, alpha `alpha_len x 1` and auxiliary
/// vector `aux` (the cutpoints) against the reference and finite differences.
#[allow(clippy::too_many_arguments)]
fn check_multi(
    name: &str,
    inp: &Inputs,
    cols: usize,
    has_alpha: bool,
    has_aux: bool,
    cpu: &Cpu<'_>,
    gpu: &dyn Fn(
        &MatrixCl<f64>,
        &MatrixCl<f64>,
        &MatrixCl<f64>,
        &MatrixCl<f64>,
        &GlmOptions,
    ) -> clfuse::Result<GlmOutput>,
) {
    let x = MatrixCl::from_slice(inp.n, inp.p, &inp.x).unwrap();
    let beta = MatrixCl::from_slice(inp.p, cols, &inp.beta).unwrap();
    let alpha = MatrixCl::from_slice(inp.alpha.len(), 1, &inp.alpha).unwrap();
    let aux = MatrixCl::from_slice(inp.aux.len(), 1, &inp.aux).unwrap();
    let label = format!("{name} n={} p={} cols={cols}", inp.n, inp.p);
    let want = cpu(inp, Keep::of(false, Wrt::ALL));
    let out = gpu(&x, &alpha, &beta, &aux, &GlmOptions::gradients(Wrt::ALL)).unwrap();
    close(
        &format!("{label}: value"),
        out.value,
        want,
        1e-10 * want.abs().max(1.0),
    );
    let grad_tol = |f: f64| 1e-5 * f.abs().max(1.0) + 1e-13 * want.abs() / H;
    let mut grads: Vec<(&str, Vec<f64>, fn(&mut Inputs) -> &mut Vec<f64>)> = vec![
        ("d_beta", out.d_beta().unwrap().to_vec().unwrap(), |s| {
            &mut s.beta
        }),
        ("d_x", out.d_x().unwrap().to_vec().unwrap(), |s| &mut s.x),
    ];
    if has_alpha {
        grads.push(("d_alpha", out.d_alpha().unwrap().to_vec().unwrap(), |s| {
            &mut s.alpha
        }));
    } else {
        assert!(out.d_alpha().is_err());
    }
    if has_aux {
        grads.push(("d_aux", out.d_aux().unwrap().to_vec().unwrap(), |s| {
            &mut s.aux
        }));
    }
    for (what, got, field) in grads {
        assert_eq!(
            got.len(),
            field(&mut inp.clone()).len(),
            "{label}: {what} length"
        );
        for i in sample(got.len()) {
            let f = fd(cpu, inp, field, i);
            close(&format!("{label}: {what}[{i}]"), got[i], f, grad_tol(f));
        }
    }
    for (wrt, propto) in [(Wrt::NONE, true), (Wrt::NONE, false), (Wrt::BETA, true)] {
        let out = gpu(
            &x,
            &alpha,
            &beta,
            &aux,
            &GlmOptions {
                wrt,
                propto,
                prefetch: false,
            },
        )
        .unwrap();
        let want = cpu(inp, Keep::of(propto, wrt));
        close(
            &format!("{label}: value wrt={wrt:?} propto={propto}"),
            out.value,
            want,
            1e-10 * want.abs().max(1.0),
        );
        assert_eq!((out.d_beta().is_ok(), out.d_x().is_ok()), (wrt.beta, wrt.x));
    }
}

fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

#[test]
fn categorical_logit() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        for categories in [2usize, 5] {
            let y: Vec<i32> = (0..n)
                .map(|i| ((i * 7 + case) % categories) as i32 + 1)
                .collect();
            let mut inp = Inputs::new(n, p, false, false, 1.0, 40 + case as u64);
            let mut rng = Rng::new(case as u64 + 99);
            inp.beta = (0..p * categories).map(|_| rng.next()).collect();
            inp.alpha = (0..categories).map(|_| rng.next()).collect();
            let cpu = |s: &Inputs, keep: Keep| {
                if !keep.everything {
                    return 0.0;
                }
                (0..s.n)
                    .map(|i| {
                        let lp: Vec<f64> = (0..categories)
                            .map(|c| {
                                s.alpha[c]
                                    + (0..s.p)
                                        .map(|k| s.x[i + s.n * k] * s.beta[k + s.p * c])
                                        .sum::<f64>()
                            })
                            .collect();
                        lp[y[i] as usize - 1] - log_sum_exp(&lp)
                    })
                    .sum::<f64>()
            };
            let gpu = |x: &MatrixCl<f64>,
                       alpha: &MatrixCl<f64>,
                       beta: &MatrixCl<f64>,
                       _: &MatrixCl<f64>,
                       o: &GlmOptions| {
                categorical_logit_glm_lpmf(&y, x, alpha, beta, o)
            };
            check_multi(
                "categorical_logit",
                &inp,
                categories,
                true,
                false,
                &cpu,
                &gpu,
            );
        }
    }
}

#[test]
fn ordered_logistic() {
    for (case, (n, p)) in SHAPES.into_iter().enumerate() {
        for categories in [2usize, 5] {
            let y: Vec<i32> = (0..n)
                .map(|i| ((i * 7 + case) % categories) as i32 + 1)
                .collect();
            let mut inp = Inputs::new(n, p, false, false, 1.0, 50 + case as u64);
            inp.aux = (0..categories - 1).map(|c| -1.0 + 0.7 * c as f64).collect();
            let cpu = |s: &Inputs, keep: Keep| {
                if !keep.everything {
                    return 0.0;
                }
                let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
                (0..s.n)
                    .map(|i| {
                        let eta = (0..s.p).map(|k| s.x[i + s.n * k] * s.beta[k]).sum::<f64>();
                        let yi = y[i] as usize;
                        let upper = if yi == 1 {
                            1.0
                        } else {
                            sigmoid(eta - s.aux[yi - 2])
                        };
                        let lower = if yi == categories {
                            0.0
                        } else {
                            sigmoid(eta - s.aux[yi - 1])
                        };
                        (upper - lower).ln()
                    })
                    .sum::<f64>()
            };
            let gpu = |x: &MatrixCl<f64>,
                       _: &MatrixCl<f64>,
                       beta: &MatrixCl<f64>,
                       cuts: &MatrixCl<f64>,
                       o: &GlmOptions| {
                ordered_logistic_glm_lpmf(&y, x, beta, cuts, o)
            };
            check_multi("ordered_logistic", &inp, 1, false, true, &cpu, &gpu);
        }
    }
}

/// A `1 x 1` device intercept (and scale) gives what the same host scalar gives.
#[test]
fn device_scalars_match_host_scalars() -> Result<()> {
    let (n, p) = (37, 3);
    let xs: Vec<f64> = (0..n * p).map(|k| ((k as f64) * 0.37).sin()).collect();
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let beta = MatrixCl::from_slice(p, 1, &[0.3, -0.2, 0.1])?;
    let binary: Vec<i32> = (0..n).map(|i| (i % 3 == 0) as i32).collect();
    let counts: Vec<i32> = (0..n).map(|i| (i % 4) as i32).collect();
    let reals: Vec<f64> = (0..n).map(|i| (i as f64 * 0.1).cos()).collect();
    let alpha = MatrixCl::from_slice(1, 1, &[0.4])?;
    let scale = MatrixCl::from_slice(1, 1, &[1.7])?;
    let options = GlmOptions::gradients(Wrt::ALL);
    let pairs = [
        (
            bernoulli_logit_glm_lpmf(&binary[..], &x, 0.4, &beta, &options)?,
            bernoulli_logit_glm_lpmf(&binary[..], &x, Param::Device(&alpha), &beta, &options)?,
        ),
        (
            poisson_log_glm_lpmf(&counts[..], &x, 0.4, &beta, &options)?,
            poisson_log_glm_lpmf(&counts[..], &x, Param::Device(&alpha), &beta, &options)?,
        ),
        (
            normal_id_glm_lpdf(&reals[..], &x, 0.4, &beta, 1.7, &options)?,
            normal_id_glm_lpdf(
                &reals[..],
                &x,
                Param::Device(&alpha),
                &beta,
                Param::Device(&scale),
                &options,
            )?,
        ),
        (
            neg_binomial_2_log_glm_lpmf(&counts[..], &x, 0.4, &beta, 1.7, &options)?,
            neg_binomial_2_log_glm_lpmf(
                &counts[..],
                &x,
                Param::Device(&alpha),
                &beta,
                Param::Device(&scale),
                &options,
            )?,
        ),
    ];
    for (k, (host, device)) in pairs.into_iter().enumerate() {
        close(&format!("value {k}"), device.value, host.value, 1e-12);
        assert!(host.d_aux().is_ok() == device.d_aux().is_ok(), "model {k}");
        let grads = |o: GlmOutput| -> Result<Vec<f64>> {
            let mut all = Vec::new();
            for g in o.into_gradients().into_iter().flatten() {
                all.extend(g.to_vec()?);
            }
            Ok(all)
        };
        let (h, d) = (grads(host)?, grads(device)?);
        assert_eq!(h.len(), d.len(), "model {k}");
        for (a, b) in h.iter().zip(&d) {
            close(&format!("gradient {k}"), *b, *a, 1e-12);
        }
    }
    Ok(())
}

/// Successes and trials for the binomial: trials in 0..=8 (0 included),
/// successes in 0..=trials.
fn binomial_data(n: usize, case: usize) -> (Vec<i32>, Vec<i32>) {
    let trials: Vec<i32> = (0..n).map(|i| ((i * 5 + case) % 9) as i32).collect();
    let successes = trials
        .iter()
        .enumerate()
        .map(|(i, &t)| ((i * 3 + case) % (t as usize + 1)) as i32)
        .collect();
    (successes, trials)
}

/// `log C(N, n)`.
fn lchoose(trials: f64, successes: f64) -> f64 {
    lgamma(trials + 1.0) - lgamma(successes + 1.0) - lgamma(trials - successes + 1.0)
}

#[test]
fn binomial_logit() {
    let shapes = [(0, 3), (1, 1), (31, 3), (33, 2), (1000, 50), (1000, 1)];
    for (case, (n, p)) in shapes.into_iter().enumerate() {
        let (successes, trials) = binomial_data(n, case);
        let cpu = |s: &Inputs, keep: Keep| {
            if !keep.everything {
                return 0.0;
            }
            (0..s.n)
                .map(|i| {
                    let (eta, k, t) = (s.eta(i), successes[i] as f64, trials[i] as f64);
                    k * eta - t * log1p_exp(eta) + if keep.constants { lchoose(t, k) } else { 0.0 }
                })
                .sum::<f64>()
        };
        let gpu = |d: &Device, s: &Inputs, o: &GlmOptions| {
            binomial_logit_glm_lpmf(
                &successes,
                &trials,
                &d.x,
                Inputs::param(&s.alpha, &d.alpha),
                &d.beta,
                o,
            )
        };
        let inp = Inputs::new(n, p, case % 2 == 1 && n > 1, false, 1.0, 60 + case as u64);
        check_model("binomial_logit", &inp, false, &cpu, &gpu);
    }
}

/// The differentiable forms: the leaf `rev::binomial_logit_glm` (with `x`,
/// `alpha` and `beta` variables) against finite differences of the
/// reference, and `rev::composed::binomial_logit_glm` against the leaf.
#[test]
fn binomial_logit_rev() -> Result<()> {
    use clfuse::rev::{self, Var};
    for (case, (n, p)) in [(1, 1), (33, 3)].into_iter().enumerate() {
        let (successes, trials) = binomial_data(n, case + 3);
        let inp = Inputs::new(n, p, false, false, 1.0, 70 + case as u64);
        let total = |s: &Inputs| -> f64 {
            (0..s.n)
                .map(|i| {
                    let (eta, k, t) = (s.eta(i), successes[i] as f64, trials[i] as f64);
                    k * eta - t * log1p_exp(eta) + lchoose(t, k)
                })
                .sum()
        };
        let x = Var::new(MatrixCl::from_slice(n, p, &inp.x)?);
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &inp.alpha)?);
        let beta = Var::new(MatrixCl::from_slice(p, 1, &inp.beta)?);
        let lp = rev::binomial_logit_glm(&successes, &trials, &x, &alpha, &beta)?;
        let want = total(&inp);
        close(
            "rev value",
            lp.value().to_vec()?[0],
            want,
            1e-10 * want.abs().max(1.0),
        );
        lp.grad()?;
        let grads: [(&str, Vec<f64>, fn(&mut Inputs) -> &mut Vec<f64>); 3] = [
            ("alpha", alpha.adjoint().to_vec()?, |s| &mut s.alpha),
            ("beta", beta.adjoint().to_vec()?, |s| &mut s.beta),
            ("x", x.adjoint().to_vec()?, |s| &mut s.x),
        ];
        for (what, got, field) in grads {
            for (i, &g) in got.iter().enumerate() {
                let (mut plus, mut minus) = (inp.clone(), inp.clone());
                field(&mut plus)[i] += H;
                field(&mut minus)[i] -= H;
                let fd = (total(&plus) - total(&minus)) / (2.0 * H);
                close(
                    &format!("rev n={n} p={p}: d_{what}[{i}]"),
                    g,
                    fd,
                    1e-6 * fd.abs().max(1.0) + 1e-13 * want.abs() / H,
                );
            }
        }
        // The composed form: the same value and gradients.
        let (xm, ns, ts) = (
            MatrixCl::from_slice(n, p, &inp.x)?,
            MatrixCl::from_slice(n, 1, &successes)?,
            MatrixCl::from_slice(n, 1, &trials)?,
        );
        let beta_leaf = beta.adjoint().to_vec()?;
        rev::clear()?;
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &inp.alpha)?);
        let beta = Var::new(MatrixCl::from_slice(p, 1, &inp.beta)?);
        let lp = rev::composed::binomial_logit_glm(&ns, &ts, &xm, &alpha, &beta)?;
        close(
            "composed value",
            lp.value().to_vec()?[0],
            want,
            1e-10 * want.abs().max(1.0),
        );
        lp.grad()?;
        for (k, (a, b)) in beta.adjoint().to_vec()?.iter().zip(&beta_leaf).enumerate() {
            close(
                &format!("composed d_beta[{k}]"),
                *a,
                *b,
                1e-10 * b.abs().max(1.0),
            );
        }
        rev::clear()?;
    }
    Ok(())
}
