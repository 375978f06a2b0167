"""Hand-edited variants of a replayed diamonds call's two sweeps, to time
what their members cost (#35). Reads the kernels a dist suite dumped
(`FUSION_DUMP_KERNELS=DUMP`) and writes, for `FUSION_KERNEL_OVERRIDE`,
one folder per variant under OUT:

  nomid     the forward sweep without the barriers between consecutive
            reductions (the priors' three densities)
  nopriors  the forward sweep without its reductions and every step after
            the first of them (the priors and their sum): what is left is
            the position write and the parameters' transforms
  norevbar  the reverse sweep without any barrier between its members
  hollow    both sweeps with no member but the position write, and every
            `calculate_compact_*` kernel (the likelihood) with an empty
            body: what the call's commands cost with no work in them

Timing only: `nopriors` and `norevbar` compute wrong values (a stale prior,
racing members). The forward sweep is `sweep_prologue_*.cl` (a replay's
first sweep with the position write as its prologue), the reverse one
`sweep_compact_*.cl`.
Usage: python3 sweep_members.py DUMP OUT"""
import os
import re
import sys

dump, out = sys.argv[1], sys.argv[2]
BARRIER = "  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"


def reductions(source):
    """The names of the step functions that end in a work-group sum."""
    names, current = set(), None
    for line in source.splitlines():
        found = re.match(r"void (step_\d+)\(", line)
        if found:
            current = found.group(1)
        if current and "scalar sum(s)" in line:
            names.add(current)
    return names


def call_of(line):
    found = re.match(r"\s+(step_\d+)\(", line)
    return found.group(1) if found else None


def hollow_sweep(source, body_of):
    """A sweep whose `body_of` function calls no step."""
    head, body = source.split(body_of, 1)
    kept = [l for l in body.splitlines() if not call_of(l)]
    return head + body_of + "\n".join(kept) + "\n"


def hollow_kernel(source):
    """The kernel (the source's last function) with an empty body."""
    head, tail = source.rsplit("__kernel void ", 1)
    signature = tail.split("{", 1)[0]
    return head + "__kernel void " + signature + "{\n}\n"


def forward(source, variant):
    """The forward sweep's replayed body (`after_prologue`) edited."""
    head, body = source.split("void after_prologue(", 1)
    summed = reductions(head)
    lines, kept, dropping = body.splitlines(), [], False
    for k, line in enumerate(lines):
        step = call_of(line)
        if variant == "nopriors":
            dropping = dropping or step in summed
            if step and dropping:
                continue
        if variant == "nomid" and line == BARRIER:
            before = next((call_of(l) for l in reversed(kept) if call_of(l)), None)
            after = next((call_of(l) for l in lines[k + 1:] if call_of(l)), None)
            if before in summed and after in summed:
                continue
        kept.append(line)
    return head + "void after_prologue(" + "\n".join(kept) + "\n"


variants = {"nomid": "forward", "nopriors": "forward", "norevbar": "reverse", "hollow": "all"}
for variant, sweep in variants.items():
    os.makedirs(os.path.join(out, variant), exist_ok=True)
for name in sorted(os.listdir(dump)):
    if not name.endswith(".cl"):
        continue
    source = open(os.path.join(dump, name)).read()
    for variant, sweep in variants.items():
        if sweep == "forward" and name.startswith("sweep_prologue_"):
            edited = forward(source, variant)
        elif sweep == "reverse" and name.startswith("sweep_compact_"):
            edited = source.replace(BARRIER + "\n", "")
        elif sweep == "all" and name.startswith("sweep_prologue_"):
            edited = hollow_sweep(source, "void after_prologue(")
        elif sweep == "all" and name.startswith("sweep_compact_"):
            edited = hollow_sweep(source, "__kernel void sweep(")
        elif sweep == "all" and name.startswith("calculate_compact_"):
            edited = hollow_kernel(source)
        else:
            continue
        removed = len(source.splitlines()) - len(edited.splitlines())
        print(f"{variant}: {name}, {removed} lines removed")
        with open(os.path.join(out, variant, name), "w") as f:
            f.write(edited)
