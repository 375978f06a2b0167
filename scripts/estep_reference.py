"""Peer of bench_report's `--suite seeds --figures e`: seed 004's E-step
(diagonal Gaussian mixture, n = 1e6, p = 14, k = 256) in JAX, float64,
jitted, on the default device, per call with the host waiting for the
result (block_until_ready), as bench_report's figure does. The densities
are the same expanded GEMM the library forms, [x², x] (n x 2p) times the
expanded parameters (2p x k) plus a constant per component, then the
log-softmax of each row.

Usage: python3 estep_reference.py OUT.json [N] [--reps R]"""
import json
import sys

from peer_timing import per_call


def main():
    import numpy as np
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    args = sys.argv[1:]
    reps = 25
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    out_path = args[0]
    n = int(float(args[1])) if len(args) > 1 else 1_000_000
    p, k = 14, 256
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, p))
    mu = rng.uniform(-3, 3, (k, p))
    sigma = rng.uniform(0.5, 2.0, (k, p))
    precision = 1.0 / sigma**2
    w = np.concatenate([-0.5 * precision, precision * mu], axis=1).T  # 2p x k
    c = (np.log(1.0 / k) - 0.5 * p * np.log(2 * np.pi) - np.log(sigma).sum(1)
         - 0.5 * (precision * mu**2).sum(1))
    feat = jnp.asarray(np.concatenate([x**2, x], axis=1))
    w, c = jnp.asarray(w), jnp.asarray(c)

    @jax.jit
    def e_step(feat, w, c):
        return jax.nn.log_softmax(feat @ w + c, axis=1)

    med, lo, hi = per_call(lambda: e_step(feat, w, c).block_until_ready(), reps)
    row = {"device": str(jax.devices()[0]), "n": n, "p": p, "k": k,
           "median_ms": med * 1e3, "min_ms": lo * 1e3, "max_ms": hi * 1e3}
    print(json.dumps(row))
    with open(out_path, "w") as f:
        json.dump(row, f, indent=1)


if __name__ == "__main__":
    main()
