"""Encrypted inference from Python (xehe.nn) with the committed small CNN and the insecure
N = 2^12 preset: an xehe client and a seal-python client (SEAL's secret key makes the server's
keys; SEAL encrypts and decrypts), logits against the plaintext model, the device result equal
to the CPU's, and the errors."""
import os
from pathlib import Path

import numpy as np
import pytest

import xehe
import xehe.nn
from xehe.seal import Ciphertext, CKKSEncoder, Decryptor, Encryptor, Evaluator, KeyGenerator, SecretKey

MODEL = Path(__file__).resolve().parents[2] / "models" / "small-poly.onnx"


@pytest.fixture(scope="module")
def setup():
    if not os.path.exists(os.path.join(os.environ.get("XEHE_FASHION_MNIST") or xehe.nn.DEBIAN_FASHION_MNIST, "t10k-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)")
    params = xehe.BootstrappingParameters.n12_insecure()
    ctx = params.context()
    kg = KeyGenerator(ctx)
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key()))
    calib, _ = xehe.nn.fashion_mnist(256, side=16, train=True)
    net = xehe.nn.Network(MODEL, calib, boot)
    return params, ctx, kg, boot, net, net.galois_keys(boot, kg.secret_key())


def bits(got, want):
    return -np.log2(np.abs(got - want).max() / np.abs(want).max())


def test_xehe_client(setup, gpu):
    params, ctx, kg, boot, net, galois = setup
    assert net.input_shape == (1, 16, 16) and net.bootstraps >= 1
    up = net.client_upload(boot)
    assert 0 < up["bootstrapping"][0] < up["bootstrapping"][1] and 0 < up["network"][0] < up["network"][1], up
    images, labels = xehe.nn.fashion_mnist(4, side=16)
    enc = CKKSEncoder(ctx)
    encryptor = Encryptor(ctx, kg.create_public_key())
    dec = Decryptor(ctx, kg.secret_key())
    for img in images:
        ct = encryptor.encrypt(enc.encode(net.encode_image(img), boot.output_scale()))
        Evaluator(ctx).mod_switch_to_inplace(ct, net.input_parms_id(ctx))
        if gpu:
            host = Ciphertext(ct)
            ct.gpu()
        out, seconds = net.infer(boot, galois, ct)
        if gpu:
            out.download()
            cpu, _ = net.infer(boot, galois, host)
            assert out.to_string() == cpu.to_string()
        logits = net.decode_logits(enc.decode(dec.decrypt(out)))
        want = net.plain(img)
        assert logits.argmax() == want.argmax()
        assert bits(logits, want) > 16, bits(logits, want)
        assert seconds["bootstraps"] == net.bootstraps and seconds["total"] > 0


def test_seal_client(setup, gpu, tmp_path):
    """seal-python is the client: its secret key makes the server's keys, it encrypts the
    packed image and decrypts the logits."""
    if gpu:
        pytest.skip("the device path is checked by test_xehe_client; the suite's CPU pass ran this")
    seal = pytest.importorskip("seal")
    params, _, _, _, _, _ = setup
    sparms = seal.EncryptionParameters(seal.scheme_type.ckks)
    sparms.set_poly_modulus_degree(params.poly_modulus_degree)
    sparms.set_coeff_modulus(seal.CoeffModulus.Create(params.poly_modulus_degree, params.coeff_modulus_bits()))
    sctx = seal.SEALContext(sparms, True, seal.sec_level_type.none)
    skg = seal.KeyGenerator(sctx)
    # The server: keys from SEAL's secret key.
    ctx = params.context()
    sk = SecretKey()
    sk.load_bytes(ctx, skg.secret_key().to_string())
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, sk))
    calib, _ = xehe.nn.fashion_mnist(256, side=16, train=True)
    net = xehe.nn.Network(MODEL, calib, boot)
    galois = net.galois_keys(boot, sk)
    # The client.
    img = xehe.nn.fashion_mnist(1, side=16)[0][0]
    senc = seal.CKKSEncoder(sctx)
    sct = seal.Encryptor(sctx, skg.create_public_key()).encrypt(senc.encode(net.encode_image(img), boot.output_scale()))
    seal.Evaluator(sctx).mod_switch_to_inplace(sct, net.input_parms_id(sctx))
    ct = Ciphertext()
    ct.load_bytes(ctx, sct.to_string())
    if gpu:
        ct.gpu()
    out, _ = net.infer(boot, galois, ct)
    out.save(str(tmp_path / "logits.bin"))
    back = seal.Ciphertext()
    back.load(sctx, str(tmp_path / "logits.bin"))
    logits = net.decode_logits(senc.decode(seal.Decryptor(sctx, skg.secret_key()).decrypt(back)))
    want = net.plain(img)
    assert logits.argmax() == want.argmax() and bits(logits, want) > 16


def test_errors(setup, tmp_path):
    params, ctx, kg, boot, net, galois = setup
    calib = np.zeros((1, 1, 16, 16))
    with pytest.raises(OSError):
        xehe.nn.Network(tmp_path / "missing.onnx", calib, boot)
    with pytest.raises(ValueError, match="fast or precise"):
        xehe.nn.Network(MODEL, calib, boot, relu_sign="exact")
    # Without ReLU the circuit's plaintext model is the model.
    image = xehe.nn.fashion_mnist(1, side=16)[0][0]
    assert np.array_equal(net.circuit(image), net.plain(image))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07 not a model")
    with pytest.raises(ValueError, match="ONNX"):
        xehe.nn.Network(junk, calib, boot)
    data = bytearray(MODEL.read_bytes())
    at = data.find(b"\x22\x03Mul") + 2
    data[at:at + 3] = b"Sin"
    sin = tmp_path / "sin.onnx"
    sin.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="operator Sin is not supported"):
        xehe.nn.Network(sin, calib, boot)
    with pytest.raises(ValueError, match="values"):
        net.encode_image(np.zeros(10))
    with pytest.raises(ValueError):
        net.decode_logits([0.0] * 3)


def test_relu_network_at_the_default_preset():
    """The committed small ReLU network on the insecure preset: parameters_for gives it the
    levels its ReLUs need; the decrypted class equals the circuit's plaintext model's."""
    relu = MODEL.with_name("small-relu.onnx")
    base = xehe.BootstrappingParameters.n12_insecure()
    params = xehe.nn.parameters_for(relu, base)
    assert params.name == "N12-insecure-levels10" and params.insecure
    assert xehe.nn.parameters_for(MODEL, base).name == "N12-insecure"   # no ReLU: unchanged
    ctx = params.context()
    kg = KeyGenerator(ctx)
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key()))
    images = np.random.default_rng(5).random((4, 1, 16, 16))
    net = xehe.nn.Network(relu, images, boot)
    galois = net.galois_keys(boot, kg.secret_key())
    enc = CKKSEncoder(ctx)
    ct = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode(net.encode_image(images[0]), boot.output_scale()))
    Evaluator(ctx).mod_switch_to_inplace(ct, net.input_parms_id(ctx))
    out, _ = net.infer(boot, galois, ct)
    logits = net.decode_logits(enc.decode(Decryptor(ctx, kg.secret_key()).decrypt(out)))
    want = net.circuit(images[0])
    assert logits.argmax() == want.argmax() and bits(logits, want) > 12
    with pytest.raises(ValueError, match="fast or precise"):
        xehe.nn.parameters_for(relu, base, relu_sign="exact")
