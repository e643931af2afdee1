"""Fetch a released package's Python sources from the package index, for the
tests, benchmarks and sweeps that run the linter on real code.

    python scripts/fetch_sources.py vllm==0.33.0        # prints the folder
    python scripts/fetch_sources.py tpu-inference==0.32.0

``pip download --no-deps`` fetches the release's wheel (for vLLM, the Linux
x86-64 one for CPython 3.12, whichever Python runs this); a release with no
wheel, its sdist from the index's simple page (pip would build it to read its
metadata, build dependencies and all); only the archive's ``*.py`` files
are unpacked, into ``$VSL_SOURCES`` (default ``~/.cache/vllm-spec-lint``)
``/NAME-VERSION``. A folder unpacked before is reused. The code is read by
the linter, never imported, and never copied into this repository.

:class:`IndexUnreachable` says the index could not be reached (the caller
may skip); any other failure is :class:`FetchError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# pip's words when the network, not the request, failed.
_NETWORK_ERRORS = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution"
    r"|Name or service not known|Network is unreachable|Connection refused"
    r"|Connection reset|Read timed out|ConnectTimeoutError|ProxyError"
    r"|No route to host|SSLError|Could not fetch URL|RemoteDisconnected",
    re.IGNORECASE,
)
# pip reached the index and found no wheel of the release.
_NO_WHEEL = re.compile(r"No matching distribution found", re.IGNORECASE)
# vLLM ships only platform wheels: ask for the Linux x86-64 CPython 3.12 one.
_VLLM_WHEEL = [
    "--only-binary", ":all:", "--python-version", "3.12", "--implementation", "cp",
    *(
        f"--platform={p}"
        for p in (
            "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64",
            "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64",
        )
    ),
]  # fmt: skip


class FetchError(Exception):
    """The release could not be fetched or unpacked."""


class IndexUnreachable(FetchError):
    """The package index could not be reached."""


def cache_folder() -> Path:
    default = Path.home() / ".cache" / "vllm-spec-lint"
    return Path(os.environ.get("VSL_SOURCES") or default)


def fetch_sources(requirement: str) -> Path:
    """The folder holding the ``*.py`` files of ``NAME==VERSION``."""
    name, sep, version = requirement.partition("==")
    if not sep or not name or not version:
        raise FetchError(f"give an exact version, NAME==VERSION: {requirement!r}")
    dest = cache_folder() / f"{name}-{version}"
    if (dest / ".complete").is_file():
        return dest
    # One fetch of a release at a time: a second test run (another nox
    # session, a developer's run beside CI's) waits and takes the first's
    # folder, instead of replacing it while the first run's tests read it.
    with _locked(_parent(dest) / f".{dest.name}.lock"):
        if (dest / ".complete").is_file():
            return dest
        with tempfile.TemporaryDirectory(prefix="vsl-fetch-") as tmp:
            archive = _download(name, version, Path(tmp))
            partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
            try:
                _unpack(archive, partial)
                (partial / ".complete").touch()
                if dest.exists():  # a half-unpacked folder from a run that died
                    shutil.rmtree(dest)
                os.replace(partial, dest)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return dest


@contextlib.contextmanager
def _locked(path: Path):
    import fcntl

    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _parent(dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    return dest.parent


def _download(name: str, version: str, folder: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
        "--disable-pip-version-check", "--dest", str(folder),
        # A wheel only: pip would build an sdist to read its metadata, with
        # every build dependency (torch, for vllm-ascend). An sdist-only
        # release is taken from the index itself.
        *(_VLLM_WHEEL if name == "vllm" else ["--only-binary", ":all:"]),
        f"{name}=={version}",
    ]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        message = out.stderr.strip()[-800:]
        # pip says "no matching distribution" for a dead index too: ask it.
        if _NETWORK_ERRORS.search(out.stderr) or not _index_reachable():
            raise IndexUnreachable(
                f"the package index cannot be reached for {name}=={version}: {message}"
            )
        if name != "vllm" and _NO_WHEEL.search(out.stderr):
            return _download_sdist(name, version, folder, message)
        raise FetchError(f"pip cannot download {name}=={version}: {message}")
    archives = sorted(folder.iterdir())
    if len(archives) != 1:
        raise FetchError(f"expected one archive for {name}=={version}: {archives}")
    return archives[0]


def _index_url() -> str:
    """The index pip uses: PIP_INDEX_URL, else its configuration, else PyPI."""
    return _index_urls()[0]


def _index_urls() -> list[str]:
    """Every index pip reads: the main one (PIP_INDEX_URL, else its
    configuration, else PyPI), then the extra ones."""
    main = os.environ.get("PIP_INDEX_URL", "")
    extra = os.environ.get("PIP_EXTRA_INDEX_URL", "").split()
    out = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    )
    for line in out.stdout.splitlines():
        key, _, value = line.partition("=")
        value = value.strip().strip("'\"")
        if key.endswith(".index-url") and not main:
            main = value
        elif key.endswith(".extra-index-url"):
            extra += value.split()
    return [main or "https://pypi.org/simple/", *extra]


def _download_sdist(name: str, version: str, folder: Path, why: str) -> Path:
    """The release's sdist, found on the indexes' simple pages (PEP 503) and
    checked against the sha256 the page gives."""
    import hashlib
    import html.parser
    import urllib.error
    import urllib.parse
    import urllib.request

    class Links(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs: list[str] = []

        def handle_starttag(self, tag, attrs):
            self.hrefs += [v for k, v in attrs if tag == "a" and k == "href" and v]

    project = re.sub(r"[-_.]+", "-", name).lower()
    stem = "[-_.]".join(map(re.escape, project.split("-")))
    wanted = re.compile(rf"{stem}-{re.escape(version)}\.(tar\.gz|zip)", re.IGNORECASE)
    for index in _index_urls():
        page = index.rstrip("/") + f"/{project}/"
        try:
            with urllib.request.urlopen(page, timeout=60) as response:
                text = response.read().decode("utf-8", "replace")
        except (urllib.error.URLError, OSError, ValueError):
            continue
        links = Links()
        links.feed(text)
        for href in links.hrefs:
            url, _, fragment = urllib.parse.urljoin(page, href).partition("#")
            filename = urllib.parse.unquote(url.rsplit("/", 1)[-1])
            if not wanted.fullmatch(filename):
                continue
            with urllib.request.urlopen(url, timeout=600) as response:
                data = response.read()
            digest = fragment.partition("sha256=")[2]
            if digest and hashlib.sha256(data).hexdigest() != digest:
                raise FetchError(f"{filename}: its sha256 is not the index's")
            (folder / filename).write_bytes(data)
            return folder / filename
    raise FetchError(
        f"pip cannot download {name}=={version}, a wheel, nor is there an sdist "
        f"on the indexes: {why}"
    )


def _index_reachable() -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(_index_url().rstrip("/") + "/pip/", timeout=20):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _unpack(archive: Path, dest: Path) -> None:
    """The archive's ``*.py`` files, at their paths inside it (an sdist's
    top folder dropped)."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            members = [n for n in z.namelist() if _wanted(n)]
            for member in members:
                _write(dest, member, z.read(member))
        return
    with tarfile.open(archive) as t:
        for member in t.getmembers():
            if member.isfile() and _wanted(member.name):
                inner = member.name.split("/", 1)[1] if "/" in member.name else ""
                data = t.extractfile(member)
                if inner and data is not None:
                    _write(dest, inner, data.read())


def _wanted(name: str) -> bool:
    parts = name.split("/")
    return name.endswith(".py") and ".." not in parts and not name.startswith("/")


def _write(dest: Path, relative: str, data: bytes) -> None:
    path = dest / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: fetch_sources.py NAME==VERSION", file=sys.stderr)
        return 2
    try:
        print(fetch_sources(argv[0]))
    except FetchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
