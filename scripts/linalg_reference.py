"""cuBLAS / cuSOLVER reference timings through PyTorch for the linear-algebra
rows of BENCHMARKS.md (f64, per call: each timed call ends with a device
synchronisation). Usage: python3 linalg_reference.py OUT.json"""
import json
import sys
import time

import torch


def per_call(f, reps=9):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def main():
    out = []
    dev = torch.cuda.get_device_name(0)
    for n in [4096, 8192]:
        a = torch.rand(n, n, dtype=torch.float64, device="cuda")
        t = per_call(lambda: torch.mm(a, a))
        out.append({"workload": "dgemm", "n": n, "seconds": t, "tflops": 2 * n**3 / t / 1e12})
    # inv_logit(x b + 1), x 1e6 x 100, b 100 x 100 (the epilogue benchmark):
    # the product alone, then PyTorch's own two kernels (mm, then sigmoid).
    x = torch.rand(1_000_000, 100, dtype=torch.float64, device="cuda") - 0.5
    b = (torch.rand(100, 100, dtype=torch.float64, device="cuda") - 0.5) / 10
    t = per_call(lambda: torch.mm(x, b))
    out.append({"workload": "x b, x 1e6 x 100, b 100 x 100", "n": 1_000_000, "seconds": t})
    t = per_call(lambda: torch.sigmoid(torch.mm(x, b) + 1))
    out.append({"workload": "sigmoid(x b + 1), x 1e6 x 100", "n": 1_000_000, "seconds": t})
    del x, b
    for n in [8192, 16384]:
        x = torch.rand(n, n, dtype=torch.float64, device="cuda") / n
        spd = x @ x.T + torch.eye(n, dtype=torch.float64, device="cuda")
        t = per_call(lambda: torch.linalg.cholesky(spd))
        out.append({"workload": "cholesky", "n": n, "seconds": t})
        if n == 8192:
            lower = torch.linalg.cholesky(spd)
            eye = torch.eye(n, dtype=torch.float64, device="cuda")
            t = per_call(lambda: torch.linalg.solve_triangular(lower, eye, upper=False))
            out.append({"workload": "trsm(L, I)", "n": n, "seconds": t})
        del x, spd
    for row in out:
        row["device"] = dev
        print(row, flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
