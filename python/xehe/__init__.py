"""xehe: CKKS homomorphic encryption bit-for-bit compatible with Microsoft SEAL, with GPU backends.

``xehe`` holds seal-python's CKKS names (``EncryptionParameters``, ``SEALContext``,
``KeyGenerator``, ``CKKSEncoder``, ``Encryptor``, ``Decryptor``, ``Evaluator``, ``Ciphertext``,
…; also importable alone as ``xehe.seal``) and xehe's additions under their own names:

- ``Ciphertext.gpu()`` / ``cpu()`` / ``download()`` / ``is_dirty()`` (also on ``Plaintext`` and
  ``CiphertextBatch``), devices and queues in :mod:`xehe.device`;
- ``CiphertextBatch`` and ``Evaluator.*_batch``;
- hybrid key switching: ``KeySwitchParams``, ``HybridKeySwitching``,
  ``KeyGenerator.create_hybrid_relin_keys`` / ``create_hybrid_galois_keys``,
  ``Evaluator.relinearize_hybrid`` / ``apply_galois_hybrid`` / ``rotate_vector_hybrid``;
- errors in :mod:`xehe.errors` (``ValueError`` / ``RuntimeError`` subclasses).
"""

from . import device, errors
from ._native import (
    CKKSEncoder,
    Ciphertext,
    CiphertextBatch,
    CoeffModulus,
    ContextData,
    Decryptor,
    EncryptionParameters,
    Encryptor,
    Evaluator,
    GaloisKeys,
    HybridGaloisKeys,
    HybridKeySwitching,
    HybridRelinKeys,
    KeyGenerator,
    KeySwitchParams,
    KSwitchKeys,
    Modulus,
    Plaintext,
    PublicKey,
    Queue,
    RelinKeys,
    SEALContext,
    SecretKey,
    __version__,
    compr_mode_type,
    scheme_type,
    sec_level_type,
)
from .errors import XeheError
from .seal import VectorComplex, VectorDouble, VectorInt, VectorUInt

# CKKS bootstrapping (xehe::circuits::bootstrapping): presets, keys from a SEAL secret key, and
# the bootstrapper (docs/guide/bootstrapping.md).
from ._native import Bootstrapper, BootstrappingKeys, BootstrappingParameters, input_shapes

# The expression language of `xehe eval` (`xehe.distributed` runs it on Ray workers).
from ._native import evaluate_expression

__all__ = [
    "Bootstrapper",
    "BootstrappingKeys",
    "BootstrappingParameters",
    "CKKSEncoder",
    "Ciphertext",
    "CiphertextBatch",
    "CoeffModulus",
    "ContextData",
    "Decryptor",
    "EncryptionParameters",
    "Encryptor",
    "Evaluator",
    "GaloisKeys",
    "HybridGaloisKeys",
    "HybridKeySwitching",
    "HybridRelinKeys",
    "KeyGenerator",
    "KeySwitchParams",
    "KSwitchKeys",
    "Modulus",
    "Plaintext",
    "PublicKey",
    "Queue",
    "RelinKeys",
    "SEALContext",
    "SecretKey",
    "VectorComplex",
    "VectorDouble",
    "VectorInt",
    "VectorUInt",
    "XeheError",
    "compr_mode_type",
    "device",
    "errors",
    "evaluate_expression",
    "input_shapes",
    "scheme_type",
    "sec_level_type",
]
