"""Shared fixtures: seal-python 4.4 (the reference) makes parameters, keys and inputs; xehe
loads SEAL's bytes, and each test runs the same calls through both.

With ``XEHE_DEVICE`` set to a GPU (``cuda``, ``opencl``, ...) and a usable device, every xehe
ciphertext and plaintext the fixtures hand out is marked ``.gpu()``, so the same suite checks
the GPU path against SEAL byte for byte.
"""

import os
from types import SimpleNamespace

import numpy as np
import pytest

import xehe

try:
    import seal
except ImportError:  # every test compares with it: skip them all, saying why
    seal = None

# name: (N, coeff_modulus bits, log2 scale)
PARAM_SETS = {
    "n4096": (4096, [40, 20, 40], 25),
    "n8192": (8192, [60, 40, 40, 60], 40),
}
# Rotation steps of the Galois keys (0: conjugation); 3 is then reached by SEAL's NAF (4 - 1).
STEPS = [1, -1, 2, 4, 0]


def _device_wanted():
    d = os.environ.get("XEHE_DEVICE", "").strip()
    return d not in ("", "cpu")


ON_GPU = _device_wanted()


def pytest_report_header(config):
    where = f"GPU ({os.environ.get('XEHE_DEVICE')})" if ON_GPU else "CPU"
    ref = f"seal-python {seal.__version__}" if seal else "seal-python NOT INSTALLED"
    return [f"xehe {xehe.__version__}: xehe objects on the {where}; reference {ref}"]


def pytest_collection_modifyitems(config, items):
    if seal is None:
        skip = pytest.mark.skip(reason="seal-python 4.4, the reference, is not installed: pip install seal-python==4.4.0")
        for item in items:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gpu():
    """Whether the xehe side runs on a GPU (XEHE_DEVICE names one); fails if it is not usable."""
    if ON_GPU and not xehe.device.gpu_available():
        pytest.fail(f"XEHE_DEVICE={os.environ['XEHE_DEVICE']} but no usable GPU:\n{xehe.device.info()}")
    return ON_GPU


def place(obj, gpu):
    """Mark an xehe object for the GPU when the suite runs there."""
    if gpu:
        obj.gpu()
    return obj


def _build(name, gpu):
    n, bits, log_scale = PARAM_SETS[name]
    scale = 2.0**log_scale
    slots = n // 2
    s = SimpleNamespace(name=name, n=n, bits=bits, scale=scale, slots=slots)

    # ---- seal-python: the reference objects --------------------------------------------------
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
    ctx = seal.SEALContext(parms, True, seal.sec_level_type.tc128)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    keygen = seal.KeyGenerator(ctx)
    sk = keygen.secret_key()
    pk = keygen.create_public_key()
    rk = keygen.create_relin_keys()
    gk = seal.GaloisKeys()
    keygen.create_galois_keys(STEPS, gk)
    encoder = seal.CKKSEncoder(ctx)
    encryptor = seal.Encryptor(ctx, pk, sk)
    rng = np.random.default_rng(20240000 + n)
    va = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    vb = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    vp = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    a = encryptor.encrypt(encoder.encode_complex(va, scale))
    b = encryptor.encrypt_symmetric(encoder.encode_complex(vb, scale))
    p = encoder.encode_complex(vp, scale)
    chain = []
    cd = ctx.key_context_data()
    while cd is not None:
        chain.append(cd.parms_id())
        cd = cd.next_context_data()
    s.values = SimpleNamespace(a=va, b=vb, p=vp)
    s.seal = SimpleNamespace(
        lib=seal, parms=parms, ctx=ctx, keygen=keygen, sk=sk, pk=pk, rk=rk, gk=gk,
        encoder=encoder, encryptor=encryptor, decryptor=seal.Decryptor(ctx, sk),
        ev=seal.Evaluator(ctx), a=a, b=b, p=p,
        first_pid=ctx.first_parms_id(), last_pid=ctx.last_parms_id(), chain=chain,
    )

    # ---- xehe: the same objects, loaded from SEAL's bytes --------------------------------------
    xparms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    xparms.load_bytes(parms.to_bytes())
    xctx = xehe.SEALContext(xparms, True, xehe.sec_level_type.tc128)
    xsk = xctx.from_secret_str(sk.to_string())
    xpk = xctx.from_public_str(pk.to_string())
    s.xehe = SimpleNamespace(
        lib=xehe, parms=xparms, ctx=xctx, sk=xsk, pk=xpk,
        rk=xctx.from_relin_str(rk.to_string()), gk=xctx.from_galois_str(gk.to_string()),
        encoder=xehe.CKKSEncoder(xctx), encryptor=xehe.Encryptor(xctx, xpk, xsk),
        decryptor=xehe.Decryptor(xctx, xsk), ev=xehe.Evaluator(xctx),
        first_pid=xctx.first_parms_id(), last_pid=xctx.last_parms_id(), chain=chain,
    )
    s.gpu = gpu
    s.fresh = lambda: _fresh(s)
    return s


def _fresh(s):
    """New xehe copies of the inputs a, b, p (loaded from SEAL's bytes, placed on the device)."""
    x = s.xehe
    return SimpleNamespace(
        a=place(x.ctx.from_cipher_str(s.seal.a.to_string()), s.gpu),
        b=place(x.ctx.from_cipher_str(s.seal.b.to_string()), s.gpu),
        p=place(x.ctx.from_plain_str(s.seal.p.to_bytes()), s.gpu),
    )


_CACHE = {}


@pytest.fixture(scope="session", params=list(PARAM_SETS))
def pset(request, gpu):
    """Each parameter set (N=4096, N=8192): seal-python objects and their xehe twins."""
    if request.param not in _CACHE:
        _CACHE[request.param] = _build(request.param, gpu)
    return _CACHE[request.param]


@pytest.fixture(scope="session")
def n8192(gpu):
    """The N=8192 set only."""
    if "n8192" not in _CACHE:
        _CACHE["n8192"] = _build("n8192", gpu)
    return _CACHE["n8192"]


@pytest.fixture(scope="session")
def mrr_data(n8192):
    """Eight SEAL ciphertexts of the N=8192 set (slots uniform in [-1, 1]): the set, their bytes,
    and the seal-python objects (the Ray pool's tests)."""
    s = n8192.seal
    rng = np.random.default_rng(7)
    cts = [s.encryptor.encrypt(s.encoder.encode(rng.uniform(-1, 1, n8192.slots), n8192.scale))
           for _ in range(8)]
    return n8192, [c.to_string() for c in cts], cts


def seal_mrr(pset, a, b):
    """SEAL's own multiply, relinearize and rescale of two seal-python ciphertexts, as bytes."""
    ev, rk = pset.seal.ev, pset.seal.rk
    return ev.rescale_to_next(ev.relinearize(ev.multiply(a, b), rk)).to_string()
