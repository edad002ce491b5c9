"""Devices: queues, device selection, and what each backend finds (xehe addition).

``Ciphertext.gpu()`` marks a ciphertext for the default queue, made on first use on the device
named by ``XEHE_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``opencl``, ``opencl:0:1``, ``auto``;
default ``auto``: the first CUDA GPU, else the first OpenCL GPU). Set the variable in
``os.environ`` before the first ``.gpu()``, or make queues explicitly with :func:`new_queue`
and pass them: ``ct.gpu(queue)``.

:func:`set_device_memory` (or ``XEHE_DEVICE_MEMORY``) limits the memory each device may use
(``"24GiB"``): keys, plaintexts and working memory count; a network's diagonals are evicted and
uploaded again to stay within it, and an operation that still does not fit raises
:class:`xehe.errors.DeviceMemoryError` with its inputs intact. :func:`device_memory_peak` gives
a queue's device bytes at their peak, by category. Under a budget hybrid keys are held compact
(half their bytes; each key's image made on the device where it is used): :func:`set_key_form`
(``"auto"``, ``"full"``, ``"compact"``; or ``XEHE_KEY_FORM``) chooses otherwise.
"""

from ._native import (Queue, backends, default_queue, device_memory, device_memory_peak, gpu_available, info,
                      new_queue, set_device_memory, set_key_form)

__all__ = ["Queue", "backends", "default_queue", "device_memory", "device_memory_peak", "gpu_available", "info",
           "new_queue", "set_device_memory", "set_key_form"]
