"""Bad inputs raise Python exceptions, never crash, and leave the objects usable: each bad call
runs through seal-python and xehe; both must raise (the same built-in class where seal-python's
is the natural one), xehe's operands must be unchanged, and a good call afterwards must still
give SEAL's bytes."""

import pathlib
import time
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

import xehe
from xehe import errors


def _seal_inputs(s):
    sl = s.seal.lib
    return SimpleNamespace(a=sl.Ciphertext(s.seal.a), b=sl.Ciphertext(s.seal.b), p=sl.Plaintext(s.seal.p))


def _last(x, ct):
    return x.ev.mod_switch_to(ct, x.last_pid)


def _empty_gk(x):
    return x.lib.GaloisKeys()


# name: (xehe's exception class, seal-python's exception class or None when it differs
#        (then seal only has to raise something), the bad call (side, inputs, set))
CASES = {
    "add_level_mismatch": (errors.ParmsMismatchError, ValueError,
                           lambda x, i, s: x.ev.add(i.a, x.ev.mod_switch_to_next(i.b))),
    "add_inplace_level_mismatch": (errors.ParmsMismatchError, ValueError,
                                   lambda x, i, s: x.ev.add_inplace(i.a, x.ev.mod_switch_to_next(i.b))),
    "add_plain_scale_mismatch": (errors.ScaleMismatchError, ValueError,
                                 lambda x, i, s: x.ev.add_plain_inplace(i.a, x.encoder.encode([1.0], 2 * s.scale))),
    "multiply_plain_level_mismatch": (errors.ParmsMismatchError, ValueError,
                                      lambda x, i, s: x.ev.multiply_plain_inplace(i.a, x.ev.mod_switch_to_next(i.p))),
    "rescale_at_last_level": (errors.EndOfModulusChainError, ValueError,
                              lambda x, i, s: x.ev.rescale_to_next(_last(x, i.a))),
    "mod_switch_at_last_level": (errors.EndOfModulusChainError, ValueError,
                                 lambda x, i, s: x.ev.mod_switch_to_next_inplace(_last(x, i.a))),
    "mod_switch_plain_at_last_level": (errors.EndOfModulusChainError, ValueError,
                                       lambda x, i, s: x.ev.mod_switch_to_next(x.ev.mod_switch_to(i.p, x.last_pid))),
    "mod_switch_to_higher_level": (ValueError, ValueError,
                                   lambda x, i, s: x.ev.mod_switch_to(x.ev.mod_switch_to_next(i.a), x.first_pid)),
    "rescale_to_unknown_parms_id": (errors.NotValidForParamsError, ValueError,
                                    lambda x, i, s: x.ev.rescale_to_inplace(i.a, [1, 2, 3, 4])),
    "scale_out_of_bounds": (errors.ScaleOutOfBoundsError, ValueError,
                            lambda x, i, s: x.ev.multiply(x.ev.multiply(i.a, i.a), x.ev.multiply(i.a, i.b))),
    "rotate_missing_key": (errors.MissingKeyError, ValueError,
                           lambda x, i, s: x.ev.rotate_vector_inplace(i.a, 7, x.gk)),  # NAF 8 - 1: no key for 8
    "rotate_no_keys": (ValueError, ValueError,
                       lambda x, i, s: x.ev.rotate_vector(i.a, 1, _empty_gk(x))),
    "rotate_step_too_large": (ValueError, ValueError,
                              lambda x, i, s: x.ev.rotate_vector(i.a, s.n, x.gk)),
    "conjugate_no_keys": (ValueError, ValueError,
                          lambda x, i, s: x.ev.complex_conjugate_inplace(i.a, _empty_gk(x))),
    "apply_galois_bad_element": (ValueError, ValueError,
                                 lambda x, i, s: x.ev.apply_galois_inplace(i.a, 2, x.gk)),
    "relinearize_no_keys": (ValueError, ValueError,
                            lambda x, i, s: x.ev.relinearize(x.ev.multiply(i.a, i.b), x.lib.RelinKeys())),
    "encode_too_many_values": (ValueError, ValueError,
                               lambda x, i, s: x.encoder.encode(np.zeros(s.slots + 1), s.scale)),
    "encode_nan": (ValueError, ValueError, lambda x, i, s: x.encoder.encode([np.nan], s.scale)),
    "encode_scale_too_large": (errors.ScaleOutOfBoundsError, ValueError,
                               lambda x, i, s: x.encoder.encode([1.0], 2.0**200)),
    "encode_two_dimensional": (ValueError, None, lambda x, i, s: x.encoder.encode(np.ones((2, 2)), s.scale)),
    "malformed_bytes": (errors.MalformedDataError, None, lambda x, i, s: x.ctx.from_cipher_str(b"\x5e\xa1abc")),
    "truncated_bytes": (errors.MalformedDataError, ValueError,
                        lambda x, i, s: x.ctx.from_cipher_str(i.a.to_string()[:1000])),
    "plaintext_bytes_as_ciphertext": (ValueError, None, lambda x, i, s: x.ctx.from_cipher_str(i.p.to_bytes())),
    "ciphertext_bytes_as_relin_keys": (ValueError, None, lambda x, i, s: x.ctx.from_relin_str(i.a.to_string())),
    "load_missing_file": (errors.XeheIOError, RuntimeError,
                          lambda x, i, s: i.a.load(x.ctx, "/nonexistent/dir/ct.bin")),
    "save_to_missing_dir": (OSError, RuntimeError, lambda x, i, s: i.a.save("/nonexistent/dir/ct.bin")),
    "symmetric_without_secret_key": (ValueError, None,
                                     lambda x, i, s: x.lib.Encryptor(x.ctx, x.pk).encrypt_symmetric(i.p)),
    "wrong_type_plaintext_for_ciphertext": (TypeError, TypeError, lambda x, i, s: x.ev.add(i.a, i.p)),
    "wrong_type_none": (TypeError, TypeError, lambda x, i, s: x.ev.negate(None)),
    "wrong_type_decode_ciphertext": (TypeError, TypeError, lambda x, i, s: x.encoder.decode(i.a)),
    "wrong_type_steps": (TypeError, TypeError, lambda x, i, s: x.ev.rotate_vector(i.a, "1", x.gk)),
    "wrong_type_keys": (TypeError, TypeError, lambda x, i, s: x.ev.relinearize(i.a, x.gk)),
    "unsupported_bfv_operation": (RuntimeError, RuntimeError, lambda x, i, s: x.ev.rotate_rows(i.a, 1, x.gk)),
    "unsupported_multiply_many": (RuntimeError, RuntimeError, lambda x, i, s: x.ev.multiply_many([i.a, i.b], x.rk)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_call_raises_and_leaves_objects_usable(n8192, name):
    s = n8192
    xcls, scls, call = CASES[name]
    with pytest.raises(scls or Exception):
        call(s.seal, _seal_inputs(s), s)
    inp = s.fresh()
    with pytest.raises(xcls) as info:
        call(s.xehe, inp, s)
    assert str(info.value), "xehe's exceptions carry a message"
    if issubclass(info.type, errors.XeheError):
        assert isinstance(info.value, (ValueError, RuntimeError))
    # The operands are unchanged and usable.
    assert inp.a.to_string() == s.seal.a.to_string()
    assert inp.b.to_string() == s.seal.b.to_string()
    assert inp.p.to_bytes() == s.seal.p.to_bytes()
    assert s.xehe.ev.add(inp.a, inp.b).to_string() == s.seal.ev.add(s.seal.a, s.seal.b).to_string()
    s.xehe.ev.multiply_plain_inplace(inp.a, inp.p)
    assert inp.a.to_string() == s.seal.ev.multiply_plain(s.seal.a, s.seal.p).to_string()


def test_failed_inplace_operations_leave_the_operand_unchanged(n8192):
    s = n8192
    x = s.fresh()
    low = s.xehe.ev.mod_switch_to(x.a, s.xehe.last_pid)
    before = low.to_string()
    for bad in (
        lambda: s.xehe.ev.rescale_to_next_inplace(low),
        lambda: s.xehe.ev.mod_switch_to_next_inplace(low),
        lambda: s.xehe.ev.add_inplace(low, x.b),
        lambda: s.xehe.ev.rotate_vector_inplace(low, 7, s.xehe.gk),
        lambda: s.xehe.ev.multiply_plain_inplace(low, x.p),
    ):
        with pytest.raises(ValueError):
            bad()
        assert low.to_string() == before
    s.xehe.ev.negate_inplace(low)
    assert low.to_string() == s.seal.ev.negate(s.seal.ev.mod_switch_to(s.seal.a, s.seal.last_pid)).to_string()


def test_objects_of_another_context_are_refused(pset, n8192):
    if pset.name == "n8192":
        pytest.skip("needs two different parameter sets")
    small, big = pset, n8192
    xs, xb = small.fresh(), big.fresh()
    for side, (a_small, a_big) in (("seal", (small.seal.a, big.seal.a)), ("xehe", (xs.a, xb.a))):
        S, B = getattr(small, side), getattr(big, side)
        for bad in (
            lambda: B.ev.negate(a_small),
            lambda: B.ev.add(a_big, a_small),
            lambda: B.ev.relinearize(B.ev.multiply(a_big, a_big), S.rk),
            lambda: B.ev.rotate_vector(a_big, 1, S.gk),
            lambda: B.decryptor.decrypt(a_small),
            lambda: B.ctx.from_cipher_str(a_small.to_string()),
            lambda: B.lib.Encryptor(B.ctx, S.pk),
        ):
            # seal-python raises RuntimeError for a ciphertext of another context in from_cipher_str.
            with pytest.raises(ValueError if side == "xehe" else (ValueError, RuntimeError)):
                bad()
    assert xb.a.to_string() == big.seal.a.to_string()
    assert xs.a.to_string() == small.seal.a.to_string()


def test_corrupted_coefficient_is_refused(n8192):
    """A word not reduced modulo its prime: SEAL's `load` validity check."""
    s = n8192
    data = bytearray(s.seal.a.to_string())
    data[-8:] = (2**64 - 1).to_bytes(8, "little")
    with pytest.raises(Exception):
        s.seal.ctx.from_cipher_str(bytes(data))
    with pytest.raises(errors.NotValidForParamsError):
        s.xehe.ctx.from_cipher_str(bytes(data))


def test_invalid_parameters_as_seal(tmp_path):
    import seal

    for lib in (seal, xehe):
        p = lib.EncryptionParameters(lib.scheme_type.ckks)
        p.set_poly_modulus_degree(8192)
        p.set_coeff_modulus(lib.CoeffModulus.Create(8192, [60, 60, 60, 60]))  # 240 bits > 218
        ctx = lib.SEALContext(p)
        assert not ctx.parameters_set()
        assert ctx.parameter_error_message()
        if lib is xehe:
            assert ctx.key_context_data() is None and ctx.first_context_data() is None
        with pytest.raises(ValueError):
            lib.KeyGenerator(ctx)
        with pytest.raises(ValueError):
            lib.CKKSEncoder(ctx)
        with pytest.raises(ValueError):
            lib.Modulus(1)
        with pytest.raises((ValueError, TypeError, OverflowError)):
            lib.Modulus(-1)
        with pytest.raises(RuntimeError):
            p.set_plain_modulus(7)
        empty = lib.SEALContext(lib.EncryptionParameters(lib.scheme_type.ckks))
        assert not empty.parameters_set()
    assert "bits" in xehe.SEALContext(p).parameter_error_message()
    # xehe implements CKKS only: BFV parameters are read and written, not evaluated.
    bfv = xehe.SEALContext(xehe.EncryptionParameters(xehe.scheme_type.bfv))
    assert not bfv.parameters_set() and "CKKS" in bfv.parameter_error_message()
    with pytest.raises(ValueError):
        xehe.Evaluator(bfv)
    with pytest.raises(ValueError):
        xehe.SEALContext(p, False)  # expand_mod_chain=False: xehe always expands the chain


def test_no_huge_allocation_from_an_argument():
    with pytest.raises(ValueError):
        xehe.Plaintext(2**40)
    with pytest.raises((TypeError, OverflowError)):
        xehe.Plaintext(-1)


def test_parms_id_arguments_are_checked(n8192):
    s = n8192
    x = s.fresh()
    with pytest.raises(ValueError):
        s.xehe.ev.mod_switch_to(x.a, [1, 2, 3])
    with pytest.raises(TypeError):
        s.xehe.ev.mod_switch_to(x.a, "abc")
    with pytest.raises(TypeError):
        s.xehe.ev.mod_switch_to(x.a, [-1, 0, 0, 0])
    assert x.a.to_string() == s.seal.a.to_string()


def test_device_errors_are_runtime_errors(n8192):
    """Without a usable GPU, `.gpu()` raises DeviceError (a RuntimeError) and the object stays
    on the CPU, unchanged and usable."""
    if xehe.device.gpu_available():
        pytest.skip("a GPU is usable here")
    s = n8192
    x = s.fresh()
    with pytest.raises(errors.DeviceError) as info:
        x.a.gpu()
    assert isinstance(info.value, RuntimeError)
    assert not x.a.is_gpu() and not x.a.is_dirty()
    assert s.xehe.ev.add(x.a, x.b).to_string() == s.seal.ev.add(s.seal.a, s.seal.b).to_string()
    with pytest.raises(errors.DeviceError):
        xehe.device.default_queue()
    with pytest.raises(errors.DeviceError):
        xehe.device.new_queue("cpu")
    with pytest.raises(ValueError):
        xehe.device.new_queue("tpu")


def test_corrupted_bytes_never_crash(n8192):
    """Random byte flips and truncations of SEAL objects: each load either succeeds or raises an
    xehe error (never a crash, never another exception type)."""
    s = n8192
    rng = np.random.default_rng(18)
    sources = {
        "ciphertext": (s.seal.a.to_string(), s.xehe.ctx.from_cipher_str),
        "plaintext": (s.seal.p.to_bytes(), s.xehe.ctx.from_plain_str),
        "relin_keys": (s.seal.rk.to_string(), s.xehe.ctx.from_relin_str),
        "parms": (s.seal.parms.to_bytes(), lambda d: xehe.EncryptionParameters(xehe.scheme_type.ckks).load_bytes(d)),
    }
    for name, (data, load) in sources.items():
        for trial in range(60):
            b = bytearray(data)
            if trial % 3 == 0:
                b = b[: rng.integers(0, len(b))]
            else:
                # Mostly the header and the metadata after it, where the lengths live.
                for _ in range(rng.integers(1, 4)):
                    i = int(rng.integers(0, min(len(b), 128))) if rng.random() < 0.8 else int(rng.integers(0, len(b)))
                    b[i] ^= 1 << int(rng.integers(0, 8))
            try:
                load(bytes(b))
            except errors.XeheError:
                pass


def _huge_length(data, at, compress):
    """`data` (an uncompressed SEAL object) with the u64 at member offset `at` set to 2^40
    (8 TiB of words), zlib-compressed when `compress` (then the bytes present do not bound it)."""
    members = bytearray(data[16:])
    members[at:at + 8] = (1 << 40).to_bytes(8, "little")
    header = bytearray(data[:16])
    if compress:
        members = zlib.compress(bytes(members), 6)
        header[5] = 1  # compr_mode zlib
    header[8:16] = (16 + len(members)).to_bytes(8, "little")
    return bytes(header) + bytes(members)


def test_huge_length_fields_fail_fast(n8192):
    """A length field implying more memory than the machine has raises an xehe error within a
    second, without trying to allocate it (uncompressed and zlib-compressed; the header's own
    size too)."""
    s = n8192
    sources = {
        # RelinKeys: keys.len and keys[0].len after the parms_id.
        "relin_keys": (s.seal.rk.to_string(), s.xehe.ctx.from_relin_str, (32, 40)),
        # Ciphertext: size, and the data array's length after the metadata and its header.
        "ciphertext": (s.seal.a.to_string(), s.xehe.ctx.from_cipher_str, (33, 89)),
    }
    for name, (data, load, offsets) in sources.items():
        sized = bytearray(data)
        sized[8:16] = (1 << 40).to_bytes(8, "little")
        cases = [bytes(sized)] + [_huge_length(data, at, c) for at in offsets for c in (False, True)]
        for i, bad in enumerate(cases):
            start = time.perf_counter()
            with pytest.raises((errors.MalformedDataError, errors.NotValidForParamsError)):
                load(bad)
            took = time.perf_counter() - start
            assert took < 1.0, f"{name} case {i}: {took:.2f} s"


FUZZ = pathlib.Path(__file__).resolve().parents[2] / "fuzz"


def _load_or_error(load, *args):
    try:
        return load(*args)
    except errors.XeheError:
        return None


def test_fuzz_inputs_raise_xehe_errors():
    """The fuzz targets' seeds and past failures (fuzz/corpus, fuzz/regressions: SEAL's objects
    at N = 64, plain, seeded and compressed), and byte flips of them, through the Python loaders:
    each loads or raises an xehe error (never PanicException, never another exception)."""
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.load_bytes((FUZZ / "corpus" / "encryption_parameters" / "seal-params").read_bytes())
    ctx = xehe.SEALContext(parms, True, xehe.sec_level_type.none)
    loaders = {
        "encryption_parameters": lambda d: xehe.EncryptionParameters(xehe.scheme_type.ckks).load_bytes(d),
        "plaintext": ctx.from_plain_str,
        "ciphertext": ctx.from_cipher_str,
        "secret_key": ctx.from_secret_str,
        "public_key": ctx.from_public_str,
        "relin_keys": ctx.from_relin_str,
        "galois_keys": ctx.from_galois_str,
    }
    # The hybrid keys, for both key switchings of the fuzz targets (SEAL's layout; alpha = 2).
    switchings = [xehe.HybridKeySwitching(ctx, xehe.KeySwitchParams(a, d)) for a, d in ((1, 3), (2, 2))]
    for target, cls in (("hybrid_relin_keys", xehe.HybridRelinKeys), ("hybrid_galois_keys", xehe.HybridGaloisKeys)):
        loaders[target] = lambda d, cls=cls: [_load_or_error(cls.load_bytes, ks, d) for ks in switchings]
    rng = np.random.default_rng(34)
    loaded = 0
    for target, load in loaders.items():
        files = sorted((FUZZ / "corpus" / target).glob("*")) + sorted((FUZZ / "regressions" / target).glob("*"))
        assert files, target
        for f in files:
            data = f.read_bytes()
            for trial in range(12):
                b = bytearray(data)
                for _ in range(int(rng.integers(1, 4)) if trial else 0):
                    i = int(rng.integers(0, min(len(b), 160))) if rng.random() < 0.7 else int(rng.integers(0, len(b)))
                    b[i] ^= 1 << int(rng.integers(0, 8))
                try:
                    load(bytes(b))
                    loaded += 1
                except errors.XeheError:
                    pass
    assert loaded > 0
