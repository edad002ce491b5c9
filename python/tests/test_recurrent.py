"""Encrypted recurrent networks from Python (xehe.nn.RecurrentNetwork) with the committed small
LSTM and GRU on the insecure N = 2^12 preset: a batch of Fashion-MNIST sequences encrypted step
by step, the plaintext model against onnxruntime's reference logits, the decrypted logits
against the circuit's plaintext model, the device result equal to the CPU's; the errors."""
import os
from pathlib import Path

import numpy as np
import pytest

import xehe
import xehe.nn
from xehe.seal import Ciphertext, CKKSEncoder, Decryptor, Encryptor, Evaluator, KeyGenerator

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def data():
    if not os.path.exists(os.path.join(os.environ.get("XEHE_FASHION_MNIST") or xehe.nn.DEBIAN_FASHION_MNIST, "t10k-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)")
    return True


@pytest.mark.parametrize("name", ["small-lstm", "small-gru"])
def test_encrypted_batch(data, gpu, name):
    if gpu and name == "small-gru":
        pytest.skip("the device path is checked with the LSTM; the suite's CPU pass ran the GRU")
    model = MODELS / f"{name}.onnx"
    params = xehe.nn.parameters_for(model, xehe.BootstrappingParameters.n12_insecure())
    ctx = params.context()
    kg = KeyGenerator(ctx)
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key()))
    calib, _ = xehe.nn.fashion_mnist_sequences(256, 7, 7, train=True)
    net = xehe.nn.RecurrentNetwork(model, calib, boot, pack=4)
    assert net.input_shape == (7, 7) and net.batch == 4
    x, _ = xehe.nn.fashion_mnist_sequences(4, 7, 7)
    reference = np.load(MODELS / f"{name}.reference.npy")[:4]
    assert np.abs(net.plain(x) - reference).max() < 1e-4
    enc = CKKSEncoder(ctx)
    encryptor = Encryptor(ctx, kg.create_public_key())
    steps = []
    for v in net.encode_steps(x):
        ct = encryptor.encrypt(enc.encode(v, boot.output_scale()))
        Evaluator(ctx).mod_switch_to_inplace(ct, net.input_parms_id(ctx))
        steps.append(ct)
    galois = net.galois_keys(boot, kg.secret_key())
    if gpu:
        hosts = [Ciphertext(c) for c in steps]
        for c in steps:
            c.gpu()
    out, seconds = net.infer(boot, galois, steps)
    if gpu:
        out.download()
        cpu, _ = net.infer(boot, galois, hosts)
        assert out.to_string() == cpu.to_string()
    logits = net.decode_logits(enc.decode(Decryptor(ctx, kg.secret_key()).decrypt(out)), len(x))
    want = net.circuit(x)
    assert -np.log2(np.abs(logits - want).max() / np.abs(want).max()) > 12
    assert (logits.argmax(1) == reference.argmax(1)).all()
    assert seconds["bootstraps"] == net.bootstraps


def test_errors(data, tmp_path):
    params = xehe.nn.parameters_for(MODELS / "small-lstm.onnx", xehe.BootstrappingParameters.n12_insecure())
    ctx = params.context()
    kg = KeyGenerator(ctx)
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key()))
    calib, _ = xehe.nn.fashion_mnist_sequences(8, 7, 7, train=True)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError):
        xehe.nn.RecurrentNetwork(bad, calib, boot)
    with pytest.raises(OSError):
        xehe.nn.RecurrentNetwork(tmp_path / "missing.onnx", calib, boot)
    with pytest.raises(ValueError, match="convolutional"):
        xehe.nn.RecurrentNetwork(MODELS / "small-poly.onnx", calib, boot)


def test_seal_client(data, gpu, tmp_path):
    """seal-python is the client of the small LSTM: its secret key makes the server's keys, it
    encrypts every step and decrypts the logits."""
    if gpu:
        pytest.skip("the device path is checked by test_encrypted_batch; the suite's CPU pass ran this")
    seal = pytest.importorskip("seal")
    model = MODELS / "small-lstm.onnx"
    params = xehe.nn.parameters_for(model, xehe.BootstrappingParameters.n12_insecure())
    sparms = seal.EncryptionParameters(seal.scheme_type.ckks)
    sparms.set_poly_modulus_degree(params.poly_modulus_degree)
    sparms.set_coeff_modulus(seal.CoeffModulus.Create(params.poly_modulus_degree, params.coeff_modulus_bits()))
    sctx = seal.SEALContext(sparms, True, seal.sec_level_type.none)
    skg = seal.KeyGenerator(sctx)
    ctx = params.context()
    sk = xehe.seal.SecretKey()
    sk.load_bytes(ctx, skg.secret_key().to_string())
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, sk))
    calib, _ = xehe.nn.fashion_mnist_sequences(256, 7, 7, train=True)
    net = xehe.nn.RecurrentNetwork(model, calib, boot, pack=2)
    x, _ = xehe.nn.fashion_mnist_sequences(2, 7, 7)
    senc = seal.CKKSEncoder(sctx)
    sencryptor = seal.Encryptor(sctx, skg.create_public_key())
    steps = []
    for v in net.encode_steps(x):
        sct = sencryptor.encrypt(senc.encode(v, boot.output_scale()))
        seal.Evaluator(sctx).mod_switch_to_inplace(sct, net.input_parms_id(sctx))
        ct = Ciphertext()
        ct.load_bytes(ctx, sct.to_string())
        steps.append(ct)
    out, _ = net.infer(boot, net.galois_keys(boot, sk), steps)
    out.save(str(tmp_path / "logits.bin"))
    back = seal.Ciphertext()
    back.load(sctx, str(tmp_path / "logits.bin"))
    logits = net.decode_logits(senc.decode(seal.Decryptor(sctx, skg.secret_key()).decrypt(back)), len(x))
    assert (logits.argmax(1) == net.plain(x).argmax(1)).all()
