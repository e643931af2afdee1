"""The language server in a real editor: Neovim (headless), set up with the
snippet docs/editors.md gives for its version, as written there, attaches it
to a vLLM-style file, shows the diagnostic, and its quick fix, applied by
Neovim, gives the file `fix` gives. `.ci/run` installs Neovim."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

SCRIPT = Path(__file__).parent / "editors" / "neovim_attach.lua"
WORKER = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "\n\ndef register(layer_spec):\n"
    "    is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    "    return is_mla_region\n"
)


def neovim_version(nvim: str) -> tuple[int, int]:
    first = subprocess.run(
        [nvim, "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]  # "NVIM v0.7.2"
    major, minor = re.match(r"NVIM v(\d+)\.(\d+)", first).groups()
    return int(major), int(minor)


def docs_snippet(version: tuple[int, int]) -> str:
    """The Lua block docs/editors.md gives for this Neovim: the one after
    "Neovim 0.11 and later" from 0.11 on, else the one after "Neovim 0.7 to
    0.10"."""
    text = (REPO / "docs" / "editors.md").read_text()
    heading = "Neovim 0.11 and later" if version >= (0, 11) else "Neovim 0.7 to 0.10"
    after = text[text.index(heading) :]
    return re.search(r"```lua\n(.*?)```", after, re.S).group(1)


def test_neovim_shows_the_finding_and_applies_the_fix(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed and could not be (.ci/run installs it)")
    editor, reference = tmp_path / "editor", tmp_path / "reference"
    for folder in (editor, reference):
        folder.mkdir()
        (folder / "worker.py").write_text(WORKER)
    (editor / "pyproject.toml").write_text("[project]\nname = 'worker'\n")
    snippet = tmp_path / "setup.lua"
    snippet.write_text(docs_snippet(neovim_version(nvim)))
    report = tmp_path / "report.txt"
    setup = (
        f"lua _G.arg_setup='{snippet}'; _G.arg_file='{editor / 'worker.py'}'; "
        f"_G.arg_out='{report}'"
    )
    # The snippet runs `vllm-spec-lint`: this environment's, found on PATH.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
    out = subprocess.run(
        [nvim, "--headless", "--clean", "-c", setup, "-c", f"luafile {SCRIPT}"],
        capture_output=True, text=True, timeout=120, cwd=editor,
        env={**os.environ, "PATH": path},
    )  # fmt: skip
    assert report.exists(), out.stdout + out.stderr
    assert report.read_text().splitlines() == [
        "client: vllm-spec-lint",
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
