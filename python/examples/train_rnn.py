"""Train the recurrent networks of xehe's encrypted inference on sequential Fashion-MNIST (each
picture read row by row: a sequence of T steps of F pixels) and export them to ONNX, with a
model card and reference logits.

Networks (``--models``, comma-separated):

* ``small-lstm``: the picture averaged down to 7×7 (7 steps of 7 features), ``nn.LSTM`` with 8
  hidden units, ``batch_first=True``, the last step's output ``out[:, -1, :]``, dense 8→10. The
  CI network of ``xehe infer --sequence``.
* ``small-gru``: the same pictures, two layers of ``nn.GRU`` with 8 hidden units,
  ``batch_first=False`` (the model transposes its ``N×T×F`` input), the last layer's final
  hidden state ``h_n[-1]``, dense 8→10.
* ``lstm128``: 28 steps of 28 pixels, ``nn.LSTM`` with 128 hidden units, the last step's
  output, dense 128→10 (TensorFHE's LSTM size).

Pixels are ``value / 255`` in [0, 1]; the pooled picture's rows are the steps. Every model
takes ``N×T×F`` float32 sequences (``xehe infer --input X.npy`` reads the same shape).

Writes, per network, to ``--out``: ``NAME.onnx`` (opset 17, ``torch.onnx.export``'s
TorchScript exporter: one LSTM or GRU node per layer), ``NAME.json`` (the model card) and
``NAME.reference.npy`` (float32 logits of the first 16 test sequences from onnxruntime).

Run where PyTorch, onnx and onnxruntime are installed (the small networks train in seconds on
a CPU; ``lstm128`` wants a GPU)::

    python3 python/examples/train_rnn.py --data /usr/share/datasets/fashion-mnist --out models
"""
import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from train_cnn import export, finish_card, load_idx


def sequences(x, steps, features):
    """uint8 pictures (n, 1, 28, 28) to float32 sequences (n, steps, features): pixel/255,
    averaged over (28/steps)×(28/features) blocks, rows as steps. ``xehe infer --data
    fashion-mnist --sequence`` prepares the pictures the same way."""
    x = torch.tensor(x, dtype=torch.float32) / 255.0
    x = F.avg_pool2d(x, (28 // steps, 28 // features))
    return x[:, 0]


class LastStep(nn.Module):
    """An LSTM (``batch_first``) and a dense layer on the last step's output."""

    def __init__(self, features, hidden):
        super().__init__()
        self.rnn = nn.LSTM(features, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 10)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])


class FinalHidden(nn.Module):
    """A two-layer GRU (time first) and a dense layer on the last layer's final hidden state."""

    def __init__(self, features, hidden):
        super().__init__()
        self.rnn = nn.GRU(features, hidden, num_layers=2)
        self.fc = nn.Linear(hidden, 10)

    def forward(self, x):
        _, h = self.rnn(x.transpose(0, 1))
        return self.fc(h[-1])


# name: (model, steps, features, epochs, learning rate, architecture)
MODELS = {
    "small-lstm": (lambda: LastStep(7, 8), 7, 7, 8, 1e-2, "7 steps x 7 -> LSTM(8), batch_first, out[:, -1] -> dense(8->10)"),
    "small-gru": (lambda: FinalHidden(7, 8), 7, 7, 8, 1e-2, "7 steps x 7 -> GRU(8) x 2 layers, time first, h_n[-1] -> dense(8->10)"),
    "lstm128": (lambda: LastStep(28, 128), 28, 28, 20, 2e-3, "28 steps x 28 -> LSTM(128), batch_first, out[:, -1] -> dense(128->10)"),
}


def evaluate(model, x, y, batch=1000):
    model.eval()
    with torch.no_grad():
        return sum((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item() for i in range(0, len(x), batch)) / len(x)


def train(name, args, device):
    make, steps, features, epochs, lr, arch = MODELS[name]
    epochs = args.epochs or epochs
    torch.manual_seed(args.seed)
    xtr, ytr = load_idx(args.data, "train")
    xte, yte = load_idx(args.data, "t10k")
    xtr, xte = sequences(xtr, steps, features).to(device), sequences(xte, steps, features).to(device)
    ytr, yte = torch.tensor(ytr, dtype=torch.long, device=device), torch.tensor(yte, dtype=torch.long, device=device)
    model = make().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    total = epochs * ((len(xtr) + args.batch - 1) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, pct_start=0.15)
    t0 = time.time()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr), device=device)
        for i in range(0, len(xtr), args.batch):
            idx = perm[i:i + args.batch]
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
        print(f"{name}: epoch {epoch + 1}/{epochs}, loss {loss.item():.3f}, test accuracy {evaluate(model, xte, yte):.4f}, {time.time() - t0:.0f} s", flush=True)
    train_time = time.time() - t0
    acc = evaluate(model, xte, yte)
    model = model.cpu().eval()
    path = os.path.join(args.out, f"{name}.onnx")
    export(model, torch.zeros(2, steps, features), path, "sequence", 17)
    card = {"name": name, "architecture": arch, "input": [steps, features],
            "preprocessing": "pixel/255" + ("" if steps == 28 else f", {28 // steps}x{28 // features} averages -> {steps}x{features}") + ", rows as steps",
            "parameters": sum(p.numel() for p in model.parameters()),
            "test_accuracy_pytorch": acc, "epochs": epochs, "batch": args.batch,
            "optimizer": f"Adam, one-cycle max lr {lr}, gradient norm clipped to 1",
            "train_seconds": round(train_time, 1), "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
            "torch": torch.__version__, "onnx_bytes": os.path.getsize(path)}
    finish_card(card, path, "sequence", xte, yte, args.out)


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
    for name in args.models.split(","):
        train(name, args, device)


if __name__ == "__main__":
    main()
