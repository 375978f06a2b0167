"""Peer of bench_report's `--suite seeds --figures 7` (the GP gradient of
paper Figure 7, issue #37): JAX jit(value_and_grad) of the same log
posterior (squared-exponential covariance in D = 2, θ = (log ℓ, log σ,
log τ) with standard-normal priors around bench's prior means;
`jnp.linalg.cholesky` + `cho_solve`), f64, per call: value and gradient
reach the host before the call returns. Also, in the same run, where JAX's
time goes: the covariance alone, its Cholesky alone, and the value without
the gradient (each jitted, per call).
Usage: python3 gp_reference.py OUT.json [n ...]  (default 500 2000 4000 10000)"""
import json
import sys

from peer_timing import per_call

PRIOR_MEAN = [-0.6931471805599453, 0.0, -1.203972804326936]
TRUTH = [-0.5108256237659907, 0.0, -1.203972804326936]


def main():
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve
    jax.config.update("jax_enable_x64", True)
    sizes = [int(float(v)) for v in sys.argv[2:]] or [500, 2000, 4000, 10000]
    device = str(jax.devices()[0])
    out = []
    for n in sizes:
        rng = np.random.default_rng(n)
        x = jnp.asarray(rng.uniform(0, 3, (n, 2)))
        y = jnp.asarray(rng.standard_normal(n))
        d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)

        def covariance(theta):
            inv_l2, s2, t2 = jnp.exp(-2 * theta[0]), jnp.exp(2 * theta[1]), jnp.exp(2 * theta[2])
            k = s2 * jnp.exp(-0.5 * d2 * inv_l2)
            return k + t2 * jnp.eye(n)

        def logp(theta):
            l = jnp.linalg.cholesky(covariance(theta))
            alpha = cho_solve((l, True), y)
            prior = jnp.sum((theta - jnp.asarray(PRIOR_MEAN)) ** 2)
            return -0.5 * (y @ alpha) - jnp.sum(jnp.log(jnp.diag(l))) - 0.5 * prior

        theta = jnp.asarray(TRUTH)
        grad = jax.jit(jax.value_and_grad(logp))
        value = jax.jit(logp)
        cov = jax.jit(covariance)
        chol = jax.jit(jnp.linalg.cholesky)
        k = cov(theta).block_until_ready()
        runs = {
            "value_and_grad": lambda: [np.asarray(v) for v in grad(theta)],
            "value": lambda: float(value(theta)),
            "covariance": lambda: cov(theta).block_until_ready(),
            "cholesky": lambda: chol(k).block_until_ready(),
        }
        for what, f in runs.items():
            med, lo, hi = per_call(f, 15)
            out.append({"peer": "jax", "device": device, "n": n, "what": what,
                        "median_s": med, "min_s": lo, "max_s": hi})
            print(f"jax GP n={n} {what}: median {med * 1e3:.3f} ms (min {lo * 1e3:.3f}, max {hi * 1e3:.3f})",
                  flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
