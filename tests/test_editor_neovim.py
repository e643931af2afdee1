"""The language server in a real editor: Neovim's own LSP client (headless)
attaches it to a vLLM-style file, shows the diagnostic, and its quick fix,
applied by Neovim, gives the file `fix` gives. `.ci/run` installs Neovim."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

SCRIPT = Path(__file__).parent / "editors" / "neovim_attach.lua"
WORKER = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "\n\ndef register(layer_spec):\n"
    "    is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    "    return is_mla_region\n"
)


def test_neovim_shows_the_finding_and_applies_the_fix(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed and could not be (.ci/run installs it)")
    editor, reference = tmp_path / "editor", tmp_path / "reference"
    for folder in (editor, reference):
        folder.mkdir()
        (folder / "worker.py").write_text(WORKER)
    report = tmp_path / "report.txt"
    setup = (
        f"lua _G.arg_python='{sys.executable}'; _G.arg_file='{editor / 'worker.py'}'; "
        f"_G.arg_out='{report}'"
    )
    out = subprocess.run(
        [nvim, "--headless", "--clean", "-c", setup, "-c", f"luafile {SCRIPT}"],
        capture_output=True, text=True, timeout=120, cwd=editor,
    )  # fmt: skip
    assert report.exists(), out.stdout + out.stderr
    assert report.read_text().splitlines() == [
        "5:44 VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec",
        "action: Add SlidingWindowMLASpec (VSL001) - unsafe: changes what the check "
        "admits",
        "action: Keep: add `# noqa: VSL001`",
    ]
    run_cli("fix", "--unsafe-fixes", "--no-cache", "worker.py", cwd=reference)
    assert (editor / "worker.py").read_text() == (reference / "worker.py").read_text()
    assert (
        "(MLAAttentionSpec, SlidingWindowMLASpec)" in (editor / "worker.py").read_text()
    )
