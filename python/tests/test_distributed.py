"""xehe.distributed on a local Ray cluster that can reach nothing but loopback.

The cluster runs in its own network namespace (``unshare -n`` as root, ``unshare -rn``
otherwise) with only ``lo`` up: this file's one test outside the namespace re-runs the file
inside one (``XEHE_RAY_NETNS=1``), where the real tests run against two CPU workers, each holding
one of two logical GPUs. Without ``unshare``/``ip`` or the right to use them, it is skipped with
the reason printed. The same SEAL 4.4 inputs and keys as the rest of the suite; SEAL's
deterministic multiply + relinearize + rescale come back byte for byte.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import xehe

IN_NETNS = os.environ.get("XEHE_RAY_NETNS") == "1"
ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "distributed.md"


if not IN_NETNS:

    def test_distributed_in_a_loopback_only_namespace():
        if os.environ.get("XEHE_DEVICE", "cpu").strip() not in ("", "cpu"):
            pytest.skip("the Ray pool's tests use CPU workers: they run in the CPU pass only")
        pytest.importorskip("ray", reason="ray is not installed (pip install 'xehe[distributed]')")
        unshare, ip = shutil.which("unshare"), shutil.which("ip")
        if not unshare or not ip:
            reason = "the Ray tests need `unshare` and `ip` (util-linux, iproute2) for a loopback-only network namespace"
            print("SKIP:", reason)
            pytest.skip(reason)
        flags = "-n" if os.geteuid() == 0 else "-rn"
        probe = subprocess.run([unshare, flags, ip, "link", "set", "lo", "up"], capture_output=True, text=True)
        if probe.returncode != 0:
            reason = f"cannot make a network namespace (`unshare {flags}`: {probe.stderr.strip()}): the Ray tests need one so that Ray can use loopback only"
            print("SKIP:", reason)
            pytest.skip(reason)
        script = '"$1" link set lo up && shift && exec "$@"'
        cmd = [unshare, flags, "sh", "-c", script, "sh", ip,
               sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-rs"]
        env = dict(os.environ, XEHE_RAY_NETNS="1", PYTHONWARNINGS="ignore::DeprecationWarning")
        start = time.time()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        print(f"---- the Ray tests in a network namespace ({time.time() - start:.0f} s) ----")
        print(r.stdout[-6000:])
        assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-20000:]

else:
    import ray

    from conftest import seal_mrr
    from xehe.distributed import KeySet, Pool

    import seal

    @pytest.fixture(scope="module")
    def cluster():
        # Only lo exists here; Ray is also told to use 127.0.0.1.
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        assert re.findall(r"^\d+: (\S+?):", links, re.M) == ["lo"], links
        ray.init(num_cpus=8, num_gpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
                 object_store_memory=256 << 20, log_to_driver=False)
        yield
        ray.shutdown()

    @pytest.fixture(scope="module")
    def pool(cluster):
        # Two CPU workers, each reserving one of the two logical GPUs.
        p = Pool(2, device="cpu", num_gpus_per_worker=1)
        yield p
        p.shutdown()

    @pytest.fixture(scope="module")
    def data(mrr_data):
        return mrr_data

    @pytest.fixture(scope="module")
    def keys(pool, data):
        pset, _, _ = data
        s = pset.seal
        return pool.load_keys(s.parms.to_bytes(), relin_keys=s.rk.to_string(), galois_keys=s.gk.to_string())

    def test_one_gpu_per_worker_loopback_only(pool):
        ws = pool.workers()
        assert len(ws) == 2
        assert sorted(len(w["gpu_ids"]) for w in ws) == [1, 1]
        assert len({w["gpu_ids"][0] for w in ws}) == 2, ws      # distinct assignments
        assert {w["host"] for w in ws} == {socket.gethostname()}
        assert {w["device"] for w in ws} == {"cpu"}
        assert ray.util.get_node_ip_address() == "127.0.0.1"

    def test_map_is_seal_byte_for_byte(pool, keys, data):
        pset, blobs, cts = data
        items = [{"x": blobs[i], "y": blobs[(i + 1) % len(blobs)]} for i in range(len(blobs))]
        got = list(pool.map(keys, "rescale(relin(x * y))", items))
        want = [seal_mrr(pset, cts[i], cts[(i + 1) % len(cts)]) for i in range(len(cts))]
        assert got == want
        assert pool.eval(keys, "rescale(relin(x * y))", items[0]) == want[0]

    def test_plains_rotations_and_in_process(pool, keys, data):
        pset, blobs, cts = data
        s = pset.seal
        p = s.p.to_bytes()
        got = pool.eval(keys, "rotate(x, 1) + (x + p)", {"x": blobs[0]}, plains={"p": p})
        want = s.ev.add(s.ev.rotate_vector(cts[0], 1, s.gk), s.ev.add_plain(cts[0], s.p)).to_string()
        assert got == want
        x = pset.xehe
        local = xehe.evaluate_expression(x.ctx, "rotate(x, 1) + (x + p)", {"x": blobs[0]}, plains={"p": p},
                                         galois_keys=x.gk)
        assert local == got
        z = pool.eval(keys, "rescale(relin(x * x))", {"x": blobs[1]}, compr_mode="zstd")
        assert x.ctx.from_cipher_str(z).to_string() == seal_mrr(pset, cts[1], cts[1])

    def test_keys_loaded_once_per_worker(pool, keys, data):
        pset, blobs, _ = data
        list(pool.map(keys, "relin(x * x)", [{"x": b} for b in blobs * 2]))
        again = pool.load_keys(pset.seal.parms.to_bytes(), relin_keys=pset.seal.rk.to_string(),
                               galois_keys=pset.seal.gk.to_string())
        assert isinstance(again, KeySet) and again.id == keys.id
        for w in pool.workers():
            assert w["loads"] == {keys.id: 1}, w
            assert w["keysets"] == [keys.id]
            assert w["items"] > 0

    def test_bad_items_fail_alone(pool, keys, data, pset):
        n8192, blobs, cts = data
        other = pset.seal.a.to_string()    # N = 4096 or 8192: wrong parameters for the first
        items = [{"x": blobs[0]}, {"x": b"not a ciphertext"}, {"x": blobs[1]}, {"y": blobs[2]}, {"x": other}]
        out = list(pool.map(keys, "rescale(relin(x * x))", items, return_exceptions=True))
        assert out[0] == seal_mrr(n8192, cts[0], cts[0])
        assert out[2] == seal_mrr(n8192, cts[1], cts[1])
        assert isinstance(out[1], xehe.errors.MalformedDataError), out[1]
        assert isinstance(out[3], xehe.errors.InvalidArgumentError), out[3]     # unknown name x
        if pset.name != n8192.name:
            assert isinstance(out[4], xehe.errors.XeheError) and isinstance(out[4], ValueError), out[4]
        with pytest.raises(xehe.errors.MalformedDataError):
            list(pool.map(keys, "x", items[:2]))
        no_galois = pool.load_keys(n8192.seal.parms.to_bytes())
        with pytest.raises(xehe.errors.MissingKeyError):
            pool.eval(no_galois, "rotate(x, 1)", {"x": blobs[0]})
        assert pool.eval(keys, "rescale(relin(x * x))", {"x": blobs[0]}) == out[0]   # the pool goes on

    def test_killed_worker_is_restarted_and_its_items_rerun(pool, keys, data):
        pset, blobs, cts = data
        before = pool.workers()
        items = [{"x": blobs[i % len(blobs)]} for i in range(24)]
        want = [seal_mrr(pset, cts[i % len(cts)], cts[i % len(cts)]) for i in range(24)]
        results = pool.map(keys, "rescale(relin(x * x))", items, window=len(items))
        got = [next(results)]
        os.kill(before[0]["pid"], signal.SIGKILL)             # items are still queued on it
        got += list(results)
        assert got == want
        after = pool.workers()
        assert after[0]["pid"] != before[0]["pid"]
        assert after[1]["pid"] == before[1]["pid"]
        assert after[0]["loads"] == {keys.id: 1}                # reloaded by the new process

    def test_concurrent_chunks_keep_order_keys_and_restarts(cluster, data):
        # One worker on three chunks at once (a threaded actor): the results stay SEAL's bytes in
        # input order, the key set is loaded once although three chunks ask for it together, and
        # a worker killed with chunks in every thread is restarted and the items rerun.
        pset, blobs, cts = data
        s = pset.seal
        with Pool(1, device="cpu", concurrency=3) as p:
            before = p.workers()[0]
            env = Path(f"/proc/{before['pid']}/environ").read_bytes().split(b"\0")
            assert {f"{k}={v}".encode() for k, v in xehe.distributed.MALLOC_ENV.items()} <= set(env)
            keys = p.load_keys(s.parms.to_bytes(), relin_keys=s.rk.to_string())
            items = [{"x": blobs[i % len(blobs)], "y": blobs[(i + 3) % len(blobs)]} for i in range(24)]
            want = [seal_mrr(pset, cts[i % len(cts)], cts[(i + 3) % len(cts)]) for i in range(24)]
            assert list(p.map(keys, "rescale(relin(x * y))", items, chunk=2)) == want
            assert p.workers()[0]["loads"] == {keys.id: 1}
            results = p.map(keys, "rescale(relin(x * y))", items, chunk=2, window=len(items))
            got = [next(results)]
            os.kill(before["pid"], signal.SIGKILL)
            got += list(results)
            assert got == want
            after = p.workers()[0]
            assert after["pid"] != before["pid"] and after["loads"] == {keys.id: 1}

    def test_bootstrap_through_the_pool(pool, tmp_path):
        params = xehe.BootstrappingParameters.n12_insecure()
        ctx = params.context()
        kg = xehe.KeyGenerator(ctx)
        bkeys = xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key())
        parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
        parms.set_poly_modulus_degree(params.poly_modulus_degree)
        parms.set_coeff_modulus(xehe.CoeffModulus.Create(params.poly_modulus_degree, params.coeff_modulus_bits()))
        key_file = tmp_path / "boot.keys"
        bkeys.save(str(key_file))
        ks = pool.load_keys(parms.to_bytes(), bootstrap_keys=key_file)      # a path every worker reads
        enc = xehe.CKKSEncoder(ctx)
        ct = xehe.Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode([0.5, -0.25], 2.0**40))
        xehe.Evaluator(ctx).mod_switch_to_inplace(ct, ctx.last_parms_id())
        got = pool.eval(ks, "bootstrap(x)", {"x": ct.to_bytes()})
        local = xehe.evaluate_expression(ctx, "bootstrap(x)", {"x": ct}, bootstrapper=xehe.Bootstrapper(ctx, bkeys))
        assert got == local
        out = xehe.Decryptor(ctx, kg.secret_key()).decrypt(ctx.from_cipher_str(got))
        assert np.allclose(enc.decode(out)[:2], [0.5, -0.25], atol=1e-3)
        # Two key sets now, within each worker's bound of two; the first is still loaded.
        assert all(len(w["keysets"]) <= 2 for w in pool.workers())

    def test_readme_pool_example_runs(cluster):
        readme = ROOT / "README.md"
        if not readme.exists():
            pytest.skip("README.md is not beside the tests")
        text = readme.read_text()
        blocks = re.findall(r"```python,xehe\n(.*?)```", text[text.index("## Python"):], re.S)
        assert "xehe.distributed" in blocks[1]
        scope = {}
        exec(compile(blocks[0] + blocks[1], str(readme), "exec"), scope)
        assert len(scope["ys"]) == 4 and len(set(scope["ys"])) == 1 and isinstance(scope["ys"][0], bytes)
        scope["pool"].shutdown()

    def test_guide_page_runs(cluster):
        if not GUIDE.exists():
            pytest.skip("docs/guide is not beside the tests")
        blocks = re.findall(r"```python,xehe\n(.*?)```", GUIDE.read_text(), re.S)
        assert blocks
        exec(compile("\n".join(blocks), str(GUIDE), "exec"), {})
