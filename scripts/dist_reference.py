"""Peers of bench_report's `--suite dist`: JAX (jit of value_and_grad) and
PyTorch (eager autograd), f64 on the GPU, the same data and the same per
call treatment (the value reaches the host; the gradients are finished on
the device).
Usage: python3 dist_reference.py OUT.json [N_LONG] [N_REG P_REG]"""
import json
import sys

from peer_timing import per_call


def outcomes(np, n):
    return 2.0 * np.sin(np.arange(n) * 0.37) + 0.5


def positive(np, n):
    return 0.5 + 3.0 * np.modf(np.arange(n) * 0.618033988749895)[0]


def design(np, n, p):
    i = np.arange(n * p)
    x = ((i * 37 % 101) / 50.0 - 1.0) / np.sqrt(p)
    return x.reshape(p, n).T.copy(), np.sin(np.arange(p) * 0.37)


def main():
    import numpy as np
    out_path = sys.argv[1]
    long_n = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10_000_000
    reg_n = int(float(sys.argv[3])) if len(sys.argv) > 3 else 1_000_000
    reg_p = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    sizes = [long_n // 10, long_n]
    out = []

    def record(workload, variant, n, t):
        out.append({"workload": workload, "variant": variant, "n": n, "median_s": t})
        print(f"{variant:32} {workload:55} n = {n:>9}: {t * 1e3:8.3f} ms", flush=True)

    try:
        import jax
        import jax.numpy as jnp
        from jax.scipy import stats
        jax.config.update("jax_enable_x64", True)
        V = "JAX jit(value_and_grad)"

        def timed(f, args, argnums):
            vg = jax.jit(jax.value_and_grad(f, argnums=argnums))

            def run():
                v, g = vg(*args)
                jax.block_until_ready(g)
                float(v)
            return per_call(run, 15, warm_ups=2)[0]

        for n in sizes:
            y = jnp.asarray(outcomes(np, n))
            yp = jnp.asarray(positive(np, n))
            s = lambda v: jnp.asarray(v)
            record("normal_lpdf value+grad, scalar mu, sigma", V, n, timed(
                lambda m, sg, y: jnp.sum(stats.norm.logpdf(y, m, sg)), (s(0.3), s(1.7), y), (0, 1)))
            record("student_t_lpdf value+grad, scalar nu, mu, sigma", V, n, timed(
                lambda nu, m, sg, y: jnp.sum(stats.t.logpdf(y, nu, m, sg)), (s(4.5), s(0.3), s(1.7), y), (0, 1, 2)))
            record("gamma_lpdf value+grad, scalar alpha, beta", V, n, timed(
                lambda a, b, y: jnp.sum(stats.gamma.logpdf(y, a, scale=1.0 / b)), (s(2.0), s(1.5), yp), (0, 1)))
            mu, sigma = jnp.full(n, 0.3), jnp.full(n, 1.7)
            record("normal_lpdf value+grad, vector mu, sigma", V, n, timed(
                lambda m, sg, y: jnp.sum(stats.norm.logpdf(y, m, sg)), (mu, sigma, y), (0, 1)))
        x, beta = (jnp.asarray(a) for a in design(np, reg_n, reg_p))
        y = jnp.asarray(outcomes(np, reg_n))
        record(f"normal regression value+grad, P = {reg_p}", V, reg_n, timed(
            lambda a, b, sg, x, y: jnp.sum(stats.norm.logpdf(y, x @ b + a, sg)),
            (jnp.asarray(0.25), beta, jnp.asarray(1.3), x, y), (0, 1, 2)))
        # posteriordb's diamonds (bench_report's `dist::diamonds`): theta =
        # (b[24], Intercept, log sigma), the same priors and likelihood, the
        # log-Jacobian of sigma = exp(.), on the GPU and on JAX's CPU backend.
        dn, dp = 5000, 24
        xd, _ = design(np, dn, dp)
        yd = outcomes(np, dn)

        def diamonds(theta, x, y):
            b, icpt, log_sigma = theta[:dp], theta[dp], theta[dp + 1]
            sigma = jnp.exp(log_sigma)
            lp = jnp.sum(stats.norm.logpdf(b, 0.0, 1.0))
            lp += stats.t.logpdf(icpt, 3.0, 8.0, 10.0) + stats.t.logpdf(sigma, 3.0, 0.0, 10.0) + jnp.log(2.0)
            lp += jnp.sum(stats.norm.logpdf(y, x @ b + icpt, sigma))
            return lp + log_sigma

        theta0 = 0.1 * np.sin(np.arange(dp + 2) * 0.7)
        for backend in ("gpu", "cpu"):
            try:
                dev = jax.devices(backend)[0]
            except RuntimeError:
                continue
            args = tuple(jax.device_put(jnp.asarray(a), dev) for a in (theta0, xd, yd))
            vg = jax.jit(jax.value_and_grad(diamonds))

            def run():
                v, g = vg(*args)
                np.asarray(g)  # the gradient reaches the host, as nuts-rs needs it
                float(v)
            record(f"diamonds value+grad (params + dist), P = {dp}",
                   f"JAX jit(value_and_grad) {backend}", dn, per_call(run, 50, warm_ups=2)[0])
    except Exception as e:  # keep the other framework's numbers
        print("jax failed:", e, flush=True)

    try:
        import torch
        from torch import distributions as D
        V = "PyTorch eager autograd"
        dev = "cuda"

        def timed(make, params):
            def run():
                v = make()
                g = torch.autograd.grad(v, params)
                float(v)
                torch.cuda.synchronize()
            return per_call(run, 15, warm_ups=2)[0]

        def param(v):
            return torch.tensor(v, dtype=torch.float64, device=dev, requires_grad=True)

        for n in sizes:
            y = torch.tensor(outcomes(np, n), device=dev)
            yp = torch.tensor(positive(np, n), device=dev)
            m, sg, nu, a, b = param(0.3), param(1.7), param(4.5), param(2.0), param(1.5)
            record("normal_lpdf value+grad, scalar mu, sigma", V, n, timed(
                lambda: D.Normal(m, sg).log_prob(y).sum(), (m, sg)))
            record("student_t_lpdf value+grad, scalar nu, mu, sigma", V, n, timed(
                lambda: D.StudentT(nu, m, sg).log_prob(y).sum(), (nu, m, sg)))
            record("gamma_lpdf value+grad, scalar alpha, beta", V, n, timed(
                lambda: D.Gamma(a, b).log_prob(yp).sum(), (a, b)))
            mv = torch.full((n,), 0.3, dtype=torch.float64, device=dev, requires_grad=True)
            sv = torch.full((n,), 1.7, dtype=torch.float64, device=dev, requires_grad=True)
            record("normal_lpdf value+grad, vector mu, sigma", V, n, timed(
                lambda: D.Normal(mv, sv).log_prob(y).sum(), (mv, sv)))
        xs, bs = design(np, reg_n, reg_p)
        x = torch.tensor(xs, device=dev)
        y = torch.tensor(outcomes(np, reg_n), device=dev)
        beta = torch.tensor(bs, device=dev, requires_grad=True)
        a, sg = param(0.25), param(1.3)
        record(f"normal regression value+grad, P = {reg_p}", V, reg_n, timed(
            lambda: D.Normal(x @ beta + a, sg).log_prob(y).sum(), (a, beta, sg)))
    except Exception as e:
        print("torch failed:", e, flush=True)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


main()
