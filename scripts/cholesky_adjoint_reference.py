"""Peer of bench_report's `--suite cholesky` (issue #37): cuSOLVER's
Cholesky (`torch.linalg.cholesky`) and PyTorch's Cholesky backward (its
adjoint, by triangular solves) on the same Toeplitz matrix, f64, per call:
each timed call ends with a device synchronisation.
Usage: python3 cholesky_adjoint_reference.py OUT.json [n ...]"""
import json
import sys

import torch

from peer_timing import per_call


def toeplitz(n):
    i = torch.arange(n, dtype=torch.float64, device="cuda")
    a = n - (i[:, None] - i[None, :]).abs()
    return a + torch.eye(n, dtype=torch.float64, device="cuda") * (n * n - n)


def main():
    sizes = [int(v) for v in sys.argv[2:]] or [500, 1000, 2000, 4096, 8192, 16384]
    out = []
    device = torch.cuda.get_device_name(0)
    for n in sizes:
        a = toeplitz(n)
        t = per_call(lambda: (torch.linalg.cholesky(a), torch.cuda.synchronize()), 10)[0]
        out.append({"workload": "cholesky", "n": n, "seconds": t, "device": device})
        leaf = a.clone().requires_grad_(True)
        adj = torch.tril(torch.rand(n, n, dtype=torch.float64, device="cuda") - 0.5)

        def backward():
            leaf.grad = None
            torch.linalg.cholesky(leaf).backward(adj)

        t = per_call(lambda: (backward(), torch.cuda.synchronize()), 10)[0]
        out.append({"workload": "cholesky + backward", "n": n, "seconds": t, "device": device})
        print(f"n={n}: cholesky {out[-2]['seconds'] * 1e3:.3f} ms, with backward {t * 1e3:.3f} ms")
        del a, leaf, adj
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
