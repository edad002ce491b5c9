"""CKKSEncoder: the same inputs encode to SEAL's plaintext bytes, and decoding agrees with
seal-python numerically; numpy float64 / complex128 in and out."""

import numpy as np
import pytest

import xehe


def _inputs(s):
    i = np.arange(s.slots, dtype=np.float64)
    real = ((i * 37) % 101 - 50) / 64.0
    return {
        "numpy_float64": real,
        "numpy_float32": real.astype(np.float32),
        "numpy_int64": ((i * 37) % 101 - 50).astype(np.int64),
        "list": [0.5, -1.25, 3.0, 0.0, 2.5],
        "tuple_ints": (1, 2, 3),
        "strided": np.repeat(real, 2)[::2],
        "big": ((i * 37) % 101 - 50) * 2.0 ** (sum(s.bits[:-1]) - np.log2(s.scale) - 20),
        "empty": np.array([], dtype=np.float64),
    }


def test_real_encodings_equal_seal(pset):
    s = pset
    for name, values in _inputs(s).items():
        # Contiguous for seal-python: it reads a strided array's buffer as if it were contiguous
        # (wrong values); xehe honours the strides.
        want = s.seal.encoder.encode(np.ascontiguousarray(values, dtype=np.float64), s.scale)
        got = s.xehe.encoder.encode(values, s.scale)
        assert got.to_bytes() == want.to_bytes(), name
        assert got.parms_id() == s.seal.first_pid and got.scale() == s.scale


def test_complex_encodings_equal_seal(pset):
    s = pset
    i = np.arange(s.slots)
    z = ((i * 37) % 101 - 50) / 64.0 + 1j * (((i * 53) % 97 - 48) / 32.0)
    for name, values in {"complex128": z, "list": [1 + 2j, -0.5j, 3], "real_list": [1.0, 2.0],
                         "complex64": z.astype(np.complex64)}.items():
        want = s.seal.encoder.encode_complex(np.ascontiguousarray(values, dtype=np.complex128), s.scale)
        got = s.xehe.encoder.encode_complex(values, s.scale)
        assert got.to_bytes() == want.to_bytes(), name


def test_scalar_encodings_equal_seal(pset):
    s = pset
    se, xe = s.seal.encoder, s.xehe.encoder
    assert xe.encode(3.25, s.scale).to_bytes() == se.encode(3.25, s.scale).to_bytes()
    assert xe.encode(np.float64(-0.75), s.scale).to_bytes() == se.encode(-0.75, s.scale).to_bytes()
    assert xe.encode_complex(1.5 - 0.75j, s.scale).to_bytes() == se.encode_complex(1.5 - 0.75j, s.scale).to_bytes()
    for v in (7, -5, 0):
        assert xe.encode(v).to_bytes() == se.encode(v).to_bytes()
        assert xe.encode(v).scale() == 1.0


def test_destination_forms(pset):
    s = pset
    xe = s.xehe.encoder
    dest = xehe.Plaintext()
    assert xe.encode([1.0, 2.0], s.scale, dest) is None
    assert dest.to_bytes() == s.seal.encoder.encode([1.0, 2.0], s.scale).to_bytes()
    assert xe.encode(4, dest) is None
    assert dest.to_bytes() == s.seal.encoder.encode(4).to_bytes()
    assert xe.encode_complex([1j], s.scale, dest) is None
    assert dest.to_bytes() == s.seal.encoder.encode_complex(np.array([1j]), s.scale).to_bytes()


def test_encode_at_a_level(pset):
    """`encode(values, parms_id, scale)` (SEAL C++'s overload; not in seal-python)."""
    s = pset
    xe = s.xehe.encoder
    pid = s.xehe.last_pid
    pt = xe.encode(np.array([0.5, -0.25]), pid, s.scale)
    assert pt.parms_id() == pid and pt.scale() == s.scale
    assert np.allclose(xe.decode(pt)[:2], [0.5, -0.25], atol=1e-4)
    c = xe.encode_complex(0.5j, pid, s.scale)
    assert c.parms_id() == pid
    assert np.allclose(xe.decode_complex(c)[:4], 0.5j, atol=1e-4)


def test_decode_agrees_with_seal(pset):
    s = pset
    plains = {
        "p": s.seal.p,
        "decrypted_a": s.seal.decryptor.decrypt(s.seal.a),
        "low_level": s.seal.ev.mod_switch_to(s.seal.p, s.seal.last_pid),
    }
    for name, sp in plains.items():
        xp = s.xehe.ctx.from_plain_str(sp.to_bytes())
        got, want = s.xehe.encoder.decode(xp), s.seal.encoder.decode(sp)
        assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (s.slots,)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()), err_msg=name)
        gotc, wantc = s.xehe.encoder.decode_complex(xp), s.seal.encoder.decode_complex(sp)
        assert gotc.dtype == np.complex128 and gotc.shape == (s.slots,)
        np.testing.assert_allclose(gotc, wantc, rtol=0, atol=1e-9 * max(1.0, np.abs(wantc).max()), err_msg=name)
    assert np.allclose(s.xehe.encoder.decode_complex(s.xehe.ctx.from_plain_str(s.seal.p.to_bytes())), s.values.p, atol=1e-5)


def test_encode_decode_round_trip_and_types(n8192):
    s = n8192
    xe = s.xehe.encoder
    assert xe.slot_count() == s.seal.encoder.slot_count() == s.slots
    x = np.linspace(-1, 1, s.slots)
    assert np.allclose(xe.decode(xe.encode(x, s.scale)), x, atol=1e-6)
    gen = (v / 10 for v in range(10))
    assert np.allclose(xe.decode(xe.encode(gen, s.scale))[:10], np.arange(10) / 10, atol=1e-6)
    vd = xehe.VectorDouble([0.1, 0.2])
    assert np.allclose(xe.decode(xe.encode(vd, s.scale))[:2], [0.1, 0.2], atol=1e-6)
    z = np.exp(1j * np.linspace(0, 3, s.slots))
    assert np.allclose(xe.decode_complex(xe.encode_complex(z, s.scale)), z, atol=1e-6)
