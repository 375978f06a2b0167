"""Whole-run peers of issue #35's examples: NumPyro NUTS (JAX) on the
eight-schools non-centred model and the diamonds-shaped regression
(n = 5000, 24 correlated, centred predictors; b ~ normal(0, 1), Intercept
~ student_t(3, 8, 10), sigma ~ half-student_t(3, 0, 10)), 4 chains x (1000
warm-up + 1000 draws), as `examples/eight_schools.rs` and
`examples/regression.rs` run them. Each model runs twice: the first run
includes JAX's compilation, the second does not.
Usage: python3 models_reference.py BACKEND   (gpu: chains vectorised on the
one GPU; cpu: chains in parallel, one per host device)"""
import os
import sys
import time

backend = sys.argv[1] if len(sys.argv) > 1 else "gpu"
os.environ["JAX_PLATFORMS"] = "cuda" if backend == "gpu" else "cpu"
import numpyro  # noqa: E402

if backend == "cpu":
    numpyro.set_host_device_count(4)
numpyro.enable_x64()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402

method = "vectorized" if backend == "gpu" else "parallel"


def eight_schools(sigma, y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("J", y.shape[0]):
        theta_tilde = numpyro.sample("theta_tilde", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(mu + tau * theta_tilde, sigma), obs=y)


def regression(xc, y):
    b = numpyro.sample("b", dist.Normal(0.0, 1.0).expand([xc.shape[1]]).to_event(1))
    intercept = numpyro.sample("Intercept", dist.StudentT(3.0, 8.0, 10.0))
    sigma = numpyro.sample("sigma", dist.FoldedDistribution(dist.StudentT(3.0, 0.0, 10.0)))
    numpyro.sample("y", dist.Normal(xc @ b + intercept, sigma), obs=y)


def regression_data(n=5000, p=24, seed=20261126):
    rng = np.random.default_rng(seed)
    x = np.empty((n, p))
    x[:, 0] = rng.standard_normal(n)
    for k in range(1, p):
        x[:, k] = 0.6 * x[:, k - 1] + 0.8 * rng.standard_normal(n)
    xc = x - x.mean(axis=0)
    b = np.sin(np.arange(p) * 0.7) * 0.5
    y = xc @ b + 8.0 + 1.2 * rng.standard_normal(n)
    return jnp.asarray(xc), jnp.asarray(y)


def timed(model, args, name):
    mcmc = MCMC(NUTS(model), num_warmup=1000, num_samples=1000, num_chains=4,
                chain_method=method, progress_bar=False)
    for run in ("first run (with compilation)", "second run"):
        start = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(len(run)), *args, extra_fields=("num_steps",))
        jax.block_until_ready(mcmc.get_samples())
        wall = time.perf_counter() - start
        steps = int(np.sum(mcmc.get_extra_fields()["num_steps"]))
        print(f"NumPyro {backend} ({method}) {name}: {run} {wall:.2f} s, "
              f"{steps} leapfrog steps over the 4 chains' draws", flush=True)


y8 = jnp.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
s8 = jnp.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
timed(eight_schools, (s8, y8), "eight_schools")
timed(regression, regression_data(), "regression n = 5000, P = 24")
