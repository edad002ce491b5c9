"""Encrypted logistic-regression inference on the Wisconsin Diagnostic Breast Cancer data set,
from Python: the job of `xehe demo` (src/apps/demo/), step for step, on xehe's Python API.

1. Plaintext (numpy): standardize with the training mean and standard deviation, split 80/20
   with the same fixed-seed shuffle as `xehe demo`, train logistic regression by full-batch
   gradient descent, scale the model so every training score lies in [-6, 6].
2. Client: pack the held-out samples 32 slots each (30 features, then zeros), encrypt under
   CKKS N = 8192, coeff_modulus [50, 35, 35, 35, 50], scale 2^35.
3. Server (the GPU when there is one: `.gpu()`): multiply_plain by the weights, rescale, then
   rotate-and-add by 16, 8, 4, 2, 1 slots so the first slot of each block holds the dot product,
   add the bias; then the degree-3 sigmoid approximation 0.5 + 0.15012 z - 0.001593 z^3.
4. Client: decrypt, decode, read the first slot of every block.

    python examples/wdbc_demo.py [--device cpu|cuda|auto] [--data FILE.csv] [--json]

Exits non-zero if an encrypted prediction differs from the plaintext model's.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

import xehe

BLOCK = 32  # slots per sample: 30 features padded to a power of two
SIGMOID3 = (0.5, 0.15012, -0.001593)  # Kim et al. 2018, least squares on [-8, 8]
SCORE_BOUND = 6.0
DATA = Path(__file__).resolve().parents[2] / "data" / "breast_cancer.csv"


def load_csv(path):
    """scikit-learn's layout: a header `samples,features,names...`, rows of features + label."""
    with open(path) as f:
        header = f.readline().split(",")
        samples, features = int(header[0]), int(header[1])
        rows = np.loadtxt(f, delimiter=",", ndmin=2)
    if rows.shape != (samples, features + 1):
        raise ValueError(f"{path}: header says {samples}x{features}, the file has {rows.shape}")
    return rows[:, :features], rows[:, features].astype(np.uint8)


def split(n, fraction, seed):
    """The deterministic shuffle of `xehe demo` (Fisher-Yates over xorshift64)."""
    mask = (1 << 64) - 1
    state = seed | 1

    def nxt():
        nonlocal state
        state ^= (state << 13) & mask
        state ^= state >> 7
        state ^= (state << 17) & mask
        return state

    idx = list(range(n))
    for i in range(n - 1, 0, -1):
        j = nxt() % (i + 1)
        idx[i], idx[j] = idx[j], idx[i]
    held_out = math.floor(n * fraction + 0.5)
    return idx[: n - held_out], idx[n - held_out :]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def sigmoid3(z):
    return SIGMOID3[0] + SIGMOID3[1] * z + SIGMOID3[2] * z**3


def train(x, y, epochs=1000, rate=0.5, l2=1e-3):
    """Full-batch gradient descent on the log loss with an L2 penalty on the weights."""
    w = np.zeros(x.shape[1])
    b = 0.0
    n = len(y)
    for _ in range(epochs):
        err = sigmoid(x @ w + b) - y
        w -= rate * (x.T @ err / n + l2 * w)
        b -= rate * err.sum() / n
    return w, b


def use_gpu(device):
    """Whether to mark ciphertexts with .gpu(): cuda requires a GPU, auto falls back to the CPU."""
    if device == "cpu":
        return False
    if device == "cuda":
        xehe.device.default_queue()  # raises xehe.errors.DeviceError when there is none
        return True
    try:
        xehe.device.default_queue()
        return True
    except xehe.errors.DeviceError as e:
        print(f"xehe: no GPU usable ({e}); running on the CPU backend", file=sys.stderr)
        return False


def polynomial(ctx, ev, encoder, z, relin_keys):
    """c0 + c1 z + c3 z^3 with three levels, as `xehe demo` evaluates it."""
    c0, c1, c3 = SIGMOID3
    pid = z.parms_id()
    q1 = ctx.get_context_data(pid).parms().coeff_modulus()[-1].value()
    c3z = ev.rescale_to_next(ev.multiply_plain(z, encoder.encode(c3, pid, 2.0**35)))
    z2 = ev.rescale_to_next(ev.relinearize(ev.square(z), relin_keys))
    cube = ev.rescale_to_next(ev.relinearize(ev.multiply(z2, c3z), relin_keys))
    # c1 z at the scale of the cube: the constant's scale makes the scales agree after one
    # rescale; then one more level down.
    s1 = cube.scale() * q1 / z.scale()
    linear = ev.mod_switch_to_next(ev.rescale_to_next(ev.multiply_plain(z, encoder.encode(c1, pid, s1))))
    if abs(linear.scale() - cube.scale()) / cube.scale() > 1e-9:
        raise ValueError(f"scales {linear.scale()} and {cube.scale()} differ")
    linear.scale(cube.scale())
    ev.add_inplace(cube, linear)
    ev.add_plain_inplace(cube, encoder.encode(c0, cube.parms_id(), cube.scale()))
    return cube


def sync(cts):
    for ct in cts:
        q = ct.queue()
        if q is not None:
            q.synchronize()


def run(device="auto", data=DATA):
    stages = []
    clock = [time.perf_counter()]

    def stage(name):
        now = time.perf_counter()
        stages.append((name, (now - clock[0]) * 1e3))
        clock[0] = now

    # 1. plaintext: data, split, standardize, train.
    features, labels = load_csv(data)
    train_idx, test_idx = split(len(labels), 0.2, 0x5EED_2024)
    raw = features[train_idx]
    mean = raw.mean(axis=0)
    std = raw.std(axis=0)
    std[std == 0] = 1.0
    x_train, y_train = (raw - mean) / std, labels[train_idx]
    x_test, y_test = (features[test_idx] - mean) / std, labels[test_idx]
    w, b = train(x_train, y_train)
    model_scale = min(SCORE_BOUND / np.abs(x_train @ w + b).max(), 1.0)
    ws, bs = w * model_scale, b * model_scale
    d = len(w)
    stage("train (plaintext)")

    # 2. keys and encryption (the client).
    n = 8192
    parms = xehe.EncryptionParameters(xehe.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(xehe.CoeffModulus.Create(n, [50, 35, 35, 35, 50]))
    ctx = xehe.SEALContext(parms)
    scale = 2.0**35
    keygen = xehe.KeyGenerator(ctx)
    public_key = keygen.create_public_key()
    relin_keys = keygen.create_relin_keys()
    steps = [1 << k for k in range(int(math.log2(BLOCK)))]
    galois_keys = keygen.create_galois_keys(steps)
    encoder = xehe.CKKSEncoder(ctx)
    encryptor = xehe.Encryptor(ctx, public_key)
    decryptor = xehe.Decryptor(ctx, keygen.secret_key())
    ev = xehe.Evaluator(ctx)
    stage("keys (public, relin, Galois 1..16)")

    on_gpu = use_gpu(device)
    device_name = "cpu"
    if on_gpu:
        devices = [dev for bk in xehe.device.backends() if bk["available"] and bk["backend"] != "cpu" for dev in bk["devices"]]
        device_name = devices[0]["name"] if devices else "gpu"
    slots = encoder.slot_count()
    per_ct = slots // BLOCK
    cts = []
    for start in range(0, len(x_test), per_ct):
        chunk = x_test[start : start + per_ct]
        packed = np.zeros(slots)
        packed.reshape(-1, BLOCK)[: len(chunk), :d] = chunk
        ct = encryptor.encrypt(encoder.encode(packed, ctx.first_parms_id(), scale))
        if on_gpu:
            ct.gpu()
        cts.append(ct)
    stage("encode + encrypt")

    # 3. the server: linear layer, then the polynomial.
    weights = np.zeros(slots)
    weights.reshape(-1, BLOCK)[:, :d] = ws
    w_plain = encoder.encode(weights, ctx.first_parms_id(), scale)
    scores = []
    for ct in cts:
        z = ev.rescale_to_next(ev.multiply_plain(ct, w_plain))
        for step in reversed(steps):
            ev.add_inplace(z, ev.rotate_vector(z, step, galois_keys))
        ev.add_plain_inplace(z, encoder.encode(bs, z.parms_id(), z.scale()))
        scores.append(z)
    sync(scores)
    stage("linear layer (multiply_plain, 5 rotations)")
    outs = [polynomial(ctx, ev, encoder, z, relin_keys) for z in scores]
    sync(outs)
    stage("sigmoid (degree 3)")

    # 4. the client: decrypt, decode.
    encrypted_scores = np.concatenate(
        [encoder.decode(decryptor.decrypt(out)).reshape(-1, BLOCK)[:per_ct, 0] for out in outs]
    )[: len(x_test)]
    stage("decrypt + decode")

    plain_scores = x_test @ w + b
    plain_pred = (sigmoid(plain_scores) >= 0.5).astype(np.uint8)
    enc_pred = (encrypted_scores >= 0.5).astype(np.uint8)
    return {
        "device": device_name,
        "train_samples": len(train_idx),
        "test_samples": len(test_idx),
        "plaintext_accuracy": float((plain_pred == y_test).mean()),
        "encrypted_accuracy": float((enc_pred == y_test).mean()),
        "predictions_equal": int((plain_pred == enc_pred).sum()),
        "max_score_error": float(np.abs(encrypted_scores - sigmoid3(plain_scores * model_scale)).max()),
        "max_approximation_error": float(
            np.abs(sigmoid(plain_scores * model_scale) - sigmoid3(plain_scores * model_scale)).max()
        ),
        "model_scale": float(model_scale),
        "stages": stages,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=["cpu", "cuda", "auto"], default=os.environ.get("XEHE_DEMO_DEVICE", "auto"))
    ap.add_argument("--data", type=Path, default=DATA, help="a CSV in scikit-learn's layout")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    r = run(args.device, args.data)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"Wisconsin Diagnostic Breast Cancer: {r['train_samples']} training, "
              f"{r['test_samples']} held-out samples, 30 features")
        print(f"device: {r['device']}")
        print(f"{'stage':<44} {'ms':>10}")
        for name, ms in r["stages"]:
            print(f"{name:<44} {ms:>10.1f}")
        print(f"plaintext accuracy:  {r['plaintext_accuracy'] * 100:.2f} %")
        print(f"encrypted accuracy:  {r['encrypted_accuracy'] * 100:.2f} %")
        print(f"predictions equal:   {r['predictions_equal']} / {r['test_samples']}")
        print(f"largest score error: {r['max_score_error']:.3e} (decrypted vs the same polynomial on doubles)")
        print(f"sigmoid approximation error: {r['max_approximation_error']:.3e} (model scaled by {r['model_scale']:.4f})")
    if r["predictions_equal"] != r["test_samples"]:
        print(f"{r['test_samples'] - r['predictions_equal']} encrypted predictions differ from the plaintext ones",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
