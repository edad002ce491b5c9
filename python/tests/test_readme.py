"""The Python examples of the READMEs run as written (the main README's five lines and
python/README.md's seal-python example)."""

import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _blocks(path, after):
    text = path.read_text()
    start = text.index(after)
    return re.findall(r"```python(?:,xehe)?\n(.*?)```", text[start:], re.S)


@pytest.mark.parametrize("readme, after", [("README.md", "## Python"), ("python/README.md", "## From seal-python")])
def test_readme_example_runs(readme, after):
    path = ROOT / readme
    if not path.exists():
        pytest.skip(f"{readme} is not beside the tests (installed elsewhere)")
    code = _blocks(path, after)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(path), "exec"), {})
    values = [float(v) for v in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", out.getvalue())]
    assert values, out.getvalue()
    expected = [2.0, 4.0] if readme == "README.md" else [1.0, 4.0, 9.0]
    assert np.allclose(values, expected, atol=1e-4), out.getvalue()


def test_encrypted_inference_page_runs(tmp_path, monkeypatch):
    """docs/guide/encrypted-inference.md's Python blocks, in order in one namespace (an xehe
    client, then seal-python as the client)."""
    page = ROOT / "docs" / "guide" / "encrypted-inference.md"
    if not page.exists():
        pytest.skip("the guide is not beside the tests (installed elsewhere)")
    import xehe.nn
    if not Path(os.environ.get("XEHE_FASHION_MNIST") or xehe.nn.DEBIAN_FASHION_MNIST, "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)")
    pytest.importorskip("seal")
    (tmp_path / "models").symlink_to(ROOT / "models")
    monkeypatch.chdir(tmp_path)
    ns = {}
    for code in _blocks(page, "## From Python"):
        exec(compile(code, str(page), "exec"), ns)
    assert ns["logits"].argmax() == ns["net"].plain(ns["images"][0]).argmax()
