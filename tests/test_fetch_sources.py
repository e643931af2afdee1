"""The suite's own downloader of real releases: it works from any clone, says
when the package index cannot be reached, and CI's switch turns that skip
into a failure."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from scripts import fetch_sources as fs
from tests.conftest import REPO, skip_unreachable

# A package index nobody listens on (loopback, closed port), and no other
# source of packages: pip's configured mirrors and wheel folders are off.
DEAD_INDEX = {
    "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
    "PIP_EXTRA_INDEX_URL": "",
    "PIP_FIND_LINKS": "",
    "PIP_CONFIG_FILE": os.devnull,
    "PIP_RETRIES": "0",
    "PIP_TIMEOUT": "2",
    "PIP_NO_CACHE_DIR": "1",
}


def test_an_unreachable_index_is_told_apart(tmp_path, monkeypatch):
    for key, value in DEAD_INDEX.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("VSL_SOURCES", str(tmp_path))
    with pytest.raises(fs.IndexUnreachable, match="cannot be reached for vllm==0.24.0"):
        fs.fetch_sources("vllm==0.24.0")
    # Nothing half-unpacked is left: only the lock that serialises fetches.
    assert [p.name for p in tmp_path.iterdir()] == [".vllm-0.24.0.lock"]


def test_a_version_that_does_not_exist_is_an_error_not_a_skip(tmp_path, monkeypatch):
    monkeypatch.setenv("VSL_SOURCES", str(tmp_path))
    try:
        fs.fetch_sources("vllm-spec-lint-no-such-package==0.0.1")
    except fs.IndexUnreachable as e:
        skip_unreachable(e)
    except fs.FetchError as e:
        assert "pip cannot download vllm-spec-lint-no-such-package==0.0.1" in str(e)
    else:
        pytest.fail("a package that does not exist was fetched")


def test_a_requirement_needs_an_exact_version():
    with pytest.raises(fs.FetchError, match="NAME==VERSION"):
        fs.fetch_sources("vllm")


RELEASE_TEST = "tests/test_codemods.py::test_check_flags_the_pre_fix_line"


def _run_release_test(tmp_path, **env):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rsfE", "-p", "no:cacheprovider",
         RELEASE_TEST],
        cwd=REPO, capture_output=True, text=True,
        env={**os.environ, **DEAD_INDEX, "VSL_SOURCES": str(tmp_path), **env},
    )  # fmt: skip


def test_release_tests_skip_saying_the_index_is_unreachable(tmp_path):
    out = _run_release_test(tmp_path, VSL_REQUIRE_RELEASES="0")
    assert out.returncode == 0, out.stdout
    assert "1 skipped" in out.stdout
    assert "the package index cannot be reached for vllm==0.24.0" in out.stdout


def test_ci_switch_turns_the_skip_into_a_failure(tmp_path):
    out = _run_release_test(tmp_path, VSL_REQUIRE_RELEASES="1")
    assert out.returncode == 1
    assert "1 error" in out.stdout and "skipped" not in out.stdout
    assert (
        "VSL_REQUIRE_RELEASES=1 and the package index cannot be reached" in out.stdout
    )


def test_ci_sets_the_switch():
    assert "export VSL_REQUIRE_RELEASES=1" in (REPO / ".ci" / "run").read_text()


def _zip(members: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)
    return data.getvalue()


def _tar(members: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as t:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            t.addfile(info, io.BytesIO(content))
    return data.getvalue()


def _unpacked(archive) -> list[str]:
    """The files ``_unpack`` leaves, relative to where it put them."""
    out = archive.parent / "out"
    fs._unpack(archive, out)
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def test_a_wheel_gives_its_python_files_only(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(
        _zip({
            "pkg/__init__.py": b"",
            "pkg/v1/spec.py": b"x = 1\n",
            "pkg/lib.so": b"\0",
            "pkg-1.0.dist-info/METADATA": b"Name: pkg\n",
            "../escape.py": b"bad\n",
        })
    )  # fmt: skip
    assert _unpacked(wheel) == ["pkg/__init__.py", "pkg/v1/spec.py"]
    assert (tmp_path / "out" / "pkg" / "v1" / "spec.py").read_bytes() == b"x = 1\n"


def test_an_sdist_drops_its_top_folder(tmp_path):
    sdist = tmp_path / "pkg-1.0.tar.gz"
    sdist.write_bytes(
        _tar({
            "pkg-1.0/setup.py": b"setup()\n",
            "pkg-1.0/pkg/spec.py": b"y = 2\n",
            "pkg-1.0/README.md": b"docs\n",
            "pkg-1.0/../escape.py": b"bad\n",
        })
    )  # fmt: skip
    assert _unpacked(sdist) == ["pkg/spec.py", "setup.py"]


def test_two_fetches_of_one_release_at_once_download_it_once(tmp_path, monkeypatch):
    """A second fetch that starts while the first is downloading waits for
    it and takes its folder (it used to unpack its own and replace the
    first's folder while the first run's tests were reading it)."""
    import threading

    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(_zip({"pkg/spec.py": b"x = 1\n"}))
    monkeypatch.setenv("VSL_SOURCES", str(tmp_path / "cache"))
    downloading, go = threading.Event(), threading.Event()
    downloads = []

    def download(name, version, folder):
        downloads.append(version)
        if len(downloads) == 1:
            downloading.set()
            go.wait(timeout=60)
        return wheel

    monkeypatch.setattr(fs, "_download", download)
    results = []

    def fetch():
        results.append(fs.fetch_sources("pkg==1.0"))

    first = threading.Thread(target=fetch)
    first.start()
    assert downloading.wait(timeout=60)
    second = threading.Thread(target=fetch)
    second.start()
    second.join(timeout=0.5)  # it waits for the first: its lock is held
    assert second.is_alive() and downloads == ["1.0"]
    go.set()
    first.join(timeout=60)
    second.join(timeout=60)
    dest = tmp_path / "cache" / "pkg-1.0"
    assert results == [dest, dest]
    assert downloads == ["1.0"]
    assert (dest / "pkg" / "spec.py").read_bytes() == b"x = 1\n"
