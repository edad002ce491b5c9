"""Encrypted inference of convolutional and recurrent networks from ONNX files (xehe's
``apps::nn``; recurrent ones: :class:`RecurrentNetwork`).

The server compiles the model for a bootstrapper; the client — xehe or a seal-python program
with the same secret key — encodes the image with :meth:`Network.encode_image`, encrypts it at
:attr:`Network.input_level`, and decodes the decrypted result with
:meth:`Network.decode_logits`::

    import numpy as np, xehe, xehe.nn
    from xehe.seal import CKKSEncoder, Decryptor, Encryptor, Evaluator, KeyGenerator

    params = xehe.BootstrappingParameters.n12_insecure()   # INSECURE: tests and examples
    ctx = params.context()
    kg = KeyGenerator(ctx)
    boot = xehe.Bootstrapper(ctx, xehe.BootstrappingKeys.generate(ctx, params, kg.secret_key()))
    calib, _ = xehe.nn.fashion_mnist(256, side=16, train=True)
    net = xehe.nn.Network("models/small-poly.onnx", calib, boot)
    galois = net.galois_keys(boot, kg.secret_key())

    images, labels = xehe.nn.fashion_mnist(4, side=16)
    enc = CKKSEncoder(ctx)
    ct = Encryptor(ctx, kg.create_public_key()).encrypt(enc.encode(net.encode_image(images[0]), boot.output_scale()))
    Evaluator(ctx).mod_switch_to_inplace(ct, net.input_parms_id(ctx))
    out, seconds = net.infer(boot, galois, ct)            # on ct's device (ct.gpu())
    logits = net.decode_logits(enc.decode(Decryptor(ctx, kg.secret_key()).decrypt(out)))
    assert logits.argmax() == net.plain(images[0]).argmax()

Values inside the network are divided by bounds taken from the calibration images (times 1.25):
an image whose values exceed them gives an invalid result (``xehe infer`` reports such images).
"""

import gzip
import os

import numpy as np

from . import _native

__all__ = ["Network", "RecurrentNetwork", "parameters_for", "fashion_mnist", "fashion_mnist_sequences", "DEBIAN_FASHION_MNIST"]

#: Where Debian's ``dataset-fashion-mnist`` installs the data set.
DEBIAN_FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def _f64(x):
    return np.ascontiguousarray(x, dtype=np.float64)


def parameters_for(model, params, relu_sign="fast"):
    """The bootstrapping parameters to compile ``model`` (an ONNX file) with: an insecure preset
    (``n12_insecure()``, 2 user levels) gets the user levels a ReLU model needs with
    ``relu_sign`` (``N12-insecure-levels10`` for ``"fast"``), or a recurrent model's cell
    (``N12-insecure-levels9``); a secure preset comes back as it is.
    ``ValueError`` for a malformed file, ``OSError`` when it cannot be read."""
    return _native.parameters_for(str(model), params, relu_sign)


class _Compiled:
    """What a compiled model (:class:`Network`, :class:`RecurrentNetwork`) gives its client."""

    @property
    def input_level(self):
        """The chain index the client encrypts at (the bootstrapped level)."""
        return self._net.input_level

    @property
    def bootstraps(self):
        """Bootstraps per input (an image; a batch of sequences)."""
        return self._net.bootstraps

    def input_parms_id(self, context):
        """The ``parms_id`` of :attr:`input_level` in ``context`` (xehe's or seal-python's)."""
        data = context.first_context_data()
        while data.chain_index() > self.input_level:
            data = data.next_context_data()
        return data.parms_id()

    def galois_keys(self, bootstrapper, secret_key):
        """Hybrid Galois keys for the linear steps from ``secret_key`` (SEAL's or xehe's)."""
        return self._net.galois_keys(bootstrapper, secret_key)


class Network(_Compiled):
    """An ONNX model calibrated on ``calibration`` (N×C×H×W images) and compiled for
    ``bootstrapper``'s parameters. ``ValueError`` names an unsupported operator and its node,
    a malformed file, or a model too large for the parameters; ``OSError`` a missing file.
    ``relu_sign``: the ReLUs' composite sign, ``"fast"`` (8 levels, one bootstrap a ReLU layer
    at ``N16-dense``, coarse near zero) or ``"precise"`` (15 levels)."""

    def __init__(self, model, calibration, bootstrapper, relu_sign="fast"):
        self._net = _native.Network(str(model), _f64(calibration), bootstrapper, relu_sign)

    def client_upload(self, bootstrapper):
        """What a client uploads for this network with ``bootstrapper``'s keys: ``{"bootstrapping":
        (seeded, in_full), "network": (seeded, in_full)}`` bytes, the keys saved uncompressed
        (seeded: each key's uniform half as its seed), from the format alone."""
        return self._net.client_upload(bootstrapper)

    @property
    def input_shape(self):
        """``(C, H, W)`` of one image."""
        return self._net.input_shape

    @property
    def steps(self):
        """Steps of the encrypted circuit (linear layers, products, ReLUs, bootstraps)."""
        return self._net.steps

    def plain(self, image):
        """The plaintext model's logits for one image (C×H×W): the reference."""
        return np.asarray(self._net.plain(_f64(image)))

    def circuit(self, image):
        """The circuit's plaintext model's logits for one image (C×H×W): ReLU replaced by the
        polynomial the encrypted circuit evaluates (equal to :meth:`plain` without ReLU). The
        decrypted logits approximate these; the classes are compared with :meth:`plain`'s."""
        return np.asarray(self._net.circuit(_f64(image)))

    def encode_image(self, image):
        """The slot vector (N/2 floats) to encode and encrypt for one image (C×H×W)."""
        return np.asarray(self._net.encode_image(_f64(image)))

    def decode_logits(self, slots):
        """The logits from the decrypted and decoded output slots."""
        return np.asarray(self._net.decode_logits([float(v) for v in np.real(np.asarray(slots))]))

    def galois_elements(self, context):
        """Galois elements of the network's linear layers (keys beside the bootstrapping keys)."""
        return self._net.galois_elements(context)

    def infer(self, bootstrapper, galois_keys, encrypted, step_times=False):
        """The network on an encrypted image, where the ciphertext is: ``(ciphertext, seconds)``
        with seconds per kind of step (``linear``, ``products``, ``relu``, ``bootstrap``;
        on a device only with ``step_times``, which synchronizes it after every step),
        ``total`` and ``bootstraps``."""
        return self._net.infer(bootstrapper, galois_keys, encrypted, step_times)


class RecurrentNetwork(_Compiled):
    """An ONNX recurrent model (``nn.LSTM`` or ``nn.GRU`` as ``torch.onnx.export`` writes it)
    calibrated on ``calibration`` (N×T×F sequences) and compiled for ``bootstrapper``'s
    parameters, with up to ``pack`` sequences in a ciphertext (:attr:`batch`). The client
    encrypts one ciphertext a step (:meth:`encode_steps`) at :attr:`input_level`; the server
    runs the cell step after step, one bootstrap refreshing the state a step::

        net = xehe.nn.RecurrentNetwork("models/small-lstm.onnx", calib, boot)
        x, labels = xehe.nn.fashion_mnist_sequences(net.batch, *net.input_shape)
        steps = [encryptor.encrypt(enc.encode(v, boot.output_scale())) for v in net.encode_steps(x)]
        # ... each mod-switched to net.input_parms_id(ctx)
        out, seconds = net.infer(boot, net.galois_keys(boot, sk), steps)
        logits = net.decode_logits(enc.decode(decryptor.decrypt(out)), len(x))

    ``ValueError`` names an unsupported operator and its node, a malformed file, or a model too
    large for the parameters; ``OSError`` a missing file. Sigmoid and tanh are polynomials over
    the calibrated ranges (times 1.25): beyond them the result is not valid."""

    def __init__(self, model, calibration, bootstrapper, pack=32):
        self._net = _native.RecurrentNetwork(str(model), _f64(calibration), bootstrapper, pack)

    @property
    def input_shape(self):
        """``(T, F)``: steps of a sequence, values of a step."""
        return self._net.input_shape

    @property
    def batch(self):
        """Sequences packed in a ciphertext."""
        return self._net.batch

    def plain(self, sequences):
        """The plaintext model's logits of up to :attr:`batch` sequences (N×T×F)."""
        return np.asarray(self._net.plain(_f64(sequences)))

    def circuit(self, sequences):
        """The circuit's plaintext model's logits (sigmoid and tanh by their polynomials): what
        the decrypted logits approximate."""
        return np.asarray(self._net.circuit(_f64(sequences)))

    def encode_steps(self, sequences):
        """The T slot vectors (N/2 floats each) to encode and encrypt for up to :attr:`batch`
        sequences (N×T×F), one a step."""
        return [np.asarray(v) for v in self._net.encode_steps(_f64(sequences))]

    def decode_logits(self, slots, count):
        """The logits of ``count`` sequences from the decrypted and decoded output slots."""
        return np.asarray(self._net.decode_logits([float(v) for v in np.real(np.asarray(slots))], count))

    def infer(self, bootstrapper, galois_keys, steps, step_times=False):
        """The network on one batch's encrypted steps (a list of T ciphertexts), where they
        are: ``(ciphertext, seconds)`` with seconds per kind of step (``linear``, ``products``,
        ``activations``, ``bootstrap``; on a device only with ``step_times``), ``total`` and
        ``bootstraps``."""
        return self._net.infer(bootstrapper, galois_keys, list(steps), step_times)


def fashion_mnist_sequences(count, steps=28, features=28, train=False, directory=None):
    """The first ``count`` Fashion-MNIST pictures as sequences for recurrent models — over 255,
    averaged over (28/steps)×(28/features) blocks, the rows as steps — as ``(count, steps,
    features)`` float64, and their labels (``python/examples/train_rnn.py`` prepares them the
    same way)."""
    d = directory or os.environ.get("XEHE_FASHION_MNIST") or DEBIAN_FASHION_MNIST
    x, y = _idx(d, train, count)
    x = (x.astype(np.float64) / 255.0).reshape(len(x), steps, 28 // steps, features, 28 // features).mean(axis=(2, 4))
    return x, y.astype(np.int64)


def _idx(d, train, count):
    kind = "train" if train else "t10k"
    with gzip.open(os.path.join(d, f"{kind}-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)[:count]
    with gzip.open(os.path.join(d, f"{kind}-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)[:count]
    return x, y


def fashion_mnist(count, side=32, train=False, directory=None):
    """The first ``count`` Fashion-MNIST images as the committed models take them — over 255,
    zero-padded to 32×32, averaged down to ``side`` (32, 16 or 8) — as ``(count, 1, side, side)``
    float64, and their labels, from ``directory``, else ``$XEHE_FASHION_MNIST``, else Debian's
    folder. ``OSError`` without the data set (``apt install dataset-fashion-mnist``)."""
    d = directory or os.environ.get("XEHE_FASHION_MNIST") or DEBIAN_FASHION_MNIST
    x, y = _idx(d, train, count)
    x = np.pad(x.astype(np.float64) / 255.0, ((0, 0), (2, 2), (2, 2)))
    k = 32 // side
    x = x.reshape(len(x), side, k, side, k).mean(axis=(2, 4))
    return x.reshape(len(x), 1, side, side), y.astype(np.int64)
