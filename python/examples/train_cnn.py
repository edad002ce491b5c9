"""Train the convolutional networks of xehe's encrypted inference on Fashion-MNIST and export
them to ONNX (opset 13), with a model card and reference logits.

Networks (``--models``, comma-separated):

* ``small-poly``: 16×16 input (the 28×28 image padded to 32×32, then 2×2 averages), conv 3×3
  1→4, batch norm, ``a·x² + b·x + c``, 2×2 average pool, conv 3×3 4→8, batch norm, quadratic,
  2×2 average pool, dense 128→10. The CI network of ``xehe infer``.
* ``small-relu``: the same with ReLU.
* ``resnet20-relu``: ResNet-20, CIFAR variant (He et al. 2016, §4.2): 3×3 conv 1→16, three
  stages of three basic blocks (16, 32, 64 channels; stride 2 entering stages 2 and 3, 1×1
  convolution + batch norm on the shortcut there), global average pool, dense 64→10, ReLU.
  Input 32×32 (the image padded by 2 on each side).
* ``resnet20-poly``: the same with the trained quadratic ``a·x² + b·x + c`` (one coefficient
  triple per activation) in place of ReLU.

Pixels are ``value / 255`` in [0, 1], not normalized (the first batch norm does it).

Writes, per network, to ``--out``: ``NAME.onnx``, ``NAME.json`` (the model card: architecture,
parameters, test accuracy by PyTorch and by onnxruntime on the 10 000 test images, training
settings and time, versions) and ``NAME.reference.npy`` (float32 logits of the first 16 test
images from onnxruntime: the plaintext reference xehe's own evaluator is checked against).

Run on a GPU machine (PyTorch, onnx and onnxruntime installed)::

    python3 python/examples/train_cnn.py --data /usr/share/datasets/fashion-mnist --out models
"""
import argparse
import gzip
import inspect
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_idx(directory, kind):
    """Images (n, 1, 28, 28) uint8 and labels (n,) of ``kind`` ('train' or 't10k')."""
    with gzip.open(os.path.join(directory, f"{kind}-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(directory, f"{kind}-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return x, y


def prepare(x, side):
    """uint8 images to float32 in [0, 1], padded to 32×32, averaged down to ``side``×``side``.
    ``xehe infer --data fashion-mnist`` prepares the images the same way."""
    x = F.pad(torch.tensor(x, dtype=torch.float32) / 255.0, (2, 2, 2, 2))
    return F.avg_pool2d(x, 32 // side) if side != 32 else x


class Quadratic(nn.Module):
    """``a·x² + b·x + c`` with trained scalars, exported as Mul and Add nodes."""

    def __init__(self, a=0.1, b=0.5):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(a))
        self.b = nn.Parameter(torch.tensor(b))
        self.c = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        return self.a * (x * x) + self.b * x + self.c


def activation(kind):
    """ReLU, the quadratic of the small network, or the deep networks' quadratic: it starts as
    the identity (a = 0, b = 1), because 19 squares from the start make ResNet-20's activations
    explode and its training collapse (measured: 10 % accuracy)."""
    return {"relu": nn.ReLU, "poly": Quadratic, "poly-deep": lambda: Quadratic(0.0, 1.0)}[kind]()


class SmallCnn(nn.Module):
    def __init__(self, act="poly"):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), activation(act), nn.AvgPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), activation(act), nn.AvgPool2d(2),
            nn.Flatten(), nn.Linear(8 * 4 * 4, 10))

    def forward(self, x):
        return self.body(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride, act):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.act1 = activation(act)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.act2 = activation(act)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.act1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.act2(y + self.shortcut(x))


class ResNet20(nn.Module):
    def __init__(self, act="relu"):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), activation(act))
        blocks, cin = [], 16
        for cout, stride in [(16, 1), (32, 2), (64, 2)]:
            for i in range(3):
                blocks.append(BasicBlock(cin, cout, stride if i == 0 else 1, act))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MODELS = {
    # name: (constructor, input side, epochs, learning rate, architecture line)
    "small-poly": (lambda: SmallCnn("poly"), 16, 20, 0.05,
                   "16x16x1 -> conv3x3(4)+BN -> a*x^2+b*x+c -> avgpool2 -> conv3x3(8)+BN -> a*x^2+b*x+c -> avgpool2 -> dense(128->10)"),
    "small-relu": (lambda: SmallCnn("relu"), 16, 20, 0.05,
                   "16x16x1 -> conv3x3(4)+BN -> ReLU -> avgpool2 -> conv3x3(8)+BN -> ReLU -> avgpool2 -> dense(128->10)"),
    "resnet20-relu": (lambda: ResNet20("relu"), 32, 30, 0.1,
                      "ResNet-20 (CIFAR variant, He et al. 2016): 32x32x1, 3 stages x 3 basic blocks, 16/32/64 channels, 1x1 conv shortcuts, ReLU"),
    "resnet20-poly": (lambda: ResNet20("poly-deep"), 32, 30, 0.02,
                      "ResNet-20 as resnet20-relu with a trained a*x^2+b*x+c in place of every ReLU"),
}


def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def train(name, args, device):
    make, side, epochs, lr, arch = MODELS[name]
    epochs = args.epochs or epochs
    torch.manual_seed(args.seed)
    xtr, ytr = load_idx(args.data, "train")
    xte, yte = load_idx(args.data, "t10k")
    xtr, xte = prepare(xtr, side).to(device), prepare(xte, side).to(device)
    ytr, yte = torch.tensor(ytr, dtype=torch.long, device=device), torch.tensor(yte, dtype=torch.long, device=device)
    model = make().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    steps = epochs * ((len(xtr) + args.batch - 1) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    t0 = time.time()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr), device=device)
        for i in range(0, len(xtr), args.batch):
            idx = perm[i:i + args.batch]
            xb = xtr[idx]
            if side == 32:  # random shifts by up to 2 pixels and horizontal flips
                dx, dy = np.random.randint(-2, 3, 2)
                xb = torch.roll(xb, (int(dy), int(dx)), (2, 3))
                if np.random.rand() < 0.5:
                    xb = xb.flip(3)
            loss = F.cross_entropy(model(xb), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
        if epoch % 5 == 4 or epoch == epochs - 1:
            print(f"{name}: epoch {epoch + 1}/{epochs}, loss {loss.item():.3f}, test accuracy {evaluate(model, xte, yte):.4f}, {time.time() - t0:.0f} s", flush=True)
    train_time = time.time() - t0
    acc = evaluate(model, xte, yte)
    model = model.cpu().eval()
    path = os.path.join(args.out, f"{name}.onnx")
    export(model, torch.zeros(1, 1, side, side), path, "image", 13)
    card = {"name": name, "architecture": arch, "input": [1, side, side],
            "preprocessing": "pixel/255, zero-padded 28x28 -> 32x32" + ("" if side == 32 else f", {32 // side}x{32 // side} averages -> {side}x{side}"),
            "parameters": sum(p.numel() for p in model.parameters()),
            "test_accuracy_pytorch": acc, "epochs": epochs, "batch": args.batch, "optimizer": f"SGD nesterov 0.9, one-cycle max lr {lr}, weight decay 5e-4, gradient norm clipped to 1",
            "augmentation": "random shifts of up to 2 pixels, horizontal flips" if side == 32 else "none",
            "train_seconds": round(train_time, 1), "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
            "torch": torch.__version__, "onnx_bytes": os.path.getsize(path)}
    finish_card(card, path, "image", xte, yte, args.out)


def export(model, example, path, input_name, opset):
    """``model`` to ONNX at ``path`` with the TorchScript exporter (``dynamo=False``: one node
    per layer, as xehe reads them), the batch dimension dynamic."""
    kwargs = dict(opset_version=opset, input_names=[input_name], output_names=["logits"],
                  dynamic_axes={input_name: {0: "batch"}, "logits": {0: "batch"}})
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, example, path, **kwargs)


def finish_card(card, path, input_name, xte, yte, out):
    """Add onnxruntime's test accuracy to ``card`` and write ``NAME.reference.npy`` (the first
    16 test inputs' logits) and ``NAME.json`` beside the model."""
    name = card["name"]
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        xs = xte.cpu().numpy()
        logits = np.concatenate([sess.run(None, {input_name: xs[i:i + 1000]})[0] for i in range(0, len(xs), 1000)])
        card["test_accuracy_onnxruntime"] = float((logits.argmax(1) == yte.cpu().numpy()).mean())
        card["onnxruntime"] = ort.__version__
        np.save(os.path.join(out, f"{name}.reference.npy"), logits[:16].astype(np.float32))
    except ImportError:
        print("onnxruntime is not installed: no reference logits")
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(card, f, indent=1)
    print(json.dumps(card), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist", help="directory of the IDX .gz files")
    ap.add_argument("--out", default="models")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--epochs", type=int, default=0, help="override every network's epochs")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True
    for name in args.models.split(","):
        train(name, args, device)


if __name__ == "__main__":
    main()
