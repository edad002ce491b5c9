"""Bootstrapping from Python (the insecure N = 2^12 preset): precision, SEAL interop of the key
and ciphertexts, bad inputs raise and leave the objects usable."""
import numpy as np
import pytest

import xehe
from xehe.seal import CKKSEncoder, Ciphertext, Decryptor, Encryptor, Evaluator, KeyGenerator


@pytest.fixture(scope="module")
def boot():
    params = xehe.BootstrappingParameters.n12_insecure()
    ctx = params.context()
    kg = KeyGenerator(ctx)
    keys = xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key())
    return ctx, kg, keys, xehe.Bootstrapper(ctx, keys)


def test_bootstrap_precision(boot):
    ctx, kg, keys, b = boot
    enc = CKKSEncoder(ctx)
    rng = np.random.default_rng(1)
    z = rng.uniform(-1, 1, enc.slot_count()) + 1j * rng.uniform(-1, 1, enc.slot_count())
    ct = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode_complex(z, 2.0**40))
    Evaluator(ctx).mod_switch_to_inplace(ct, ctx.last_parms_id())
    out, times = b.bootstrap_timed(ct)
    got = np.asarray(enc.decode_complex(Decryptor(ctx, kg.secret_key()).decrypt(out)))
    bits = -np.log2(np.abs(got.real - z.real))
    assert bits.mean() >= 20 and bits.min() >= 14, (bits.mean(), bits.min())
    assert set(times) == {"mod_raise", "coeffs_to_slots", "eval_mod", "slots_to_coeffs", "total"}
    assert ctx.get_context_data(out.parms_id()).chain_index() == b.output_level()


def test_precision_by_input_shape(boot):
    """Every input shape of the domain (|z| <= 1: zero-mean, complex, one-sided, constants,
    images) keeps the zero-mean figure within 1.5 bits: EvalMod's arcsine correction."""
    ctx, kg, keys, b = boot
    shapes = xehe.input_shapes()
    assert {"uniform", "one-sided", "constant=1", "image"} <= set(shapes)
    zero = b.precision(kg.secret_key(), "uniform")
    assert set(zero) == {"real_mean", "real_min", "imag_mean", "imag_min", "real_mean_error", "imag_mean_error"}
    for shape in ["one-sided", "upper-half", "constant=1", "constant=-0.5", "imaginary=1", "complex"]:
        p = b.precision(kg.secret_key(), shape, seed=2)
        for k in ("real_mean", "real_min", "imag_mean", "imag_min"):
            assert p[k] >= zero[k] - 1.5, (shape, k, p, zero)
    with pytest.raises(ValueError):
        b.precision(kg.secret_key(), "gaussian")


def test_bootstrap_on_the_device_equals_the_cpu(boot, gpu):
    """With the suite on a device (XEHE_DEVICE): the ciphertext marked .gpu() bootstraps there,
    word for word the CPU backend's result; a rescaled input (scale not a power of two), as SEAL
    programs give, lands at exactly 2^40."""
    if not gpu:
        pytest.skip("the device pass checks the device against the CPU; this is the CPU pass")
    ctx, kg, keys, b = boot
    enc, ev = CKKSEncoder(ctx), Evaluator(ctx)
    rng = np.random.default_rng(3)
    z = rng.uniform(-1, 1, enc.slot_count())
    ct = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode(z, 2.0**40))
    # One level above the last, times a plaintext at 2^40, rescaled: scale 2^80 / q, as a SEAL
    # program's products have.
    above = ctx.get_context_data(ctx.last_parms_id()).prev_context_data().parms_id()
    ev.mod_switch_to_inplace(ct, above)
    ev.multiply_plain_inplace(ct, enc.encode(0.5, above, 2.0**40))
    ev.rescale_to_next_inplace(ct)
    assert ct.scale() != 2.0**40
    cpu = b.bootstrap(ct)
    dev = b.bootstrap(ct.__copy__().gpu())
    dev.download()
    assert dev.to_bytes() == cpu.to_bytes()
    assert dev.scale() == 2.0**40


def test_keys_round_trip_and_errors(boot):
    ctx, kg, keys, b = boot
    data = keys.to_bytes()
    again = xehe.BootstrappingKeys.load_bytes(ctx, data)
    assert again.galois_elts() == keys.galois_elts()
    with pytest.raises(ValueError):
        xehe.BootstrappingKeys.load_bytes(ctx, data[: len(data) // 2])
    enc = CKKSEncoder(ctx)
    ct = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode([0.5], 2.0**40))
    sq = Evaluator(ctx).square(ct)
    with pytest.raises(ValueError):
        b.bootstrap(sq)  # size 3: relinearize first
    assert sq.size() == 3
    assert xehe.BootstrappingParameters.preset("n12").name == "N12-insecure"
    with pytest.raises(ValueError):
        xehe.BootstrappingParameters.preset("nope")


def test_keys_beyond_the_host_memory(boot, monkeypatch):
    ctx, kg, _, _ = boot
    params = xehe.BootstrappingParameters.n12_insecure()
    monkeypatch.setenv("XEHE_HOST_MEMORY", "64MiB")
    with pytest.raises(xehe.errors.HostMemoryError, match="bootstrapping keys of N12-insecure"):
        xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key())
    with pytest.raises(MemoryError):
        xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key())


def test_keys_file_seeded(boot, tmp_path):
    """The key file is seeded (the uniform half of every key as a 64-byte seed): about half the
    key words' size; it loads back from the file to the same keys, and a missing file raises."""
    ctx, kg, keys, b = boot
    path = tmp_path / "bk.bin"
    keys.save(str(path))
    size = path.stat().st_size
    assert size == len(keys.to_bytes())
    assert 0.49 < size / keys.byte_size() < 0.51, (size, keys.byte_size())
    again = xehe.BootstrappingKeys.load(ctx, str(path))
    assert again.to_bytes() == keys.to_bytes()
    assert again.galois_elts() == keys.galois_elts()
    with pytest.raises(OSError):
        xehe.BootstrappingKeys.load(ctx, str(tmp_path / "missing.bin"))


def test_seal_program_deeper_than_its_chain(gpu):
    """A seal-python program three times deeper than its chain (tests/seal/deep_program.py),
    bootstrapped in-process by this module whenever its levels run out: every bootstrap lands
    at the output level at exactly 2^40, within 1 bit of the fresh-input figure and, against
    the program on plain doubles, of min(its input's precision, the fresh figure)."""
    if gpu:
        pytest.skip("the deep program bootstraps on the CPU; the suite's CPU pass ran it")
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "tests" / "seal" / "deep_program.py"
    bits = ",".join(map(str, xehe.BootstrappingParameters.n12_insecure().coeff_modulus_bits()))
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, str(script), "python", d, "4096", bits, "62", "--check"],
                           capture_output=True, text=True)
    print(p.stdout[-2000:])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]


def test_word_size_preset_context_from_seal_parameters():
    """SEALContext of a word-size preset's primes (security none) has the preset's composite
    levels, as params.context() and the C ABI: the same first and last parms_id; a preset of
    large primes keeps SEAL's chain."""
    params = xehe.BootstrappingParameters.n12_insecure_w32()
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.set_poly_modulus_degree(params.poly_modulus_degree)
    parms.set_coeff_modulus(xehe.CoeffModulus.Create(params.poly_modulus_degree, params.coeff_modulus_bits()))
    ctx = xehe.SEALContext(parms, True, xehe.sec_level_type.none)
    want = params.context()
    assert ctx.first_parms_id() == want.first_parms_id()
    assert ctx.last_parms_id() == want.last_parms_id()
    plain = xehe.SEALContext(xehe.BootstrappingParameters.n12_insecure().context().key_context_data().parms(), True,
                             xehe.sec_level_type.none)
    assert plain.last_parms_id() == xehe.BootstrappingParameters.n12_insecure().context().last_parms_id()
