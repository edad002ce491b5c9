"""xehe.distributed across two hosts: a Ray head and a worker node in two network namespaces
joined by a veth pair, each with only its end of the pair and loopback (addresses in
10.213.0.0/24, which exist only inside those namespaces; nothing else is reachable).

The test outside the namespaces (root only: ``ip netns``) makes them, starts ``ray start --head``
in one and ``ray start --address`` in the other — the commands of docs/guide/distributed.md's
"Several machines" — then re-runs this file inside the head's namespace (``XEHE_RAY_CLUSTER``),
where a pool of two workers spread over the two nodes evaluates SEAL 4.4 ciphertexts: the
results are SEAL's bytes, the key set is loaded once per worker, and the worker node is killed
in the middle of a map (every process of its namespace) — its items are retried on the head and
the results are the same bytes. Everything is stopped and removed at the end, whatever happened,
within bounded time.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import xehe

CLUSTER = os.environ.get("XEHE_RAY_CLUSTER")
HEAD, WORKER = "xehe-head", "xehe-worker"
HEAD_IP, WORKER_IP, PORT = "10.213.0.1", "10.213.0.2", 6379


def _run(*cmd, check=True, timeout=60):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def _netns_pids(ns):
    r = _run("ip", "netns", "pids", ns, check=False)
    return [int(p) for p in r.stdout.split()]


def _kill_netns(ns):
    for pid in _netns_pids(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


if not CLUSTER:

    # Ray 2.5x authenticates its nodes with a shared token (older versions ignore it); a lost
    # node is declared dead after 3 missed health checks of 500 ms (Ray's default: 5 of 3 s).
    TOKEN_ENV = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": os.urandom(16).hex(), "RAY_USAGE_STATS_ENABLED": "0",
                 "RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}

    def _ray_start(ns, *args, tmp):
        ray_cli = [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
        env = dict(os.environ, **TOKEN_ENV)
        head = ["--include-dashboard=false", f"--temp-dir={tmp}"] if "--head" in args else []
        return subprocess.run(["ip", "netns", "exec", ns, *ray_cli, "start", *args, *head,
                               "--disable-usage-stats", "--object-store-memory=268435456"],
                              capture_output=True, text=True, timeout=120, env=env)

    def test_two_hosts_in_network_namespaces():
        if os.environ.get("XEHE_DEVICE", "cpu").strip() not in ("", "cpu"):
            pytest.skip("the cluster's tests use CPU workers: they run in the CPU pass only")
        pytest.importorskip("ray", reason="ray is not installed (pip install 'xehe[distributed]')")
        if not shutil.which("ip") or os.geteuid() != 0:
            reason = "two hosts need `ip netns` (iproute2) as root"
            print("SKIP:", reason)
            pytest.skip(reason)
        for ns in (HEAD, WORKER):      # a previous run's leftovers
            _kill_netns(ns)
            _run("ip", "netns", "del", ns, check=False)
        probe = _run("ip", "netns", "add", HEAD, check=False)
        if probe.returncode != 0:
            reason = f"cannot make a network namespace ({probe.stderr.strip()})"
            print("SKIP:", reason)
            pytest.skip(reason)
        start = time.time()
        # Short: Ray's socket paths under it must stay within AF_UNIX's 107 bytes.
        tmp = Path(tempfile.mkdtemp(prefix="xr", dir="/tmp"))
        try:
            _run("ip", "netns", "add", WORKER)
            _run("ip", "link", "add", "xehe-v0", "netns", HEAD, "type", "veth", "peer", "name", "xehe-v1",
                 "netns", WORKER)
            for ns, dev, ip in ((HEAD, "xehe-v0", HEAD_IP), (WORKER, "xehe-v1", WORKER_IP)):
                _run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
                _run("ip", "-n", ns, "link", "set", dev, "up")
                _run("ip", "-n", ns, "link", "set", "lo", "up")
            # Two CPUs a node: one worker each, and room on the head for the worker that moves.
            head = _ray_start(HEAD, "--head", f"--node-ip-address={HEAD_IP}", f"--port={PORT}",
                              "--num-cpus=2", "--num-gpus=0", tmp=tmp / "h")
            assert head.returncode == 0, head.stdout[-4000:] + head.stderr[-4000:]
            worker = _ray_start(WORKER, f"--address={HEAD_IP}:{PORT}", f"--node-ip-address={WORKER_IP}",
                                "--num-cpus=2", "--num-gpus=0", tmp=tmp / "w")
            assert worker.returncode == 0, worker.stdout[-4000:] + worker.stderr[-4000:]
            env = dict(os.environ, XEHE_RAY_CLUSTER=f"{HEAD_IP}:{PORT}",
                       PYTHONWARNINGS="ignore::DeprecationWarning", **TOKEN_ENV)
            r = subprocess.run(["ip", "netns", "exec", HEAD, sys.executable, "-m", "pytest", __file__, "-q",
                                "-p", "no:cacheprovider", "-rs"],
                               env=env, capture_output=True, text=True, timeout=600)
            print(f"---- the cluster's tests in the head's namespace ({time.time() - start:.0f} s) ----")
            print(r.stdout[-6000:])
            assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-20000:]
        finally:
            for ns in (WORKER, HEAD):
                _kill_netns(ns)
                _run("ip", "netns", "del", ns, check=False)
            shutil.rmtree(tmp, ignore_errors=True)

else:
    import ray

    from conftest import seal_mrr
    from xehe.distributed import Pool

    @pytest.fixture(scope="module")
    def pool():
        ray.init(address=CLUSTER, log_to_driver=False)
        # Items of a lost worker are retried until it is restarted elsewhere (Ray first reports
        # the actor as unavailable, then, once the node is declared dead, restarts it).
        p = Pool(2, device="cpu", scheduling_strategy="SPREAD", max_task_retries=-1)
        yield p
        p.shutdown()
        ray.shutdown()

    def test_pool_spans_both_hosts_and_survives_losing_one(pool, mrr_data):
        pset, blobs, cts = mrr_data
        s = pset.seal
        nodes = {n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}
        assert nodes == {HEAD_IP, WORKER_IP}, nodes
        before = pool.workers()
        assert sorted(w["node_ip"] for w in before) == [HEAD_IP, WORKER_IP], before
        keys = pool.load_keys(s.parms.to_bytes(), relin_keys=s.rk.to_string())
        items = [{"x": blobs[i % len(blobs)], "y": blobs[(i + 1) % len(blobs)]} for i in range(24)]
        want = [seal_mrr(pset, cts[i % len(cts)], cts[(i + 1) % len(cts)]) for i in range(24)]
        assert list(pool.map(keys, "rescale(relin(x * y))", items)) == want
        assert [w["loads"] for w in pool.workers()] == [{keys.id: 1}, {keys.id: 1}]
        # The worker host dies in the middle of a map: its items are retried on the head.
        results = pool.map(keys, "rescale(relin(x * y))", items, window=len(items))
        got = [next(results)]
        _kill_netns(WORKER)
        got += list(results)
        assert got == want
        after = pool.workers()
        assert {w["node_ip"] for w in after} == {HEAD_IP}, after
        moved = [w for w in after if w["pid"] not in {b["pid"] for b in before}]
        assert len(moved) == 1 and moved[0]["loads"] == {keys.id: 1}, after
