"""The device memory budget from Python (``xehe.device.set_device_memory``): sizes parse, the
peak is reported by category, and an operation that cannot fit raises
``xehe.errors.DeviceMemoryError`` (a ``DeviceError``) with its input intact. Runs on CUDA, else
OpenCL (pocl in CI); skipped without either."""

import numpy as np
import pytest

import xehe
from xehe import errors
from xehe.seal import (CKKSEncoder, CoeffModulus, Decryptor, EncryptionParameters, Encryptor, Evaluator,
                       KeyGenerator, SEALContext, scheme_type)


def _device():
    for name in ("cuda", "opencl"):
        try:
            xehe.device.new_queue(name)
            return name
        except errors.DeviceError:
            continue
    pytest.skip("no CUDA or OpenCL device (install pocl-opencl-icd for OpenCL on the CPU)")


def test_sizes_and_the_variable_default():
    try:
        xehe.device.set_device_memory("512MiB")
        assert xehe.device.device_memory() == 512 << 20
        xehe.device.set_device_memory(3 << 30)
        assert xehe.device.device_memory() == 3 << 30
        with pytest.raises(ValueError, match="a size such as 24GiB"):
            xehe.device.set_device_memory("twelve")
    finally:
        xehe.device.set_device_memory(None)
    assert xehe.device.device_memory() is None


def test_key_forms():
    try:
        for form in ("compact", "FULL", "auto"):
            xehe.device.set_key_form(form)
        with pytest.raises(ValueError, match="expected auto, full or compact"):
            xehe.device.set_key_form("half")
    finally:
        xehe.device.set_key_form("auto")


def test_a_budget_too_small_raises_and_keeps_the_input():
    device = _device()
    q = xehe.device.new_queue(device)
    p = EncryptionParameters(scheme_type.ckks)
    p.set_poly_modulus_degree(4096)
    p.set_coeff_modulus(CoeffModulus.Create(4096, [40, 20, 40]))
    ctx = SEALContext(p)
    kg = KeyGenerator(ctx)
    enc = CKKSEncoder(ctx)
    x = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode([0.5, -0.25], 2.0**25))
    x.gpu(q)
    ev = Evaluator(ctx)
    ev.square(x)                                   # fits: the peak counts it
    peak = xehe.device.device_memory_peak(q)
    assert peak["working"] > 0 and peak["total"] == peak["keys"] + peak["plaintexts"] + peak["working"]
    # A new queue has an empty pool: its first allocation meets the budget.
    y = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode([0.5, -0.25], 2.0**25))
    before = y.to_string()
    y.gpu(xehe.device.new_queue(device))
    try:
        xehe.device.set_device_memory(1)
        with pytest.raises(errors.DeviceMemoryError, match="the budget is") as e:
            ev.square(y)
        assert isinstance(e.value, errors.DeviceError)
    finally:
        xehe.device.set_device_memory(None)
    assert y.to_string() == before                 # the input is unchanged
    got = enc.decode(Decryptor(ctx, kg.secret_key()).decrypt(ev.square(y)))
    assert np.allclose(got[:2], [0.25, 0.0625], atol=1e-3)
