"""JAX jit(value_and_grad) of examples/autodiff_model.rs's hierarchical
logistic regression, f64 on the GPU, per call (block_until_ready)."""
import sys, time, json
def main():
    import numpy as np
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    out = []
    for n, p, k in [(200_000, 10, 50), (1_000_000, 10, 100)]:
        rng = np.random.default_rng(1)
        x = jnp.asarray(rng.uniform(-1, 1, (n, p)))
        g = jnp.asarray(rng.integers(0, k, n))
        s = jnp.asarray(rng.integers(0, 2, n) * 2.0 - 1.0)
        def lp(beta, u, log_tau):
            eta = x @ beta + u[g]
            tau = jnp.exp(log_tau)
            return (jnp.sum(jax.nn.log_sigmoid(s * eta)) + jnp.sum(-0.5 * (u / tau) ** 2 - log_tau)
                    - 0.5 * log_tau ** 2)
        vg = jax.jit(jax.value_and_grad(lp, argnums=(0, 1, 2)))
        args = (jnp.zeros(p), jnp.zeros(k), jnp.asarray(-0.3))
        for _ in range(3):
            jax.block_until_ready(vg(*args))
        ts = []
        for _ in range(9):
            t0 = time.perf_counter()
            v, gr = vg(*args)
            float(v); [np.asarray(a) for a in gr]   # value and gradient on the host, as a sampler needs
            ts.append(time.perf_counter() - t0)
        ts.sort()
        out.append({"n": n, "p": p, "groups": k, "median_us": ts[4] * 1e6})
        print("jax hierarchical", n, p, k, ts[4] * 1e6, flush=True)
    json.dump(out, open(sys.argv[1], "w"), indent=1)
main()
