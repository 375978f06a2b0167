"""Peer of bench_report's `--suite chains`: JAX jit(vmap(value_and_grad))
of the same logistic regression (standard normal prior, f64) over 8 chains,
and jit(value_and_grad) of one chain, on the GPU. Per call: the values and
gradients reach the host (np.asarray) before the call returns, as
bench_report's figures do.
Usage: python3 chains_reference.py OUT.json [NxP ...]  (default 1e4x10 1e6x100)"""
import json
import sys

from peer_timing import per_call


def main():
    import numpy as np
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    out_path = sys.argv[1]
    shapes = [tuple(int(float(v)) for v in s.split("x")) for s in sys.argv[2:]] or [
        (10_000, 10), (1_000_000, 100)]
    chains = 8
    out = []
    for n, p in shapes:
        i = np.arange(n * p)
        # bench_report's glm::data: x column-major, the same values.
        x = (((i * 37 % 101) / 50.0 - 1.0) / np.sqrt(p)).reshape(p, n).T.copy()
        y = (np.arange(n) * 7 % 3 == 0).astype(np.float64)
        sign = jnp.asarray(2.0 * y - 1.0)
        xd = jnp.asarray(x)

        def logp(beta):
            eta = xd @ beta
            return jnp.sum(jax.nn.log_sigmoid(sign * eta)) - 0.5 * jnp.sum(beta * beta)

        one = jax.jit(jax.value_and_grad(logp))
        many = jax.jit(jax.vmap(jax.value_and_grad(logp)))
        positions = np.array([[0.05 * ((c * 7 + j * 3) % 11) - 0.25 for j in range(p)]
                              for c in range(chains)])
        b1 = jnp.asarray(positions[0])
        b8 = jnp.asarray(positions)

        def call_one():
            v, g = one(b1)
            return float(v), np.asarray(g)

        def call_many():
            v, g = many(b8)
            return np.asarray(v), np.asarray(g)

        for variant, f in [("JAX one chain, jit(value_and_grad) (per call)", call_one),
                           ("JAX 8 chains, jit(vmap(value_and_grad)) (per call)", call_many)]:
            med, lo, hi = per_call(f, 25)
            out.append({"n": n, "p": p, "variant": variant, "median_s": med,
                        "min_s": lo, "max_s": hi, "device": str(jax.devices()[0])})
            print(f"n = {n:>8}, p = {p:>3}: {variant:52} {med * 1e6:9.1f} µs "
                  f"(min {lo * 1e6:.1f}, max {hi * 1e6:.1f})", flush=True)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
