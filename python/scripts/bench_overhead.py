"""Per-call overhead of the Python layer over the Rust API.

For each operation, the same xehe call is timed two ways on the same objects:
- Python: a loop of `evaluator.op(...)` calls through the bindings (argument checks, borrows,
  GIL release and re-acquisition, the result wrapped in a new Python object and dropped);
- Rust: `xehe._native._rust_call_timing`, a loop inside the extension over the very Rust calls
  the binding makes (`Evaluator::add(&a, &b)`, ...), results dropped the same way.
Both end with one synchronization of the device queue when the operands are on a GPU. The
difference per call is the Python layer's cost (the issue's target: at most 5 µs).

    python scripts/bench_overhead.py                     # CPU, N = 8192
    XEHE_DEVICE=cuda python scripts/bench_overhead.py    # operands marked .gpu()
    python scripts/bench_overhead.py --n 2048            # tiny operations: the overhead alone
    python scripts/bench_overhead.py --json              # machine-readable

Python and Rust runs alternate (--repeats pairs, each run >= --min-time); the overhead is the
median of the paired differences, with their interquartile range. On the CPU xehe runs on one
thread by default (--threads): the per-call overhead does not depend on it, the noise does.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import xehe
from xehe import _native

OPS = ["add", "multiply_plain", "rotate_vector", "negate", "multiply", "relinearize", "rescale_to_next"]


def setup(n, device):
    bits = {2048: [27, 27], 4096: [40, 20, 40], 8192: [60, 40, 40, 60], 16384: [60, 40, 40, 40, 40, 60]}[n]
    scale = 2.0 ** {2048: 10, 4096: 25}.get(n, 40)
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(xehe.CoeffModulus.Create(n, bits))
    ctx = xehe.SEALContext(parms)
    kg = xehe.KeyGenerator(ctx)
    enc = xehe.Encryptor(ctx, kg.create_public_key())
    ce = xehe.CKKSEncoder(ctx)
    ev = xehe.Evaluator(ctx)
    rk = kg.create_relin_keys()
    gk = kg.create_galois_keys([1])
    rng = np.random.default_rng(1)
    a = enc.encrypt(ce.encode(rng.uniform(-1, 1, ce.slot_count()), scale))
    b = enc.encrypt(ce.encode(rng.uniform(-1, 1, ce.slot_count()), scale))
    p = ce.encode(rng.uniform(-1, 1, ce.slot_count()), scale)
    where = "cpu"
    if device != "cpu":
        q = xehe.device.default_queue()
        for obj in (a, b, p):
            obj.gpu()
        where = q.backend()
    prod = ev.multiply(a, b)  # size 3, for relinearize
    relin = ev.relinearize(prod, rk)  # scale Δ², for rescale_to_next
    if ctx.get_context_data(relin.parms_id()).chain_index() == 0:
        relin = None  # one data prime (N = 2048): nothing to rescale to
    return dict(ctx=ctx, ev=ev, a=a, b=b, p=p, rk=rk, gk=gk, prod=prod, relin=relin, where=where, bits=bits)


def calls(o, op):
    """(bound method, positional args) of the Python call, and the Rust timing's keyword args."""
    ev = o["ev"]
    return {
        "add": (ev.add, (o["a"], o["b"]), dict(a=o["a"], b=o["b"])),
        "multiply_plain": (ev.multiply_plain, (o["a"], o["p"]), dict(a=o["a"], plain=o["p"])),
        "rotate_vector": (ev.rotate_vector, (o["a"], 1, o["gk"]), dict(a=o["a"], galois_keys=o["gk"], steps=1)),
        "negate": (ev.negate, (o["a"],), dict(a=o["a"])),
        "multiply": (ev.multiply, (o["a"], o["b"]), dict(a=o["a"], b=o["b"])),
        "relinearize": (ev.relinearize, (o["prod"], o["rk"]), dict(a=o["prod"], relin_keys=o["rk"])),
        "rescale_to_next": (ev.rescale_to_next, (o["relin"],), dict(a=o["relin"])),
    }[op]


def py_loop(method, args, iterations, first):
    """Seconds for `iterations` calls, then one synchronization when on a device."""
    queue = first.queue()
    t = time.perf_counter()
    for _ in range(iterations):
        method(*args)
    if queue is not None:
        queue.synchronize()
    return time.perf_counter() - t


def measure(o, op, repeats, min_time):
    """Python and Rust runs alternate; the overhead is the median of the paired differences
    (slow drifts of the machine cancel within a pair), with the spread of those differences."""
    method, args, rust_kw = calls(o, op)
    first = args[0]
    # Warm up (device kernels compiled, keys uploaded, memory cache filled), then size the runs.
    py_loop(method, args, 3, first)
    _native._rust_call_timing(o["ev"], op, 3, **rust_kw)
    one = py_loop(method, args, 5, first) / 5
    iterations = max(10, int(min_time / max(one, 1e-7)))
    py, rs = [], []
    for i in range(repeats):
        # Alternate which side runs first within a pair.
        if i % 2:
            rs.append(_native._rust_call_timing(o["ev"], op, iterations, **rust_kw) / iterations * 1e6)
            py.append(py_loop(method, args, iterations, first) / iterations * 1e6)
        else:
            py.append(py_loop(method, args, iterations, first) / iterations * 1e6)
            rs.append(_native._rust_call_timing(o["ev"], op, iterations, **rust_kw) / iterations * 1e6)
    diffs = sorted(p - r for p, r in zip(py, rs))
    q = len(diffs) // 4
    return dict(
        op=op,
        iterations=iterations,
        python_us=statistics.median(py),
        rust_us=statistics.median(rs),
        overhead_us=statistics.median(diffs),
        overhead_iqr_us=[diffs[q], diffs[-1 - q]],
        python_min_us=min(py),
        rust_min_us=min(rs),
    )


def method_floor(o, repeats):
    """The cost of a trivial binding call (`Ciphertext.size()`), µs: the floor of any call."""
    ct = o["a"]
    size = ct.size
    runs = []
    for _ in range(repeats):
        n = 200_000
        t = time.perf_counter()
        for _ in range(n):
            size()
        runs.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(runs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8192, choices=[2048, 4096, 8192, 16384],
                    help="N (2048: tiny operations, where the per-call overhead is resolvable on a CPU)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated, from: " + ", ".join(OPS))
    ap.add_argument("--repeats", type=int, default=21, help="pairs of (Python, Rust) runs")
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per timed run")
    ap.add_argument("--threads", type=int, default=None,
                    help="CPU threads of xehe (RAYON_NUM_THREADS); default: 1 on the CPU (less noise), all on a GPU")
    dev = os.environ.get("XEHE_DEVICE", "cpu") or "cpu"
    ap.add_argument("--device", default="cpu" if dev == "cpu" else "gpu", choices=["cpu", "gpu"],
                    help="gpu: operands marked .gpu() (XEHE_DEVICE picks the device); default from XEHE_DEVICE")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--json-out", type=argparse.FileType("w"), help="also write the JSON report to this file")
    args = ap.parse_args(argv)
    threads = args.threads or (1 if args.device == "cpu" else None)
    if threads:
        # Read by xehe's thread pool when it starts (on the first parallel operation, below).
        os.environ["RAYON_NUM_THREADS"] = str(threads)

    o = setup(args.n, args.device)
    ops = [op for op in args.ops.split(",") if not (op == "rescale_to_next" and o["relin"] is None)]
    rows = [measure(o, op, args.repeats, args.min_time) for op in ops]
    floor = method_floor(o, args.repeats)
    report = dict(
        n=args.n,
        coeff_modulus_bits=o["bits"],
        device=o["where"],
        xehe=xehe.__version__,
        python=platform.python_version(),
        machine=f"{platform.machine()}, {os.cpu_count()} cores",
        threads=threads or "all",
        trivial_call_us=floor,
        rows=rows,
    )
    if args.json_out:
        json.dump(report, args.json_out, indent=2)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"xehe {report['xehe']}, Python {report['python']}, {report['machine']}; device: {report['device']}, "
          f"CPU threads: {report['threads']}")
    print(f"N = {args.n}, coeff_modulus bits {o['bits']}; medians of {args.repeats} alternating Python/Rust runs "
          f"of >= {args.min_time} s")
    print(f"trivial binding call (Ciphertext.size()): {floor:.3f} us")
    print()
    print(f"| {'operation':<16} | {'Python µs/op':>12} | {'Rust µs/op':>10} | {'overhead µs/op':>14} | {'interquartile range':>19} |")
    print(f"|{'-' * 18}|{'-' * 13}:|{'-' * 11}:|{'-' * 15}:|{'-' * 20}:|")
    for r in rows:
        lo, hi = r["overhead_iqr_us"]
        print(f"| {r['op']:<16} | {r['python_us']:>12.2f} | {r['rust_us']:>10.2f} | {r['overhead_us']:>14.2f} | "
              f"{lo:>8.2f} … {hi:>8.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
