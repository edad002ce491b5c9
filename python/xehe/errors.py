"""xehe's errors as Python exceptions.

Every error xehe raises is an :class:`XeheError`, and also the built-in class seal-python raises
for the same SEAL failure, so code written for seal-python (``except ValueError``) keeps working:

- ``ValueError`` for what SEAL throws as ``std::invalid_argument`` (mismatched parameters or
  scales, end of the modulus chain, missing keys, malformed bytes, bad arguments);
- ``RuntimeError`` for SEAL's ``std::logic_error`` (a transparent result) and for device
  failures; file errors are ``XeheIOError``, an ``OSError`` and a ``RuntimeError``.

The message is xehe's, naming the failed check. A failed operation leaves its operands unchanged.
"""

__all__ = [
    "XeheError",
    "InvalidArgumentError",
    "InvalidParametersError",
    "ParmsMismatchError",
    "ScaleMismatchError",
    "ScaleOutOfBoundsError",
    "NotValidForParamsError",
    "EndOfModulusChainError",
    "MissingKeyError",
    "WrongFormError",
    "MalformedDataError",
    "TransparentResultError",
    "DeviceError",
    "DeviceMemoryError",
    "HostMemoryError",
    "XeheIOError",
    "InternalError",
]


class XeheError(Exception):
    """Base class of every error raised by xehe."""


class InvalidArgumentError(XeheError, ValueError):
    """An argument is invalid (SEAL: ``std::invalid_argument``)."""


class InvalidParametersError(XeheError, ValueError):
    """Encryption parameters are not valid."""


class ParmsMismatchError(XeheError, ValueError):
    """Operands belong to different parameter sets or levels."""


class ScaleMismatchError(XeheError, ValueError):
    """The scales of two operands differ."""


class ScaleOutOfBoundsError(XeheError, ValueError):
    """A scale would exceed the coefficient modulus, or is not positive."""


class NotValidForParamsError(XeheError, ValueError):
    """An object is not valid for the context (another context, unknown ``parms_id``)."""


class EndOfModulusChainError(XeheError, ValueError):
    """No level is left to switch or rescale to."""


class MissingKeyError(XeheError, ValueError):
    """A needed key is missing (Galois key not present, not enough relinearization keys)."""


class WrongFormError(XeheError, ValueError):
    """An object is in the wrong form (NTT or not)."""


class MalformedDataError(XeheError, ValueError):
    """Serialized data is malformed, truncated or unsupported."""


class TransparentResultError(XeheError, RuntimeError):
    """The result would be a transparent ciphertext (SEAL: ``std::logic_error``)."""


class DeviceError(XeheError, RuntimeError):
    """A device or backend failure: no GPU usable, driver error, out of device memory."""


class DeviceMemoryError(DeviceError):
    """An operation would pass the device memory budget (``xehe.device.set_device_memory``,
    ``XEHE_DEVICE_MEMORY``); its inputs are intact."""


class HostMemoryError(XeheError, MemoryError):
    """Work whose host memory is known beforehand (evaluation keys) would need more than the
    machine has available; nothing was started."""


class XeheIOError(XeheError, RuntimeError, OSError):
    """Reading or writing a file failed."""


class InternalError(XeheError, RuntimeError):
    """A bug in xehe (a Rust panic caught at the boundary); please report it."""
