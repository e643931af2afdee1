from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vllm_spec_lint.analysis import analyze_source
from vllm_spec_lint.config import Config

REPO = Path(__file__).resolve().parent.parent
FETCH_VLLM = REPO.parent / "shared" / "tools" / "fetch-vllm"


def findings(source: str, *, module: str | None = None, config: Config | None = None):
    """(code, row, column) of every finding in a dedented source."""
    result = analyze_source(
        textwrap.dedent(source), "example.py", config or Config(), module_name=module
    )
    return [(f.code, *f.location) for f in result.findings]


def codes(source: str, **kwargs) -> list[str]:
    return [code for code, _, _ in findings(source, **kwargs)]


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "vllm_spec_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=600,
    )


def fetch_vllm(version: str) -> Path:
    """The unpacked sources of a vLLM release; skips when it cannot be had."""
    if not FETCH_VLLM.exists():
        pytest.skip(f"{FETCH_VLLM} is missing: cannot fetch vLLM {version}")
    try:
        out = subprocess.run(
            ["bash", str(FETCH_VLLM), version],
            capture_output=True,
            text=True,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"downloading vLLM {version} timed out")
    if out.returncode != 0:
        pytest.skip(f"cannot download vLLM {version}: {out.stderr.strip()[-500:]}")
    return Path(out.stdout.strip().splitlines()[-1])
