"""xehe on Ray: a pool of workers — one per GPU, or CPU workers — that evaluate ``xehe eval``
programs on SEAL bytes.

::

    from xehe.distributed import Pool

    pool = Pool(device="cpu")                       # or: Pool() — one worker per GPU Ray has
    keys = pool.load_keys(parms_bytes, relin_keys=rk_bytes)   # sent once, loaded once per worker
    out = pool.eval(keys, "rescale(relin(x * y))", {"x": x_bytes, "y": y_bytes})
    for r in pool.map(keys, "rescale(relin(x * x))", ({"x": b} for b in many)):
        ...

The program is the expression language of ``xehe eval`` (``bootstrap(x)`` included): the same
parser and the same evaluator calls (:func:`xehe.evaluate_expression`), so a result is the same
bytes as ``xehe eval`` and in-process evaluation give — and, for SEAL's deterministic operations,
as SEAL itself.

Keys travel once: :meth:`Pool.load_keys` puts them in Ray's object store in chunks (or takes a
path every host can read), and each worker loads a key set the first time it needs it, keeping
the last ``max_keysets`` key sets it used. A worker that dies is restarted by Ray; it loads the
key sets again when its next items name them, and the items it held are run again (the same
bytes: the evaluation is deterministic). An item that fails — malformed bytes, other parameters,
a missing key — raises xehe's exception (:mod:`xehe.errors`) for that item alone.

Needs ``ray`` (``pip install xehe[distributed]``).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import itertools
import os
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

try:
    import numpy as np
    import ray
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("xehe.distributed needs Ray: pip install 'xehe[distributed]' (or: pip install ray)") from e

__all__ = ["KeySet", "Pool"]

#: Bytes per object-store chunk of a key file (a multi-GiB key set is never one argument).
CHUNK_BYTES = 64 << 20
#: Worker seconds an adaptive :meth:`Pool.map` chunk aims at, and its most items.
CHUNK_SECONDS = 0.1
MAX_CHUNK = 16
#: Chunks a device worker works on at once by default (:class:`Pool`'s ``concurrency``): on the H100 at
#: N = 2^16, one GPU worker streamed multiply+relinearize+rescale 0–1 ms an item slower than
#: in-process with 2 (the stages of one chunk not quite hidden), and as fast or faster with 3.
CONCURRENCY = 3
#: glibc malloc settings of the worker processes (environment variables: read when the process
#: starts, so they hold for every thread Ray makes). By default glibc gives a block over 128 KiB
#: (a threshold it then adapts) its own mapping, unmapped when freed, and gives each thread an
#: arena of 64 MiB heaps it unmaps when they empty: every item's buffers — the inputs' bytes,
#: the loaded ciphertexts, the result and its bytes, ~30 MiB at N = 2^16 — were then fresh
#: pages, and faulting them in made a CPU worker's ``x + y`` at N = 2^16 4x slower than in a
#: process that had reused its memory. Here blocks up to 32 MiB (glibc's ceiling) come from
#: one shared heap that keeps up to 256 MiB freed. No effect with another C library.
MALLOC_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "MALLOC_ARENA_MAX": "1",
}

_Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", None]


@dataclass(frozen=True)
class KeySet:
    """Parameters and keys loaded into a pool: their content hash (``id``) and where the workers
    fetch them (object-store chunks, or a path). Cheap to pass around; hold it as long as items
    use it (the chunks live while it does)."""

    id: str
    parts: Dict[str, Tuple[str, Any]] = field(repr=False)
    sizes: Dict[str, int] = field(default_factory=dict)

    def __repr__(self):
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        return f"KeySet({self.id[:16]}…: {sizes})"


def _to_wire(value: Any) -> Any:
    """Bytes as a uint8 array (a view, no copy): Ray moves arrays through its object store
    without pickling them, twice as fast as ``bytes`` for a ciphertext."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(value, dtype=np.uint8)
    return value


def _from_wire(value: Any) -> Any:
    return value.tobytes() if isinstance(value, np.ndarray) else value


def _read_part(kind: str, where: Any) -> bytes:
    if kind == "path":
        with open(where, "rb") as f:
            return f.read()
    chunks = ray.get(list(where))
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)


class _LoadedKeys:
    """One key set, loaded in a worker."""

    def __init__(self, parts: Mapping[str, Tuple[str, Any]]):
        import xehe

        parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
        parms.load_bytes(_read_part(*parts["params"]))
        # As `xehe eval`: bootstrapping presets, and N = 2^16 and above, are beyond SEAL's
        # 128-bit table (SEAL itself needs sec_level_type.none for them).
        beyond = "bootstrap_keys" in parts or parms.poly_modulus_degree() > 32768
        level = xehe.sec_level_type.none if beyond else xehe.sec_level_type.tc128
        self.context = xehe.SEALContext(parms, True, level)
        if not self.context.parameters_set():
            raise xehe.errors.InvalidParametersError(self.context.parameter_error_message())
        self.relin_keys = self.galois_keys = self.bootstrapper = None
        if "relin_keys" in parts:
            self.relin_keys = xehe.RelinKeys()
            self.relin_keys.load_bytes(self.context, _read_part(*parts["relin_keys"]))
        if "galois_keys" in parts:
            self.galois_keys = xehe.GaloisKeys()
            self.galois_keys.load_bytes(self.context, _read_part(*parts["galois_keys"]))
        if "bootstrap_keys" in parts:
            keys = xehe.BootstrappingKeys.load_bytes(self.context, _read_part(*parts["bootstrap_keys"]))
            self.bootstrapper = xehe.Bootstrapper(self.context, keys)


class _Worker:
    """A Ray actor: one device (or CPU threads), a bounded cache of loaded key sets.

    A threaded actor (Ray's ``max_concurrency``): it works on ``concurrency`` chunks at once, so
    that Ray fetches the next chunk's bytes and stores the last one's results while a chunk
    evaluates (xehe releases the GIL while it loads, evaluates and saves). On a device each
    evaluation slot has its own queue, so one item's host work (parsing and saving its bytes)
    overlaps another's device work; on the CPU evaluations take turns, one at a time on the
    worker's threads."""

    def __init__(self, device: str, threads: Optional[int], max_keysets: int, concurrency: int = 1):
        if threads:
            # Before xehe's first parallel call creates its thread pool.
            os.environ.setdefault("RAYON_NUM_THREADS", str(threads))
        import xehe

        self._xehe = xehe
        self._gpu_ids = [str(g) for g in ray.get_gpu_ids()]
        if device in ("cuda", "gpu"):
            # Ray sets CUDA_VISIBLE_DEVICES to the GPU it assigned: that GPU is cuda:0 here.
            device = "cuda:0"
        self._device = device
        # Evaluation slots: a queue each on a device (sharing its kernels and keys); one slot,
        # no queue, on the CPU.
        self._slots: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        if device == "cpu":
            self._slots.put(None)
        else:
            first = xehe.device.new_queue(device)
            self._slots.put(first)
            for _ in range(max(1, concurrency) - 1):
                self._slots.put(first.new_queue_on_device())
        # Key loading and the counters, shared by the actor's threads.
        self._lock = threading.Lock()
        self._cache: "collections.OrderedDict[str, _LoadedKeys]" = collections.OrderedDict()
        self._max = max_keysets
        self._loads: Dict[str, int] = collections.Counter()
        self._items = 0
        self._busy = 0.0
        self._started = time.time()

    def _keys(self, keyset: KeySet) -> _LoadedKeys:
        # Under the lock: two chunks naming a new key set load it once.
        with self._lock:
            k = self._cache.get(keyset.id)
            if k is None:
                k = _LoadedKeys(keyset.parts)
                self._loads[keyset.id] += 1
                self._cache[keyset.id] = k
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(keyset.id)
            return k

    @contextlib.contextmanager
    def _slot(self):
        """An evaluation slot (its queue, or None on the CPU), waiting for one to be free."""
        q = self._slots.get()
        try:
            yield q
        finally:
            self._slots.put(q)

    def load(self, keyset: KeySet) -> str:
        self._keys(keyset)
        return keyset.id

    def eval_many(self, keyset: KeySet, expr: str, items: list, plains, compr_mode: str):
        """Evaluate ``expr`` on each item of a chunk: ``(results, seconds evaluating)``, a result
        being the output's bytes (as an array) or the exception that item raised. A key set
        that cannot be loaded fails the whole chunk."""
        k = self._keys(keyset)
        plains = {name: _from_wire(v) for name, v in plains.items()} if plains else None
        # The bytes are copied out of the object store before taking a slot, so that the copy
        # overlaps the evaluation of the chunk that holds it.
        items = [{name: _from_wire(v) for name, v in inputs.items()} for inputs in items]
        out: list = []
        busy = 0.0
        # One slot for the whole chunk, not per item: interleaved with another chunk, its results
        # would wait for that chunk too.
        with self._slot() as q:
            for inputs in items:
                start = time.perf_counter()
                try:
                    out.append(_to_wire(self._xehe.evaluate_expression(
                        k.context, expr, inputs, plains=plains, relin_keys=k.relin_keys,
                        galois_keys=k.galois_keys, bootstrapper=k.bootstrapper, compr_mode=compr_mode,
                        queue=q,
                    )))
                except Exception as e:  # noqa: BLE001 - the item's own error, returned in its place
                    out.append(e)
                finally:
                    busy += time.perf_counter() - start
        with self._lock:
            self._items += len(items)
            self._busy += busy
        return out, busy

    def info(self) -> dict:
        return {
            "host": socket.gethostname(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
            "pid": os.getpid(),
            "device": self._device,
            "gpu_ids": self._gpu_ids,
            "keysets": list(self._cache),
            "loads": dict(self._loads),
            "items": self._items,
            "busy_s": self._busy,
            "cpu_s": time.process_time(),
            "started": self._started,
        }


def _hash_part(h, data_or_path, kind):
    if kind == "path":
        with open(data_or_path, "rb") as f:
            while True:
                block = f.read(1 << 24)
                if not block:
                    break
                h.update(block)
    else:
        h.update(data_or_path)


class Pool:
    """Ray actors that evaluate ``xehe eval`` programs.

    ``device``: ``"auto"`` (one worker per GPU when the cluster has GPUs, else CPU workers),
    ``"cuda"`` (one GPU per worker: the worker uses the GPU Ray assigned it), ``"cpu"``, or a
    device of ``XEHE_DEVICE``'s grammar used as given (``"opencl:0:1"``).
    ``num_workers``: default one per GPU (GPU workers) or one per ``cpus_per_worker`` CPUs.
    ``ray_address``: an existing cluster (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``);
    without it, the Ray already initialized in this process, else a local cluster.
    ``num_gpus_per_worker``: Ray GPUs each worker reserves (default 1 for GPU devices, 0 on the
    CPU). ``max_keysets``: key sets a worker keeps loaded (least recently used dropped).
    ``concurrency``: chunks of :meth:`map` a worker works on at once (Ray's ``max_concurrency``;
    default :data:`CONCURRENCY` on a device, 1 on the CPU): while one evaluates, Ray moves the
    next one's inputs in and the last one's results out. On a device each concurrent chunk
    evaluates on its own queue (their host and device work overlap; each queue keeps its own
    memory cache); on the CPU they evaluate one at a time, and the copies of the others take a
    core beyond ``cpus_per_worker``. 1: a chunk at a time, as a plain actor.
    The workers' processes run with :data:`MALLOC_ENV` (merged into their Ray runtime
    environment).
    ``max_restarts`` / ``max_task_retries``: Ray's, for dead workers and the items they held.
    ``scheduling_strategy``: Ray's for the workers, e.g. ``"SPREAD"`` to put them on as many
    nodes as possible (a cluster of several hosts); default Ray's own (packs a node first).
    ``ray_init``: further ``ray.init`` arguments when this pool starts or joins Ray.
    """

    def __init__(
        self,
        num_workers: Optional[int] = None,
        device: str = "auto",
        ray_address: Optional[str] = None,
        *,
        cpus_per_worker: int = 1,
        num_gpus_per_worker: Optional[float] = None,
        max_keysets: int = 2,
        concurrency: Optional[int] = None,
        max_restarts: int = -1,
        max_task_retries: int = 3,
        scheduling_strategy: Optional[str] = None,
        ray_init: Optional[dict] = None,
    ):
        if not ray.is_initialized():
            ray.init(address=ray_address, **(ray_init or {}))
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        if device == "auto":
            device = "cuda" if gpus > 0 else "cpu"
        if num_gpus_per_worker is None:
            num_gpus_per_worker = 0 if device == "cpu" else 1
        if num_workers is None:
            if num_gpus_per_worker:
                num_workers = int(gpus // num_gpus_per_worker)
            else:
                num_workers = int(resources.get("CPU", 1) // max(cpus_per_worker, 1))
            num_workers = max(num_workers, 1)
        if num_workers < 1:
            raise ValueError("num_workers must be at least 1")
        if concurrency is None:
            concurrency = 1 if device == "cpu" else CONCURRENCY
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.device = device
        self.concurrency = concurrency
        threads = cpus_per_worker if device == "cpu" else None
        actor = ray.remote(_Worker).options(
            num_cpus=cpus_per_worker,
            num_gpus=num_gpus_per_worker,
            max_restarts=max_restarts,
            max_task_retries=max_task_retries,
            max_concurrency=concurrency,
            runtime_env={"env_vars": MALLOC_ENV},
            **({"scheduling_strategy": scheduling_strategy} if scheduling_strategy else {}),
        )
        self._actors = [actor.remote(device, threads, max_keysets, concurrency) for _ in range(num_workers)]
        # Wait for every worker (and surface a device that cannot be opened).
        ray.get([a.info.remote() for a in self._actors])

    def __len__(self):
        return len(self._actors)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    def shutdown(self):
        """Stop the workers (Ray itself stays up)."""
        for a in self._actors:
            ray.kill(a, no_restart=True)
        self._actors = []

    # ---- keys --------------------------------------------------------------------------------
    def load_keys(
        self,
        params: _Source,
        relin_keys: _Source = None,
        galois_keys: _Source = None,
        bootstrap_keys: _Source = None,
    ) -> KeySet:
        """SEAL-saved ``EncryptionParameters`` and keys (``RelinKeys``, ``GaloisKeys``; the
        bootstrapping keys of ``xehe keygen bootstrap`` / ``BootstrappingKeys.save``), as bytes or
        as paths every worker's host can read. Bytes go to the object store once, in chunks; each
        worker loads the key set now (errors are raised here) and keeps it while it is among its
        ``max_keysets`` last used."""
        given = {"params": params, "relin_keys": relin_keys, "galois_keys": galois_keys,
                 "bootstrap_keys": bootstrap_keys}
        h = hashlib.sha256()
        parts: Dict[str, Tuple[str, Any]] = {}
        sizes: Dict[str, int] = {}
        for name, src in given.items():
            if src is None:
                continue
            kind = "path" if isinstance(src, (str, os.PathLike)) else "bytes"
            h.update(name.encode() + b"\0")
            _hash_part(h, src, kind)
            if kind == "path":
                path = os.fspath(src)
                parts[name] = ("path", os.path.abspath(path))
                sizes[name] = os.path.getsize(path)
            else:
                view = memoryview(src).cast("B")
                parts[name] = ("refs", [ray.put(bytes(view[i:i + CHUNK_BYTES]))
                                        for i in range(0, max(len(view), 1), CHUNK_BYTES)])
                sizes[name] = len(view)
        keyset = KeySet(h.hexdigest(), parts, sizes)
        ray.get([a.load.remote(keyset) for a in self._actors])
        return keyset

    # ---- evaluation --------------------------------------------------------------------------
    @staticmethod
    def _unwrap(e: BaseException) -> BaseException:
        if isinstance(e, ray.exceptions.RayTaskError) and e.cause is not None:
            return e.cause
        return e

    def eval(
        self,
        keyset: KeySet,
        expr: str,
        inputs: Mapping[str, bytes],
        plains: Optional[Mapping[str, bytes]] = None,
        compr_mode: str = "none",
    ) -> bytes:
        """Evaluate ``expr`` on one item (ciphertext inputs by name, plaintexts by name) on the
        least busy worker; the result's SEAL bytes (``compr_mode``: none, zlib, zstd)."""
        return next(self.map(keyset, expr, [inputs], plains=plains, compr_mode=compr_mode))

    def map(
        self,
        keyset: KeySet,
        expr: str,
        items: Iterable[Mapping[str, bytes]],
        plains: Optional[Mapping[str, bytes]] = None,
        window: Optional[int] = None,
        return_exceptions: bool = False,
        compr_mode: str = "none",
        chunk: Optional[int] = None,
    ) -> Iterator[Union[bytes, BaseException]]:
        """Evaluate ``expr`` on every item, results in input order. Items go to the workers in
        chunks of ``chunk`` per Ray task (default: adaptive — one at first, then as many as take
        about :data:`CHUNK_SECONDS` of a worker's time, at most :data:`MAX_CHUNK`: short items
        share one task's scheduling and transfer costs, long ones keep the load balanced). At
        most ``window`` chunks (default: ``concurrency + 1`` per worker, so that each worker has
        its next chunk waiting while it works on ``concurrency``) are in flight or waiting to be
        yielded. ``plains`` are shared by all items (put in the object store once). An item that
        fails raises xehe's exception when its turn comes (the items after it are not run), or,
        with ``return_exceptions``, is yielded as the exception and the others go on."""
        if not self._actors:
            raise RuntimeError("this pool was shut down")
        if chunk is not None and chunk < 1:
            raise ValueError("chunk must be at least 1")
        window = max(1, window or (self.concurrency + 1) * len(self._actors))
        shared_plains = ray.put({k: _to_wire(v) for k, v in plains.items()}) if plains else None
        busy = [0] * len(self._actors)
        running: Dict[Any, int] = {}               # task ref -> worker
        order: "collections.deque[Tuple[Any, int]]" = collections.deque()   # (task, items) in order
        per_item: Optional[float] = None           # worker seconds per item, running mean
        it = iter(items)
        exhausted = False
        try:
            while True:
                while not exhausted and len(order) < window:
                    size = chunk or (1 if per_item is None else
                                     max(1, min(MAX_CHUNK, int(CHUNK_SECONDS / max(per_item, 1e-6)))))
                    batch = [{k: _to_wire(v) for k, v in item.items()}
                             for item in itertools.islice(it, size)]
                    if len(batch) < size:
                        exhausted = True
                    if not batch:
                        break
                    w = min(range(len(busy)), key=busy.__getitem__)
                    ref = self._actors[w].eval_many.remote(keyset, expr, batch, shared_plains, compr_mode)
                    running[ref] = w
                    order.append((ref, len(batch)))
                    busy[w] += 1
                if not order:
                    return
                head, n = order[0]
                # Wait for the head of the order, freeing the workers of whatever finishes first.
                while head in running:
                    ready, _ = ray.wait(list(running), num_returns=1)
                    for r in ready:
                        busy[running.pop(r)] -= 1
                order.popleft()
                try:
                    results, seconds = ray.get(head)
                except ray.exceptions.RayTaskError as e:   # the whole chunk (e.g. its key set)
                    err = self._unwrap(e)
                    if not return_exceptions:
                        raise err from None
                    results, seconds = [err] * n, None
                if seconds is not None and results:
                    t = seconds / len(results)
                    per_item = t if per_item is None else 0.5 * (per_item + t)
                for r in results:
                    if isinstance(r, BaseException):
                        if not return_exceptions:
                            raise r
                        yield r
                    else:
                        yield _from_wire(r)
        finally:
            for r in running:
                try:
                    ray.cancel(r)
                except Exception:  # noqa: BLE001 - best effort: the results are dropped anyway
                    pass

    # ---- introspection -----------------------------------------------------------------------
    def workers(self) -> List[dict]:
        """Each worker: ``host``, ``node_id``, ``node_ip`` (its Ray node's address), ``pid``,
        ``device`` (what it evaluates on),
        ``gpu_ids`` (the GPUs Ray assigned it), ``keysets`` (ids loaded, least recent first),
        ``loads`` (times each key set was loaded by this process), ``items`` (evaluated by this
        process), ``busy_s`` (seconds spent evaluating them: loading the inputs, the program,
        saving the result), ``cpu_s`` (CPU seconds of this process so far, all its threads: moving
        the bytes included), ``started`` (when this process started: a restarted worker is a new process,
        with a new ``pid``)."""
        return ray.get([a.info.remote() for a in self._actors])
