"""SEAL objects made by seal-python 4.4 load in xehe (parameters, keys, ciphertexts, plaintexts)
with the same metadata and save back to the same bytes; xehe's objects load in seal-python."""

import numpy as np
import pytest

import xehe


def test_parameters_and_chain_match_seal(pset):
    s = pset
    sp, xp = s.seal.parms, s.xehe.parms
    assert xp.to_bytes() == sp.to_bytes()
    assert xp.save_size() == sp.save_size()
    assert xp.poly_modulus_degree() == sp.poly_modulus_degree()
    assert [m.value() for m in xp.coeff_modulus()] == [m.value() for m in sp.coeff_modulus()]
    assert [m.bit_count() for m in xp.coeff_modulus()] == [m.bit_count() for m in sp.coeff_modulus()]
    assert xp.plain_modulus().value() == sp.plain_modulus().value() == 0
    assert int(xp.scheme()) == int(sp.scheme()) == 2
    # The modulus-switching chain: parms_ids, chain indices, total moduli, level by level.
    sd, xd = s.seal.ctx.key_context_data(), s.xehe.ctx.key_context_data()
    levels = 0
    while sd is not None:
        assert xd is not None
        assert xd.parms_id() == sd.parms_id()
        assert xd.chain_index() == sd.chain_index()
        # seal-python returns the product's lowest 64-bit word only; xehe the whole product.
        assert xd.total_coeff_modulus() % 2**64 == sd.total_coeff_modulus()
        assert xd.total_coeff_modulus() == np.prod([m.value() for m in sd.parms().coeff_modulus()], dtype=object)
        assert xd.total_coeff_modulus_bit_count() == sd.total_coeff_modulus_bit_count()
        assert xd.parms().to_bytes() == sd.parms().to_bytes()
        sd, xd, levels = sd.next_context_data(), xd.next_context_data(), levels + 1
    assert xd is None and levels == len(s.bits)
    for f in ("first_parms_id", "last_parms_id", "using_keyswitching", "parameters_set"):
        assert getattr(s.xehe.ctx, f)() == getattr(s.seal.ctx, f)(), f
    assert s.xehe.ctx.get_context_data(s.seal.ctx.first_parms_id()).chain_index() == len(s.bits) - 2
    assert s.xehe.ctx.get_context_data([1, 2, 3, 4]) is None


@pytest.mark.parametrize("n", [1024, 4096, 8192, 16384, 32768])
def test_coeff_modulus_helpers_match_seal(n):
    import seal

    for bits in ([60, 40, 40, 60], [30, 20, 20, 30], [50] * 3, [17] * 2):
        try:
            want = [m.value() for m in seal.CoeffModulus.Create(n, bits)]
        except RuntimeError:  # SEAL: "failed to find enough qualifying primes"
            with pytest.raises((ValueError, RuntimeError)):
                xehe.CoeffModulus.Create(n, bits)
            continue
        got = [m.value() for m in xehe.CoeffModulus.Create(n, bits)]
        assert got == want
    for lvl in ("tc128", "tc192", "tc256"):
        assert xehe.CoeffModulus.MaxBitCount(n, getattr(xehe.sec_level_type, lvl)) == seal.CoeffModulus.MaxBitCount(
            n, getattr(seal.sec_level_type, lvl)
        )
    assert [m.value() for m in xehe.CoeffModulus.BFVDefault(n)] == [m.value() for m in seal.CoeffModulus.BFVDefault(n)]


def test_parameters_load_and_save_files(pset, tmp_path):
    s = pset
    path = tmp_path / "parms.bin"
    s.seal.parms.save(str(path))
    p = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    p.load(str(path))
    assert p == s.xehe.parms
    p.save(str(tmp_path / "x.bin"))
    q = s.seal.lib.EncryptionParameters(s.seal.lib.scheme_type.ckks)
    q.load(str(tmp_path / "x.bin"))
    assert q.to_bytes() == s.seal.parms.to_bytes()


KEYS = {
    # name: (seal attribute, SEALContext.from_*_str, xehe class, seal class)
    "secret_key": ("sk", "from_secret_str", "SecretKey", "SecretKey"),
    "public_key": ("pk", "from_public_str", "PublicKey", "PublicKey"),
    "relin_keys": ("rk", "from_relin_str", "RelinKeys", "RelinKeys"),
    "galois_keys": ("gk", "from_galois_str", "GaloisKeys", "GaloisKeys"),
}


@pytest.mark.parametrize("kind", list(KEYS))
def test_seal_keys_load_and_resave_identically(pset, kind, tmp_path):
    s = pset
    attr, from_str, xcls, _ = KEYS[kind]
    skey = getattr(s.seal, attr)
    data = skey.to_string()
    # 1. SEALContext.from_*_str (seal-python's bytes loaders)
    k1 = getattr(s.xehe.ctx, from_str)(data)
    # 2. load(context, path) from SEAL's own file
    path = tmp_path / f"{kind}.bin"
    skey.save(str(path))
    k2 = getattr(xehe, xcls)()
    k2.load(s.xehe.ctx, str(path))
    # 3. load_bytes (xehe addition)
    k3 = getattr(xehe, xcls)()
    k3.load_bytes(s.xehe.ctx, data)
    for k in (k1, k2, k3):
        assert isinstance(k, getattr(xehe, xcls))
        assert k.parms_id() == skey.parms_id()
        assert k.to_string() == data
        assert k.save_size() == len(data)
        if kind in ("relin_keys", "galois_keys"):
            assert isinstance(k, xehe.KSwitchKeys)
            assert k.size() == skey.size()
    if kind == "galois_keys":
        for elt in range(1, 2 * s.n, 2):
            assert k1.has_key(elt) == skey.has_key(elt)
        assert xehe.GaloisKeys.get_index(5) == s.seal.lib.GaloisKeys.get_index(5)
    if kind == "relin_keys":
        assert k1.has_key(2) and not k1.has_key(3)
        assert xehe.RelinKeys.get_index(2) == s.seal.lib.RelinKeys.get_index(2)
    # xehe's save is a file SEAL loads.
    out = tmp_path / f"{kind}_xehe.bin"
    k1.save(str(out))
    back = getattr(s.seal.lib, KEYS[kind][3])()
    back.load(s.seal.ctx, str(out))
    assert back.to_string() == data


def _seal_ciphertexts(s):
    ev = s.seal.ev
    a = s.seal.a
    return {
        "public": a,
        "symmetric": s.seal.b,
        "size3": ev.multiply(a, s.seal.b),
        "last_level": ev.mod_switch_to(a, s.seal.last_pid),
        "coefficient_form": ev.transform_from_ntt(a),
    }


@pytest.mark.parametrize("which", ["public", "symmetric", "size3", "last_level", "coefficient_form"])
def test_seal_ciphertexts_load_with_the_same_metadata(pset, which, tmp_path):
    s = pset
    sc = _seal_ciphertexts(s)[which]
    data = sc.to_string()
    xc = s.xehe.ctx.from_cipher_str(data)
    for f in ("size", "coeff_modulus_size", "poly_modulus_degree", "parms_id", "scale", "is_ntt_form",
              "is_transparent", "contains_seed", "save_size"):
        assert getattr(xc, f)() == getattr(sc, f)(), f
    assert xc.to_string() == data
    path = tmp_path / "ct.bin"
    sc.save(str(path))
    x2 = xehe.Ciphertext()
    x2.load(s.xehe.ctx, str(path))
    assert x2.to_string() == data
    x3 = xehe.Ciphertext()
    x3.load_bytes(s.xehe.ctx, bytearray(data))
    assert x3.to_string() == data
    assert xc.data().shape == (sc.size(), sc.coeff_modulus_size(), sc.poly_modulus_degree())


def test_empty_ciphertext_is_refused_as_seal_refuses_it(pset):
    s = pset
    data = s.seal.lib.Ciphertext().to_string()
    with pytest.raises(RuntimeError):
        s.seal.ctx.from_cipher_str(data)
    with pytest.raises(ValueError, match="does not belong to this context"):
        s.xehe.ctx.from_cipher_str(data)
    assert xehe.Ciphertext().to_string() == data


def test_seal_plaintexts_load(pset, tmp_path):
    s = pset
    ev, sl = s.seal.ev, s.seal.lib
    cases = {
        "encoded": s.seal.p,
        "mod_switched": ev.mod_switch_to(s.seal.p, s.seal.last_pid),
        "decrypted": s.seal.decryptor.decrypt(s.seal.a),
        "empty": sl.Plaintext(),
    }
    # A non-NTT plaintext with coefficients is not valid for CKKS (plain_modulus 0): both refuse.
    bad = sl.Plaintext(10).to_bytes()
    with pytest.raises(RuntimeError):
        s.seal.ctx.from_plain_str(bad)
    with pytest.raises(ValueError):
        s.xehe.ctx.from_plain_str(bad)
    assert xehe.Plaintext(10).to_bytes() == bad
    assert xehe.Plaintext(10).to_string() == sl.Plaintext(10).to_string() == "0"
    for name, sp in cases.items():
        data = sp.to_bytes()
        xp = s.xehe.ctx.from_plain_str(data)
        for f in ("coeff_count", "parms_id", "scale", "is_ntt_form", "is_zero", "save_size",
                  "significant_coeff_count", "nonzero_coeff_count"):
            assert getattr(xp, f)() == getattr(sp, f)(), (name, f)
        assert xp.to_bytes() == data, name
        path = tmp_path / f"{name}.bin"
        sp.save(str(path))
        x2 = xehe.Plaintext()
        x2.load(s.xehe.ctx, str(path))
        assert x2.to_bytes() == data
        if not sp.is_ntt_form():
            assert xp.to_string() == sp.to_string()


def test_xehe_objects_load_in_seal(n8192):
    """The other direction: xehe's keys and encryptions are SEAL objects SEAL uses."""
    s = n8192
    sl = s.seal.lib
    kg = xehe.KeyGenerator(s.xehe.ctx)
    sk, pk = kg.secret_key(), kg.create_public_key()
    rk = kg.create_relin_keys()
    ct = xehe.Encryptor(s.xehe.ctx, pk).encrypt(s.xehe.encoder.encode(np.array([0.5, -1.5, 2.0]), s.scale))
    ssk = s.seal.ctx.from_secret_str(sk.to_string())
    sct = s.seal.ctx.from_cipher_str(ct.to_string())
    srk = s.seal.ctx.from_relin_str(rk.to_string())
    assert s.seal.ctx.from_public_str(pk.to_string()).to_string() == pk.to_string()
    sq = s.seal.ev.rescale_to_next(s.seal.ev.relinearize(s.seal.ev.square(sct), srk))
    out = s.seal.encoder.decode(sl.Decryptor(s.seal.ctx, ssk).decrypt(sq))
    assert np.allclose(out[:3], [0.25, 2.25, 4.0], atol=1e-4)


@pytest.mark.parametrize("mode", ["none", "zlib", "zstd"])
def test_compressed_round_trip(n8192, mode, tmp_path):
    """xehe writes SEAL's zlib/zstd framing (the seal-python wheel itself has no compression)."""
    s = n8192
    m = getattr(xehe.compr_mode_type, mode)
    ct = s.fresh().a
    data = ct.to_string(m)
    assert len(data) <= ct.save_size(m)
    back = s.xehe.ctx.from_cipher_str(data)
    assert back.to_string() == s.seal.a.to_string()
    ct.save(str(tmp_path / "c.bin"), m)
    x = xehe.Ciphertext()
    x.load(s.xehe.ctx, str(tmp_path / "c.bin"))
    assert x.to_string() == s.seal.a.to_string()
    rk = s.xehe.rk.to_string(m)
    assert s.xehe.ctx.from_relin_str(rk).to_string() == s.seal.rk.to_string()
