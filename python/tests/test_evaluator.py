"""Every deterministic CKKS evaluator operation, on inputs made by seal-python, gives the bytes
seal-python gives (SEAL serialization, uncompressed), in both its plain and ``_inplace`` forms."""

import numpy as np
import pytest


def galois_elt(n, step):
    """SEAL's Galois element for a rotation by `step` slots (generator 3), or conjugation (0)."""
    if step == 0:
        return 2 * n - 1
    m = 2 * n
    return pow(3, step % (n // 2), m)


# name: (Evaluator method, arguments from (side, inputs, set)); `side` is the library's objects
# (seal-python's or xehe's), `inp` its a/b/p, `s` the parameter set. The first argument is the
# operand an `_inplace` form changes. Chained inputs (a product to relinearize, ...) are made with
# the side's own evaluator.
def _product(x, inp):
    return x.ev.multiply(inp.a, inp.b)


def _relin(x, inp):
    return x.ev.relinearize(_product(x, inp), x.rk)


OPS = {
    "negate": ("negate", lambda x, inp, s: [inp.a]),
    "add": ("add", lambda x, inp, s: [inp.a, inp.b]),
    "sub": ("sub", lambda x, inp, s: [inp.a, inp.b]),
    "add_many": ("add_many", lambda x, inp, s: [[inp.a, inp.b, inp.a]]),
    "add_plain": ("add_plain", lambda x, inp, s: [inp.a, inp.p]),
    "sub_plain": ("sub_plain", lambda x, inp, s: [inp.a, inp.p]),
    "multiply_plain": ("multiply_plain", lambda x, inp, s: [inp.a, inp.p]),
    "multiply": ("multiply", lambda x, inp, s: [inp.a, inp.b]),
    "square": ("square", lambda x, inp, s: [inp.a]),
    "relinearize": ("relinearize", lambda x, inp, s: [_product(x, inp), x.rk]),
    "rescale_to_next": ("rescale_to_next", lambda x, inp, s: [_relin(x, inp)]),
    "rescale_to_next_fresh": ("rescale_to_next", lambda x, inp, s: [inp.a]),
    "rescale_to": ("rescale_to", lambda x, inp, s: [_relin(x, inp), x.last_pid]),
    "mod_switch_to_next": ("mod_switch_to_next", lambda x, inp, s: [inp.a]),
    "mod_switch_to": ("mod_switch_to", lambda x, inp, s: [inp.a, x.last_pid]),
    "mod_switch_to_next_plain": ("mod_switch_to_next", lambda x, inp, s: [inp.p]),
    "mod_switch_to_plain": ("mod_switch_to", lambda x, inp, s: [inp.p, x.last_pid]),
    "rotate_vector_1": ("rotate_vector", lambda x, inp, s: [inp.a, 1, x.gk]),
    "rotate_vector_m1": ("rotate_vector", lambda x, inp, s: [inp.a, -1, x.gk]),
    "rotate_vector_3_naf": ("rotate_vector", lambda x, inp, s: [inp.a, 3, x.gk]),
    "rotate_vector_after_relin": ("rotate_vector", lambda x, inp, s: [x.ev.rescale_to_next(_relin(x, inp)), 2, x.gk]),
    "complex_conjugate": ("complex_conjugate", lambda x, inp, s: [inp.a, x.gk]),
    "apply_galois_step2": ("apply_galois", lambda x, inp, s: [inp.a, galois_elt(s.n, 2), x.gk]),
    "apply_galois_conj": ("apply_galois", lambda x, inp, s: [inp.a, galois_elt(s.n, 0), x.gk]),
    "transform_from_ntt": ("transform_from_ntt", lambda x, inp, s: [inp.a]),
    "transform_to_ntt": ("transform_to_ntt", lambda x, inp, s: [x.ev.transform_from_ntt(inp.a)]),
    "add_plain_low": ("add_plain", lambda x, inp, s: [
        x.ev.rescale_to_next(_relin(x, inp)),
        x.ev.mod_switch_to_next(x.encoder.encode_complex(s.values.p, x.ev.rescale_to_next(_relin(x, inp)).scale())),
    ]),
}
NO_INPLACE = {"add_many"}


def _bytes(obj):
    """SEAL bytes, uncompressed, of a Ciphertext or a Plaintext of either library."""
    return obj.to_string() if hasattr(obj, "size") else obj.to_bytes()


def _copy(lib, obj):
    return (lib.Ciphertext if hasattr(obj, "size") else lib.Plaintext)(obj)


def _run(side, inp, s, name, inplace):
    method, args = OPS[name]
    args = args(side, inp, s)
    if not inplace:
        return getattr(side.ev, method)(*args)
    target = _copy(side.lib, args[0])
    getattr(side.ev, method + "_inplace")(target, *args[1:])
    return target


@pytest.mark.parametrize("inplace", [False, True], ids=["plain", "inplace"])
@pytest.mark.parametrize("name", list(OPS))
def test_operation_bytes_equal_seal(pset, name, inplace):
    if inplace and name in NO_INPLACE:
        pytest.skip(f"{name} has no _inplace form")
    s = pset
    want = _run(s.seal, s.seal, s, name, inplace)
    got = _run(s.xehe, s.fresh(), s, name, inplace)
    assert type(got).__name__ == type(want).__name__
    assert got.parms_id() == want.parms_id()
    assert got.scale() == want.scale()
    assert _bytes(got) == _bytes(want), f"{name}: xehe's bytes differ from SEAL's"


def test_inplace_aliasing_matches_seal(n8192):
    """`add_inplace(x, x)` and `multiply_inplace(x, x)`, as seal-python allows them."""
    s = n8192
    for method in ("add_inplace", "multiply_inplace"):
        want = s.seal.lib.Ciphertext(s.seal.a)
        getattr(s.seal.ev, method)(want, want)
        got = s.fresh().a
        getattr(s.xehe.ev, method)(got, got)
        assert got.to_string() == want.to_string(), method


def test_transparent_result_raises_runtime_error_as_seal(n8192):
    """x - x is transparent: SEAL refuses it with RuntimeError, and so does xehe (CPU check)."""
    s = n8192
    with pytest.raises(RuntimeError):
        s.seal.ev.sub(s.seal.a, s.seal.a)
    if s.gpu:
        pytest.skip("device results are not checked for transparency (no download)")
    x = s.fresh()
    with pytest.raises(RuntimeError, match="transparent"):
        s.xehe.ev.sub_inplace(x.a, x.a)
    assert x.a.to_string() == s.seal.a.to_string()


def test_decrypt_agrees_with_seal(n8192):
    """xehe decrypts SEAL's results to SEAL's plaintext bytes, and SEAL decrypts xehe's."""
    s = n8192
    x = s.fresh()
    want = s.seal.ev.rescale_to_next(s.seal.ev.relinearize(s.seal.ev.multiply(s.seal.a, s.seal.b), s.seal.rk))
    got = s.xehe.ev.rescale_to_next(s.xehe.ev.relinearize(s.xehe.ev.multiply(x.a, x.b), s.xehe.rk))
    pt_x = s.xehe.decryptor.decrypt(got)
    pt_s = s.seal.decryptor.decrypt(want)
    assert pt_x.to_bytes() == pt_s.to_bytes()
    back = s.seal.ctx.from_cipher_str(got.to_string())
    assert s.seal.decryptor.decrypt(back).to_bytes() == pt_s.to_bytes()
    assert np.allclose(s.xehe.encoder.decode_complex(pt_x), s.values.a * s.values.b, atol=1e-5)
