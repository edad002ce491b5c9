"""Throughput of xehe.distributed against the number of workers, and its cost per item.

Two programs, each item its own ciphertexts (SEAL bytes in, SEAL bytes out):
- ``rescale(relin(x * y))`` at N = 2^14 (coeff_modulus 60, 40, 40, 40, 60), or ``--expr``;
- ``bootstrap(x)`` at N = 2^12 (the INSECURE test preset ``n12_insecure``).

For each worker count, a fresh pool runs every item through ``pool.map``; items/s is items over
wall time. In-process, the same ``xehe.evaluate_expression`` call on the same bytes, with the
same number of threads as one worker, gives the pool's cost per item (one worker's time per item
in a stream minus the in-process time; and one ``pool.eval`` round trip minus it), and the
workers' busy time gives the share of the wall time that went to anything but evaluating
(moving bytes, scheduling, Ray); the CPU time of this process and the workers beyond the
in-process time is the pool's cost where cores are short (a small CPU machine: there the wall
time is their sum over the cores left).

    python python/examples/distributed_bench.py                       # CPU workers 1, 2 (local Ray)
    python python/examples/distributed_bench.py --workers 1,2,4 --items 64
    python python/examples/distributed_bench.py --device cuda --n 65536 --no-bootstrap   # GPU workers
    python python/examples/distributed_bench.py --ray-address auto    # an existing cluster
    python python/examples/distributed_bench.py --loopback            # local Ray on 127.0.0.1 only
    python python/examples/distributed_bench.py --n 65536 --expr "x + y" --workers 1 --no-bootstrap
                                                                      # the transport cost alone

Needs ray (``pip install 'xehe[distributed]'``).
"""

import argparse
import json
import os
import statistics
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--workers", default="1,2", help="worker counts to measure (default 1,2)")
parser.add_argument("--device", default="cpu", help="cpu (default), cuda, auto")
parser.add_argument("--threads", type=int, default=1, help="CPU threads per worker and in-process (default 1)")
parser.add_argument("--n", type=int, default=16384, help="N of the two-ciphertext program")
parser.add_argument("--expr", default="rescale(relin(x * y))",
                    help="the two-ciphertext program (default rescale(relin(x * y)); `x + y` leaves little "
                         "but the pool's own cost: moving the bytes)")
parser.add_argument("--items", type=int, default=48, help="items of the two-ciphertext program per run")
parser.add_argument("--boot-items", type=int, default=8, help="bootstraps per run")
parser.add_argument("--no-bootstrap", action="store_true", help="skip the bootstrapping program")
parser.add_argument("--repeats", type=int, default=3, help="runs per worker count (the best is kept)")
parser.add_argument("--concurrency", type=int, default=None,
                    help="chunks a worker works on at once (Pool's concurrency; default the pool's)")
parser.add_argument("--chunk", type=int, default=None, help="items per Ray task (default adaptive)")
parser.add_argument("--ray-address", default=None, help="join this Ray cluster instead of starting one")
parser.add_argument("--loopback", action="store_true", help="local Ray bound to 127.0.0.1, no dashboard")
parser.add_argument("--json", action="store_true", help="print the results as JSON")
args = parser.parse_args()

# One worker's thread count in this process too (before xehe's thread pool starts).
os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))

import numpy as np  # noqa: E402
import ray  # noqa: E402

import xehe  # noqa: E402
from xehe.distributed import Pool  # noqa: E402


def mrr_program(n, count):
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(xehe.CoeffModulus.Create(n, [60, 40, 40, 40, 60]))
    # N = 2^16 is beyond SEAL's 128-bit table: SEAL (and xehe) need sec_level_type.none there.
    level = xehe.sec_level_type.none if n > 32768 else xehe.sec_level_type.tc128
    ctx = xehe.SEALContext(parms, True, level)
    kg = xehe.KeyGenerator(ctx)
    rk = kg.create_relin_keys()
    enc, encryptor = xehe.CKKSEncoder(ctx), xehe.Encryptor(ctx, kg.create_public_key())
    rng = np.random.default_rng(1)
    cts = [encryptor.encrypt(enc.encode(rng.uniform(-1, 1, n // 2), 2.0**40)).to_bytes() for _ in range(8)]
    items = [{"x": cts[i % 8], "y": cts[(i + 3) % 8]} for i in range(count)]
    keys = {"params": parms.to_bytes(), "relin_keys": rk.to_bytes()}
    local = dict(context=ctx, relin_keys=rk)
    return args.expr, keys, items, local


def boot_program(count):
    params = xehe.BootstrappingParameters.n12_insecure()
    ctx = params.context()
    n = params.poly_modulus_degree
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(xehe.CoeffModulus.Create(n, params.coeff_modulus_bits()))
    kg = xehe.KeyGenerator(ctx)
    bkeys = xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key())
    enc, encryptor = xehe.CKKSEncoder(ctx), xehe.Encryptor(ctx, kg.create_public_key())
    ev = xehe.Evaluator(ctx)
    rng = np.random.default_rng(2)
    cts = []
    for _ in range(4):
        ct = encryptor.encrypt(enc.encode(rng.uniform(-1, 1, n // 2), 2.0**40))
        ev.mod_switch_to_inplace(ct, ctx.last_parms_id())
        cts.append(ct.to_bytes())
    items = [{"x": cts[i % 4]} for i in range(count)]
    keys = {"params": parms.to_bytes(), "bootstrap_keys": bkeys.to_bytes()}
    local = dict(context=ctx, bootstrapper=xehe.Bootstrapper(ctx, bkeys))
    return "bootstrap(x)", keys, items, local


def in_process(expr, items, local, repeats):
    """Seconds per item of the same call in this process (median of per-item times)."""
    xehe.evaluate_expression(expr=expr, inputs=items[0], **local)    # warm-up
    times = []
    for _ in range(repeats):
        for item in items[: max(4, len(items) // 4)]:
            t = time.perf_counter()
            xehe.evaluate_expression(expr=expr, inputs=item, **local)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(name, expr, keys, items, local):
    key_bytes = sum(len(v) for v in keys.values())
    if args.device != "cpu":
        # In-process on the device the workers use (Ray gives each worker its GPU as cuda:0).
        local = dict(local, queue=xehe.device.new_queue("cuda:0" if args.device in ("cuda", "gpu", "auto") else args.device))
    t_local = in_process(expr, items, local, args.repeats)
    rows = []
    for w in [int(x) for x in args.workers.split(",")]:
        extra = {} if args.concurrency is None else {"concurrency": args.concurrency}
        pool = Pool(w, device=args.device, cpus_per_worker=args.threads, **extra)
        t = time.perf_counter()
        keyset = pool.load_keys(**keys)
        t_keys = time.perf_counter() - t
        list(pool.map(keyset, expr, items[: 2 * w]))                   # warm-up
        best = None
        for _ in range(args.repeats):
            before = pool.workers()
            t, cpu = time.perf_counter(), time.process_time()
            out = list(pool.map(keyset, expr, items, chunk=args.chunk))
            wall, cpu = time.perf_counter() - t, time.process_time() - cpu
            after = pool.workers()
            busy = sum(x["busy_s"] for x in after) - sum(x["busy_s"] for x in before)
            # CPU time of this process and the workers (Ray's own processes not counted).
            cpu += sum(x["cpu_s"] for x in after) - sum(x["cpu_s"] for x in before)
            if best is None or wall < best[0]:
                best = (wall, busy, cpu)
        assert len(out) == len(items)
        wall, busy, cpu = best
        # One item at a time: the round trip of pool.eval.
        lat = []
        for item in items[: max(4, min(12, len(items)))]:
            t = time.perf_counter()
            pool.eval(keyset, expr, item)
            lat.append(time.perf_counter() - t)
        row = {
            "program": name, "workers": w, "items": len(items),
            "items_per_s": len(items) / wall,
            "wall_s": wall,
            "per_item_ms": 1e3 * wall * w / len(items),
            "in_process_ms": 1e3 * t_local,
            "stream_overhead_ms": 1e3 * (wall * w / len(items) - t_local),
            "eval_round_trip_ms": 1e3 * statistics.median(lat),
            "round_trip_overhead_ms": 1e3 * (statistics.median(lat) - t_local),
            "not_evaluating_share": max(0.0, 1 - busy / (wall * w)),
            # The pool's CPU cost per item beyond evaluating: what the wall time shows where
            # cores are short (or shared), as on a small CPU machine.
            "cpu_per_item_ms": 1e3 * cpu / len(items),
            "cpu_overhead_ms": 1e3 * (cpu / len(items) - t_local),
            "keys_bytes": key_bytes, "load_keys_s": t_keys,
            "item_bytes": sum(len(v) for v in items[0].values()),
        }
        rows.append(row)
        pool.shutdown()
    base = rows[0]["items_per_s"]
    for r in rows:
        r["speedup"] = r["items_per_s"] / base
    return rows


def main():
    if not ray.is_initialized():
        if args.ray_address:
            ray.init(address=args.ray_address)
        elif args.loopback:
            ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    results = []
    results += measure(f"{args.expr} N={args.n}", *mrr_program(args.n, args.items))
    if not args.no_bootstrap:
        results += measure("bootstrap N=4096 (n12_insecure)", *boot_program(args.boot_items))
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    info = {"cpus": os.cpu_count(), "device": args.device, "threads_per_worker": args.threads,
            "load_before": load, "load_after": load_after, "ray": ray.__version__, "xehe": xehe.__version__}
    if args.json:
        print(json.dumps({"info": info, "results": results}, indent=1))
        return
    print(f"# {info}")
    print(f"{'program':42} {'workers':>7} {'items/s':>8} {'speedup':>7} {'ms/item':>8} {'in-proc':>8} "
          f"{'stream+':>8} {'cpu+':>7} {'eval rt':>8} {'rt+':>7} {'not eval':>8} {'keys':>9} {'load':>6}")
    for r in results:
        print(f"{r['program']:42} {r['workers']:>7} {r['items_per_s']:8.2f} {r['speedup']:6.2f}x "
              f"{r['per_item_ms']:8.1f} {r['in_process_ms']:8.1f} {r['stream_overhead_ms']:8.2f} {r['cpu_overhead_ms']:7.2f} "
              f"{r['eval_round_trip_ms']:8.1f} {r['round_trip_overhead_ms']:7.2f} "
              f"{100 * r['not_evaluating_share']:7.1f}% {r['keys_bytes'] / 2**20:7.1f}Mi {r['load_keys_s']:5.1f}s")
    print("ms/item: wall x workers / items; in-proc: the same call in this process; stream+: their "
          "difference; cpu+: CPU ms per item of this process and the workers beyond in-proc; eval rt / rt+: one pool.eval round trip and its excess; not eval: share of the "
          "workers' wall time not spent in evaluate_expression")


if __name__ == "__main__":
    sys.exit(main())
