"""Peer of bench_report's `--suite seeds --figures g`: seed 004's truncated
Dirichlet-process Gaussian mixture Gibbs sweep in JAX (float64, jitted, on
the default device), per call with the host waiting for the outputs:

  e_step      the n x k log responsibilities;
  indicators  z ~ categorical(logits) per row (jax.random.categorical:
              Gumbel-max), the logits computed in the same jit;
  sweep       logits -> z -> segment_sum statistics (count, Σx, the upper
              triangle of Σxxᵀ) -> normal-inverse-Wishart draws (Bartlett),
              batched Cholesky, means, stick-breaking weights: one jit.

The quadratic form is expanded as a careful JAX user would (an n x k x p
tensor would be 28 GB at n = 1e6, k = 256, p = 14): with P = L Lᵀ,
-½(x-μ)ᵀP(x-μ) = F(x)·w + c, F(x) = [x_a x_b (a <= b), x_a], one GEMM.
The start is the benchmark's: equal weights, covariance I, means at evenly
spaced data points.

Usage: python3 dp_mixture_reference.py OUT.json [NxPxK ...] [--reps R]
(default 1000000x14x256 1000000x14x64)."""
import json
import sys

from peer_timing import per_call


def main():
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.scipy.linalg import solve_triangular
    jax.config.update("jax_enable_x64", True)
    args = [a for a in sys.argv[1:]]
    reps = 15
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    out_path = args[0]
    shapes = [tuple(int(float(v)) for v in s.split("x")) for s in args[1:]] or [
        (1_000_000, 14, 256), (1_000_000, 14, 64)]
    device = str(jax.devices()[0])
    out = []

    def build(p, k):
        iu = np.triu_indices(p)
        off = (iu[0] != iu[1]).astype(np.float64)

        def logits(feat, lp, mu, logw):
            prec = jnp.einsum("kab,kcb->kac", lp, lp)  # P = L Lᵀ
            quad = -(1.0 - 0.5 * (1.0 - off)) * prec[:, iu[0], iu[1]]  # -P_ab (a<b), -½P_aa
            pmu = jnp.einsum("kab,kb->ka", prec, mu)
            w = jnp.concatenate([quad, pmu], axis=1)  # k x (p(p+1)/2 + p)
            logdet = jnp.sum(jnp.log(jnp.diagonal(lp, axis1=1, axis2=2)), axis=1)
            const = logw - 0.5 * p * np.log(2 * np.pi) + logdet - 0.5 * jnp.einsum("ka,ka->k", mu, pmu)
            return feat @ w.T + const

        def e_step(feat, lp, mu, logw):
            l = logits(feat, lp, mu, logw)
            return l - jax.scipy.special.logsumexp(l, axis=1, keepdims=True)

        def indicators(key, feat, lp, mu, logw):
            return jax.random.categorical(key, logits(feat, lp, mu, logw), axis=1).astype(jnp.int32)

        m0 = jnp.zeros(p)
        kappa0, nu0, psi0, alpha = 0.01, p + 2.0, jnp.eye(p), 1.0

        def sweep(key, feat, lp, mu, logw):
            kz, kw, kn, kv = jax.random.split(key, 4)
            z = jax.random.categorical(kz, logits(feat, lp, mu, logw), axis=1)
            t = p * (p + 1) // 2
            # Statistics from the features (products first, then x): segment_sum
            # of n x (t + p) is far cheaper than n x p x p outer products.
            s = jax.ops.segment_sum(feat, z, num_segments=k)
            counts = jax.ops.segment_sum(jnp.ones(feat.shape[0]), z, num_segments=k)
            sums = s[:, t:]
            upper = jnp.zeros((k, p, p)).at[:, iu[0], iu[1]].set(s[:, :t])
            outer = upper + jnp.swapaxes(upper, 1, 2) - jnp.eye(p)[None] * upper
            safe = jnp.maximum(counts, 1.0)
            xbar = sums / safe[:, None]
            scatter = outer - counts[:, None, None] * jnp.einsum("ka,kb->kab", xbar, xbar)
            kappa = kappa0 + counts
            d = xbar - m0
            psi = psi0 + scatter + (kappa0 * counts / kappa)[:, None, None] * jnp.einsum("ka,kb->kab", d, d)
            mn = (kappa0 * m0 + sums) / kappa[:, None]
            nu = nu0 + counts
            # Bartlett: A lower, A_ii = sqrt(chi2(nu - i)), A_ij ~ N(0, 1).
            dof = nu[:, None] - jnp.arange(p)[None, :]
            diag = jnp.sqrt(2.0 * jax.random.gamma(kw, dof / 2.0))
            a = jnp.tril(jax.random.normal(kn, (k, p, p)), -1) + jax.vmap(jnp.diag)(diag)
            l_psi = jnp.linalg.cholesky(psi)
            b = jax.vmap(lambda l, a_: solve_triangular(l.T, a_, lower=False))(l_psi, a)  # L⁻ᵀ A
            prec = jnp.einsum("kab,kcb->kac", b, b)
            lp_new = jnp.linalg.cholesky(prec)
            zmu = jax.random.normal(jax.random.fold_in(kn, 1), (k, p))
            off_mu = jax.vmap(lambda l, v: solve_triangular(l.T, v, lower=False))(lp_new, zmu)
            mu_new = mn + off_mu / jnp.sqrt(kappa)[:, None]
            later = jnp.cumsum(counts[::-1])[::-1] - counts
            v = jax.random.beta(kv, 1.0 + counts, alpha + later)
            v = jnp.clip(v.at[-1].set(1.0), 1e-300, 1.0)
            log_rest = jnp.concatenate([jnp.zeros(1), jnp.cumsum(jnp.log1p(-v[:-1]))])
            logw_new = jnp.log(v) + log_rest
            return lp_new, mu_new, logw_new, z.astype(jnp.int32)

        return jax.jit(logits), jax.jit(e_step), jax.jit(indicators), jax.jit(sweep)

    def features(x):
        n, p = x.shape
        iu = np.triu_indices(p)
        return np.concatenate([x[:, iu[0]] * x[:, iu[1]], x], axis=1)

    def data(n, p, k, seed=7):
        rng = np.random.default_rng(seed)
        means = rng.uniform(-5, 5, (16, p))
        sds = rng.uniform(0.3, 1.0, (16, p))
        labels = rng.integers(0, 16, n)
        x = means[labels] + sds[labels] * rng.standard_normal((n, p))
        step = max(n // k, 1)
        mu = x[(np.arange(k) * step + step // 2) % n].copy()
        lp = np.broadcast_to(np.eye(p), (k, p, p)).copy()
        logw = np.full(k, -np.log(k))
        return x, lp, mu, logw

    # Self-check at a small size: logits against a direct loop; statistics
    # against a loop over z.
    x, lp, mu, logw = data(2000, 3, 4)
    lp[1] = np.array([[1.5, 0, 0], [0.3, 0.8, 0], [-0.2, 0.1, 1.2]])
    logw = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    logits_f, _, _, sweep_f = build(3, 4)
    got = np.asarray(logits_f(jnp.asarray(features(x)), lp, mu, logw))
    want = np.zeros((2000, 4))
    for c in range(4):
        y = (x - mu[c]) @ lp[c]
        want[:, c] = logw[c] - 1.5 * np.log(2 * np.pi) + np.log(np.diag(lp[c])).sum() - 0.5 * (y * y).sum(1)
    assert np.abs(got - want).max() < 1e-9 * max(1.0, np.abs(want).max()), np.abs(got - want).max()
    lp2, mu2, logw2, z = [np.asarray(v) for v in sweep_f(jax.random.PRNGKey(0), jnp.asarray(features(x)), lp, mu, logw)]
    assert np.all(np.isfinite(lp2)) and np.all(np.isfinite(mu2)) and np.isfinite(logw2).any()
    assert abs(np.exp(logw2).sum() - 1.0) < 1e-9
    print("self-check ok", flush=True)

    for n, p, k in shapes:
        try:
            x, lp, mu, logw = data(n, p, k)
            feat = jnp.asarray(features(x))
            lp, mu, logw = jnp.asarray(lp), jnp.asarray(mu), jnp.asarray(logw)
            _, e_step_f, indicators_f, sweep_f = build(p, k)
            key = [jax.random.PRNGKey(1)]

            def next_key():
                key[0], sub = jax.random.split(key[0])
                return sub

            runs = {
                "e_step": lambda: e_step_f(feat, lp, mu, logw).block_until_ready(),
                "indicators": lambda: indicators_f(next_key(), feat, lp, mu, logw).block_until_ready(),
                "sweep": lambda: [v.block_until_ready() for v in sweep_f(next_key(), feat, lp, mu, logw)],
            }
            for what, f in runs.items():
                med, lo, hi = per_call(f, reps)
                out.append({"peer": "jax", "device": device, "n": n, "p": p, "k": k, "what": what,
                            "median_s": med, "min_s": lo, "max_s": hi})
                print(f"jax {what} n={n} p={p} k={k}: median {med * 1e3:.2f} ms "
                      f"(min {lo * 1e3:.2f}, max {hi * 1e3:.2f})", flush=True)
        except Exception as e:  # noqa: BLE001 (one shape's failure leaves the others)
            print(f"jax n={n} p={p} k={k}: failed: {type(e).__name__}: {e}", flush=True)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
