"""bernoulli_logit_glm value + gradients (alpha, beta) in JAX (jit of
value_and_grad) and PyTorch (eager autograd), f64 on the GPU, for the same
shapes and data as bench_report's GLM workload.
Usage: python3 glm_reference.py OUT.json"""
import json
import sys

from peer_timing import per_call

SHAPES = [(10_000, 10), (100_000, 100), (1_000_000, 100), (10_000_000, 10)]


def data(np, n, p):
    i = np.arange(n * p)
    x = ((i * 37 % 101) / 50.0 - 1.0) / np.sqrt(p)
    x = x.reshape(p, n).T.copy()  # column-major data, row-major array
    y = (np.arange(n) * 7 % 3 == 0).astype(np.float64)
    beta = np.sin(np.arange(p) * 0.37)
    return x, y, beta


def main():
    import numpy as np
    out = []
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def loglik(alpha, beta, x, y):
            s = 2.0 * y - 1.0
            return jnp.sum(jax.nn.log_sigmoid(s * (x @ beta + alpha)))

        vg = jax.jit(jax.value_and_grad(loglik, argnums=(0, 1)))
        for n, p in SHAPES:
            x, y, beta = (jnp.asarray(a) for a in data(np, n, p))
            alpha = jnp.asarray(0.3)

            def run():
                v, (ga, gb) = vg(alpha, beta, x, y)
                gb.block_until_ready()
                float(v)

            t = per_call(run, 9, warm_ups=1)[0]
            out.append({"workload": f"bernoulli_logit_glm value+grad, P = {p}", "variant": "JAX jit(value_and_grad)", "n": n, "median_s": t})
            print("jax", n, p, t, flush=True)
    except Exception as e:  # keep the other framework's numbers
        print("jax failed:", e, flush=True)
    try:
        import torch
        for n, p in SHAPES:
            x, y, beta = (torch.tensor(a, device="cuda") for a in data(np, n, p))
            beta.requires_grad_(True)
            alpha = torch.tensor(0.3, dtype=torch.float64, device="cuda", requires_grad=True)

            def run():
                s = 2.0 * y - 1.0
                v = torch.nn.functional.logsigmoid(s * (x @ beta + alpha)).sum()
                ga, gb = torch.autograd.grad(v, (alpha, beta))
                float(v)
                torch.cuda.synchronize()

            t = per_call(run, 9, warm_ups=1)[0]
            out.append({"workload": f"bernoulli_logit_glm value+grad, P = {p}", "variant": "PyTorch eager autograd", "n": n, "median_s": t})
            print("torch", n, p, t, flush=True)
    except Exception as e:
        print("torch failed:", e, flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


main()
