"""Reference timings of the same element-wise workloads in PyTorch (eager and
torch.compile) on the GPU, for BENCHMARKS.md. Usage: python3 torch_reference.py OUT.json"""
import json
import sys
import time

import torch


def median_time(f, reps=9):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    out = []
    dev = torch.cuda.get_device_name(0)
    for n in [10**6, 10**7, 10**8]:
        a = torch.rand(n, dtype=torch.float64, device="cuda")
        b = torch.rand(n, dtype=torch.float64, device="cuda")
        c = torch.rand(n, dtype=torch.float64, device="cuda")
        d = torch.empty_like(a)

        def eager():
            torch.mul(c, a + b, out=d)

        compiled = torch.compile(lambda a, b, c: c * (a + b))

        def comp():
            compiled(a, b, c)

        def copy():
            d.copy_(a)

        for name, f in [("torch eager", eager), ("torch.compile", comp), ("torch copy", copy)]:
            t = median_time(f)
            out.append({"workload": "d = c.*(a+b)" if name != "torch copy" else "copy", "variant": name, "n": n, "median_s": t, "device": dev})
            print(name, n, t, flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


main()
