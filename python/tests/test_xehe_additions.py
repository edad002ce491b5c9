"""xehe's additions under their own names: device residency, queues and device info,
CiphertextBatch with the batched evaluator methods, hybrid key switching; and the Python-side
habits: the GIL released during long operations, copies, pickling."""

import copy
import pickle
import threading
import time

import numpy as np
import pytest

import xehe
from xehe import errors


# ---- devices ------------------------------------------------------------------------------------
def test_backends_report():
    report = xehe.device.backends()
    names = [b["backend"] for b in report]
    assert names[:3] == ["cpu", "cuda", "opencl"]
    cpu = report[0]
    assert cpu["available"] and cpu["compiled"] and cpu["devices"]
    for b in report:
        assert set(b) >= {"backend", "compiled", "available", "missing", "versions", "devices"}
        assert b["available"] == (b["missing"] is None)
    text = xehe.device.info()
    assert "cpu: available" in text


def test_gpu_marking_and_results(n8192):
    """On a GPU: results of marked operands stay on the device (is_dirty) until download/
    decrypt/save, and equal SEAL's bytes; cpu() brings an object back. Without one: DeviceError
    (tests/test_errors.py)."""
    if not xehe.device.gpu_available():
        pytest.skip("no usable GPU here")
    s = n8192
    x = s.fresh()
    a = xehe.Ciphertext(x.a)
    assert a.gpu() is a and a.is_gpu()
    q = a.queue()
    assert isinstance(q, xehe.Queue) and q.backend() in ("cuda", "opencl", "level-zero")
    r = s.xehe.ev.multiply_plain(a, x.p)
    assert r.is_gpu()
    q.synchronize()
    want = s.seal.ev.multiply_plain(s.seal.a, s.seal.p).to_string()
    assert r.to_string() == want
    r.download()
    assert not r.is_dirty()
    r.cpu()
    assert not r.is_gpu() and r.to_string() == want
    other = xehe.device.new_queue()
    b = xehe.Ciphertext(x.b).gpu(other)
    assert b.queue() == other
    assert isinstance(q.memcache_stats(), dict)
    # The same stream with 32-bit data words: another queue, and itself once narrowed.
    narrow = q.word32()
    assert (q.word_bits, narrow.word_bits) == (64, 32)
    assert narrow != q and narrow.word32() == narrow and narrow.backend() == q.backend()


# ---- CiphertextBatch ------------------------------------------------------------------------------
def _place(obj, s):
    if s.gpu:
        obj.gpu()
    return obj


def test_batched_operations_equal_seal_per_instance(n8192):
    s = n8192
    sev, xev = s.seal.ev, s.xehe.ev
    x = s.fresh()
    sa = [s.seal.a, s.seal.b, sev.negate(s.seal.a)]
    xa = [x.a, x.b, xev.negate(x.a)]
    sb = [s.seal.b, s.seal.a, s.seal.b]
    xb = [x.b, x.a, x.b]
    A = _place(xehe.CiphertextBatch(xa), s)
    B = _place(xehe.CiphertextBatch(xb), s)
    assert len(A) == 3 and A.size() == 2 and A.parms_id() == s.seal.first_pid and A.scale() == s.scale
    assert A.poly_modulus_degree() == s.n and A.coeff_modulus_size() == len(s.bits) - 1 and A.is_ntt_form()
    assert [c.to_string() for c in A.to_ciphertexts()] == [c.to_string() for c in sa]
    assert A[-1].to_string() == sa[2].to_string() and A.get(0).to_string() == sa[0].to_string()

    def check(batch, want):
        got = [c.to_string() for c in batch.to_ciphertexts()]
        assert got == [w.to_string() for w in want]

    check(xev.add_batch(A, B), [sev.add(u, v) for u, v in zip(sa, sb)])
    check(xev.sub_batch(A, B), [sev.sub(u, v) for u, v in zip(sa, sb)])
    check(xev.negate_batch(A), [sev.negate(u) for u in sa])
    check(xev.multiply_plain_batch(A, x.p), [sev.multiply_plain(u, s.seal.p) for u in sa])
    check(xev.multiply_plain_batch(A, [x.p, x.p, x.p]), [sev.multiply_plain(u, s.seal.p) for u in sa])
    prod = xev.multiply_batch(A, B)
    check(prod, [sev.multiply(u, v) for u, v in zip(sa, sb)])
    rr = xev.rescale_to_next_batch(xev.relinearize_batch(prod, s.xehe.rk))
    want_rr = [sev.rescale_to_next(sev.relinearize(sev.multiply(u, v), s.seal.rk)) for u, v in zip(sa, sb)]
    check(rr, want_rr)
    check(xev.rotate_vector_batch(A, 3, s.xehe.gk), [sev.rotate_vector(u, 3, s.seal.gk) for u in sa])
    check(xev.apply_galois_batch(A, 2 * s.n - 1, s.xehe.gk), [sev.apply_galois(u, 2 * s.n - 1, s.seal.gk) for u in sa])


def test_batch_errors(n8192):
    s = n8192
    x = s.fresh()
    with pytest.raises(ValueError):
        xehe.CiphertextBatch([])
    with pytest.raises(ValueError):
        xehe.CiphertextBatch([x.a, s.xehe.ev.mod_switch_to_next(x.b)])
    A = xehe.CiphertextBatch([x.a, x.b])
    with pytest.raises(IndexError):
        A[2]
    with pytest.raises(ValueError):
        s.xehe.ev.add_batch(A, xehe.CiphertextBatch([x.a]))
    with pytest.raises(ValueError):
        s.xehe.ev.multiply_plain_batch(A, [x.p, x.p, x.p])
    assert A[1].to_string() == s.seal.b.to_string()


# ---- hybrid key switching -------------------------------------------------------------------------
def test_hybrid_with_seal_parameters_equals_seal_relinearize(n8192):
    """With one special prime and one digit per prime (KeySwitchParams.single_special_prime), SEAL's own keys
    are hybrid keys, and relinearize_hybrid equals SEAL's relinearize byte for byte."""
    s = n8192
    ks = xehe.HybridKeySwitching(s.xehe.ctx, xehe.KeySwitchParams.single_special_prime(s.xehe.ctx))
    assert ks.params() == xehe.KeySwitchParams(1, len(s.bits) - 1)
    assert [m.value() for m in ks.special_primes()] == [s.seal.parms.coeff_modulus()[-1].value()]
    hk = xehe.HybridRelinKeys.from_relin_keys(ks, s.xehe.rk)
    x = s.fresh()
    prod = s.xehe.ev.multiply(x.a, x.b)
    want = s.seal.ev.relinearize(s.seal.ev.multiply(s.seal.a, s.seal.b), s.seal.rk).to_string()
    assert s.xehe.ev.relinearize_hybrid(prod, hk).to_string() == want
    s.xehe.ev.relinearize_hybrid_inplace(prod, hk)
    assert prod.to_string() == want


def test_hybrid_keys_decrypt_correctly(tmp_path, gpu):
    """α = 2 special primes, dnum = 2 digits: multiply + relinearize_hybrid + rescale and
    rotate_vector_hybrid decrypt to the expected values; keys round-trip through bytes."""
    n = 8192
    p = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    p.set_poly_modulus_degree(n)
    p.set_coeff_modulus(xehe.CoeffModulus.Create(n, [40, 30, 30, 40]))
    ctx = xehe.SEALContext(p)
    params = xehe.KeySwitchParams(2, 2)
    ks = xehe.HybridKeySwitching(ctx, params)
    assert ks.digit_size() == 2 and ks.digit_count(3) == 2 and len(ks.key_moduli()) == 5
    kg = xehe.KeyGenerator(ctx)
    rk = kg.create_hybrid_relin_keys(ks)
    gk = kg.create_hybrid_galois_keys(ks, [1, 0])
    assert gk.has_key(3) and gk.has_key(2 * n - 1) and gk.galois_elts() == [3, 2 * n - 1]
    enc = xehe.Encryptor(ctx, kg.create_public_key())
    dec = xehe.Decryptor(ctx, kg.secret_key())
    ce = xehe.CKKSEncoder(ctx)
    ev = xehe.Evaluator(ctx)
    v = np.linspace(-1, 1, ce.slot_count())
    ct = enc.encrypt(ce.encode(v, 2.0**30))
    if gpu:
        ct.gpu()
    sq = ev.rescale_to_next(ev.relinearize_hybrid(ev.multiply(ct, ct), rk))
    assert np.allclose(ce.decode(dec.decrypt(sq)), v * v, atol=1e-3)
    rot = ev.rotate_vector_hybrid(ct, 1, gk)
    assert np.allclose(ce.decode(dec.decrypt(rot)), np.roll(v, -1), atol=1e-3)
    conj = ev.apply_galois_hybrid(ct, 2 * n - 1, gk)
    assert np.allclose(ce.decode(dec.decrypt(conj)), v, atol=1e-3)
    with pytest.raises(ValueError):
        ev.rotate_vector_hybrid(ct, 2, gk)  # NAF 2: no key
    # xehe's own serialization of hybrid keys.
    rk2 = xehe.HybridRelinKeys.load_bytes(ks, rk.to_bytes())
    assert rk2.to_bytes() == rk.to_bytes()
    gk.save(str(tmp_path / "gk.bin"), xehe.compr_mode_type.zstd)
    gk2 = xehe.HybridGaloisKeys.load(ks, str(tmp_path / "gk.bin"))
    assert gk2.to_bytes() == gk.to_bytes()
    # Keys limited to the levels of at most 2 data primes: one digit over 2 + 2 primes.
    low = kg.create_hybrid_galois_keys_for_levels(ks, [3], 2)
    assert len(low.to_bytes()) < len(kg.create_hybrid_galois_keys_from_elts(ks, [3]).to_bytes()) / 2
    rot = ev.rotate_vector_hybrid(ev.mod_switch_to_next(ct), 1, low)
    assert np.allclose(ce.decode(dec.decrypt(rot)), np.roll(v, -1), atol=1e-3)
    with pytest.raises(xehe.errors.MissingKeyError):
        ev.rotate_vector_hybrid(ct, 1, low)  # 3 primes: above the keys' levels
    assert xehe.HybridGaloisKeys.load_bytes(ks, low.to_bytes()).to_bytes() == low.to_bytes()
    other = xehe.HybridKeySwitching(ctx, xehe.KeySwitchParams(1, 3))
    with pytest.raises(ValueError):
        xehe.HybridRelinKeys.load_bytes(other, rk.to_bytes())
    with pytest.raises(ValueError):
        xehe.HybridKeySwitching(ctx, xehe.KeySwitchParams(0, 1))


# ---- Python-side behaviour --------------------------------------------------------------------
def test_gil_is_released_during_long_operations(n8192):
    """While one thread generates Galois keys (long, native), another runs Python code."""
    s = n8192
    kg = xehe.KeyGenerator(s.xehe.ctx)
    done = threading.Event()
    ticks = []

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    start = time.perf_counter()
    for _ in range(3):
        kg.create_galois_keys()
    end = time.perf_counter()
    done.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    # With the GIL held for the whole key generation the other thread could not tick at all.
    assert end - start > 0.05
    assert len(during) >= 5, f"{len(during)} ticks during {end - start:.3f} s of key generation"


def test_copies_pickling_and_reprs(n8192):
    s = n8192
    x = s.fresh()
    for obj in (x.a, x.p, s.xehe.rk, s.xehe.gk, s.xehe.sk, s.xehe.pk):
        c = copy.copy(obj)
        d = copy.deepcopy(obj)
        assert type(c) is type(obj) and type(d) is type(obj)
        data = obj.to_string() if hasattr(obj, "to_string") and not isinstance(obj, xehe.Plaintext) else obj.to_bytes()
        again = c.to_string() if not isinstance(c, xehe.Plaintext) else c.to_bytes()
        assert again == data
        assert repr(obj)
    c = xehe.Ciphertext(x.a)
    c.scale(3.0)
    assert c.scale() == 3.0 and x.a.scale() == s.scale
    c.set_scale(4.0)
    assert c.scale() == 4.0
    p = pickle.loads(pickle.dumps(s.xehe.parms))
    assert p == s.xehe.parms and p.to_bytes() == s.seal.parms.to_bytes()
    assert p.parms_id() == s.seal.ctx.key_context_data().parms_id()
    for e in ("scheme_type", "compr_mode_type", "sec_level_type"):
        for name in ("none",):
            assert int(getattr(getattr(xehe, e), name)) == int(getattr(getattr(s.seal.lib, e), name))
    assert pickle.loads(pickle.dumps(xehe.sec_level_type.tc256)) == xehe.sec_level_type.tc256
    assert int(xehe.sec_level_type.tc192) == int(s.seal.lib.sec_level_type.tc192) == 192
    assert xehe.scheme_type.ckks.name == "ckks" and xehe.scheme_type.ckks.value == 2
    ct = xehe.Ciphertext(s.xehe.ctx)
    assert ct.size() == 0 and ct.parms_id() == s.seal.first_pid
    ct = xehe.Ciphertext(s.xehe.ctx, s.xehe.last_pid)
    assert ct.coeff_modulus_size() == 1
    z = s.xehe.encryptor.encrypt_zero()
    assert z.parms_id() == s.seal.first_pid and z.scale() == 1.0
    z2 = xehe.Ciphertext()
    s.xehe.encryptor.encrypt_zero(s.xehe.last_pid, z2)
    assert z2.parms_id() == s.seal.last_pid
    z.set_scale(s.scale)  # an encryption of zero at scale 1: its noise decodes near 0 at scale Δ
    assert np.allclose(s.xehe.encoder.decode(s.xehe.decryptor.decrypt(z)), 0, atol=1e-3)


def test_seal_namespace_is_seal_pythons():
    """`xehe.seal` exports seal-python's CKKS names (the same objects as `xehe`'s)."""
    import seal

    import xehe.seal as xs

    for name in xs.__all__:
        assert hasattr(seal, name), name
        assert getattr(xs, name) is getattr(xehe, name), name
    missing = {n for n in dir(seal) if not n.startswith("_")} - set(xs.__all__)
    assert missing == {"BatchEncoder", "PlainModulus", "MemoryManager", "MemoryPoolHandle",
                       "EncryptionParameterQualifiers", "error_type"}
    for cls in ("Evaluator", "Ciphertext", "Plaintext", "CKKSEncoder", "KeyGenerator", "Encryptor",
                "Decryptor", "SEALContext", "EncryptionParameters", "RelinKeys", "GaloisKeys",
                "PublicKey", "SecretKey", "ContextData", "Modulus"):
        want = {m for m in dir(getattr(seal, cls)) if not m.startswith("_")}
        got = {m for m in dir(getattr(xs, cls)) if not m.startswith("_")}
        lacking = want - got
        if cls == "ContextData":
            lacking -= {"qualifiers"}  # EncryptionParameterQualifiers: SEAL internals, not wrapped
        assert not lacking, f"{cls} lacks {sorted(lacking)}"
