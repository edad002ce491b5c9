"""seal-python's CKKS API on xehe: ``from xehe.seal import *`` (or ``import xehe.seal as seal``)
in place of ``from seal import *`` runs a seal-python CKKS script on xehe, unchanged otherwise.

The names are seal-python 4.4's, with its call shapes; the objects read and write SEAL's
serialization format and every deterministic result equals SEAL's byte for byte. BFV/BGV-only
names (``BatchEncoder``, ``PlainModulus``) and SEAL's memory pools are not provided; BFV/BGV-only
evaluator methods raise ``RuntimeError("unsupported scheme")`` as SEAL does for CKKS.

xehe's additions (``.gpu()``, ``CiphertextBatch``, hybrid keys, devices) are in ``xehe``.
"""

from ._native import (
    CKKSEncoder,
    Ciphertext,
    CoeffModulus,
    ContextData,
    Decryptor,
    EncryptionParameters,
    Encryptor,
    Evaluator,
    GaloisKeys,
    KeyGenerator,
    KSwitchKeys,
    Modulus,
    Plaintext,
    PublicKey,
    RelinKeys,
    SEALContext,
    SecretKey,
    __version__,
    compr_mode_type,
    scheme_type,
    sec_level_type,
)


class VectorDouble(list):
    """seal-python's ``VectorDouble``: a list of floats (any sequence or array is accepted)."""


class VectorComplex(list):
    """seal-python's ``VectorComplex``: a list of complex numbers."""


class VectorInt(list):
    """seal-python's ``VectorInt``: a list of ints."""


class VectorUInt(list):
    """seal-python's ``VectorUInt``: a list of non-negative ints."""


__all__ = [
    "CKKSEncoder",
    "Ciphertext",
    "CoeffModulus",
    "ContextData",
    "Decryptor",
    "EncryptionParameters",
    "Encryptor",
    "Evaluator",
    "GaloisKeys",
    "KeyGenerator",
    "KSwitchKeys",
    "Modulus",
    "Plaintext",
    "PublicKey",
    "RelinKeys",
    "SEALContext",
    "SecretKey",
    "VectorComplex",
    "VectorDouble",
    "VectorInt",
    "VectorUInt",
    "compr_mode_type",
    "scheme_type",
    "sec_level_type",
]
