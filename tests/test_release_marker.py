"""Only a test marked ``release`` may fetch a real release: mutation runs
leave those tests out by their marker (setup.cfg), so an unmarked one would
slip a minute-long download into every surviving mutant's run."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

TESTS = """
import pytest

from tests.conftest import fetch_release


def test_unmarked():
    fetch_release("vllm", "0.0.0-never-fetched")


@pytest.mark.release
def test_marked(monkeypatch):
    import tests.conftest

    monkeypatch.setattr(tests.conftest, "fetch_sources", lambda spec: spec)
    assert fetch_release("vllm", "0.34.0") == "vllm==0.34.0"
"""


def test_an_unmarked_test_that_fetches_a_release_fails_before_fetching(tmp_path):
    (tmp_path / "test_fetching.py").write_text(TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-q",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-o", "addopts=",
         "-o", "markers=release: fetched", str(tmp_path / "test_fetching.py")],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert "1 failed, 1 passed" in done.stdout, done.stdout
    assert (
        "Failed: test_fetching.py::test_unmarked fetches a release: mark it release"
        in done.stdout
    ), done.stdout
