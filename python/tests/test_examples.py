"""The examples run: ckks_basics.py on xehe and, with only its import line changed, on
seal-python (same output up to noise); wdbc_demo.py gives the plaintext model's prediction on
every held-out sample."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
IMPORT_LINE = "from xehe.seal import *  # seal-python: from seal import *"


def _run(path, *args):
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    return out.stdout


def _numbers(text, label):
    line = next(l for l in text.splitlines() if l.startswith(label + ":"))
    return [float(v) for v in re.findall(r"-?\d+\.\d+", line)]


def test_ckks_basics_runs_on_xehe_and_on_seal_python_with_only_the_import_changed(tmp_path):
    source = (EXAMPLES / "ckks_basics.py").read_text()
    assert source.count(IMPORT_LINE) == 1
    seal_source = source.replace(IMPORT_LINE, "from seal import *")
    changed = [(a, b) for a, b in zip(source.splitlines(), seal_source.splitlines()) if a != b]
    assert changed == [(IMPORT_LINE, "from seal import *")]
    seal_version = tmp_path / "ckks_basics_seal.py"
    seal_version.write_text(seal_source)
    on_xehe = _run(EXAMPLES / "ckks_basics.py")
    on_seal = _run(seal_version)
    assert _numbers(on_xehe, "expected") == _numbers(on_seal, "expected")
    for a, b in zip(_numbers(on_xehe, "computed"), _numbers(on_seal, "computed")):
        assert abs(a - b) < 1e-4
    # Everything but the noisy digits is identical.
    strip = lambda t: [l for l in t.splitlines() if not l.startswith(("computed", "max abs error"))]
    assert strip(on_xehe) == strip(on_seal)


def test_wdbc_demo_predictions_equal_plaintext():
    r = json.loads(_run(EXAMPLES / "wdbc_demo.py", "--json", "--device", os.environ.get("XEHE_DEMO_DEVICE", "auto")))
    assert (r["train_samples"], r["test_samples"]) == (455, 114)
    assert r["predictions_equal"] == r["test_samples"]
    assert r["plaintext_accuracy"] == r["encrypted_accuracy"] > 0.9
    assert r["max_score_error"] < 1e-3
    assert len(r["stages"]) == 6
