"""Devices: queues, device selection, and what each backend finds (xehe addition).

``Ciphertext.gpu()`` marks a ciphertext for the default queue, made on first use on the device
named by ``XEHE_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``opencl``, ``opencl:0:1``, ``auto``;
default ``auto``: the first CUDA GPU, else the first OpenCL GPU). Set the variable in
``os.environ`` before the first ``.gpu()``, or make queues explicitly with :func:`new_queue`
and pass them: ``ct.gpu(queue)``.
"""

from ._native import Queue, backends, default_queue, gpu_available, info, new_queue

__all__ = ["Queue", "backends", "default_queue", "gpu_available", "info", "new_queue"]
