"""Reading and writing user files (never blocks, never half-writes), and
where they lie."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def is_within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it, both absolute and
    compared as written: ``/a/bc`` is not within ``/a/b``, ``/a/..x`` is
    within ``/a``, and everything is within ``/``."""
    return path == folder or path.startswith(os.path.join(folder, ""))


def ends_with_path(path: str, tail: str) -> bool:
    """Whether ``path`` ends with the relative ``/``-separated ``tail``, whole
    names only: ``myvllm/x.py`` does not end with ``vllm/x.py``."""
    return ("/" + path.replace(os.sep, "/")).endswith("/" + tail)


class WriteRefused(Exception):
    """The file was left as it was; the message says why."""


def read_source(path: Path | str) -> bytes:
    """The file's bytes; a pipe or device is refused, never waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"not a regular file: {path}")
        # os.read, not a buffered file object: this runs for every file.
        data = os.read(fd, info.st_size + 1)
        if len(data) > info.st_size:  # it grew since fstat
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)


def decode_source(source: bytes) -> tuple[str, str]:
    """Text and encoding, as Python reads a source file: a UTF-8 BOM or a
    PEP 263 cookie decide, else UTF-8. ``utf-8-sig`` keeps the BOM on encode.

    Raises SyntaxError (unknown encoding) or UnicodeDecodeError.
    """
    second_end = source.find(b"\n", source.find(b"\n") + 1)
    head = source if second_end < 0 else source[:second_end]
    if b"coding" not in head and not source.startswith(b"\xef\xbb\xbf"):
        # No cookie can be there, nor a BOM: UTF-8, as tokenize would find
        # (without its line reader: a check runs this for every file that
        # is not ASCII, about a sixth of vLLM's).
        return source.decode("utf-8"), "utf-8"
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        # "invalid or missing encoding declaration": the first lines are not
        # UTF-8 and no cookie says otherwise; UTF-8's own error says where.
        source.decode("utf-8")
        raise
    return source.decode(encoding), encoding


def write_atomically(path: Path, original: bytes, new: bytes) -> None:
    """Replace ``path``'s content with ``new`` if it still holds ``original``.

    The new content goes to a temporary file in the same folder, which then
    replaces the file in one step (``os.replace``), keeping its mode. A
    read-only file, or one changed since it was read, is refused.
    """
    target = path.resolve()  # write through a link, never replace the link
    pause_point("read", target)
    info = os.stat(target)
    if not info.st_mode & stat.S_IWUSR:
        raise WriteRefused("the file is read-only")
    if read_source(target) != original:
        raise WriteRefused("the file changed on disk since it was read")
    import tempfile

    fd, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".vsl-tmp"
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(new)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if read_source(target) != original:
            raise WriteRefused("the file changed on disk since it was read")
        pause_point("temp-written", target)
        os.replace(temporary, target)
        pause_point("replaced", target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def replace_whole(path: Path, data: bytes) -> None:
    """Write ``path`` in one step, missing folders made: a temporary file
    beside it (``os.replace`` cannot cross file systems), then
    ``os.replace``, so that a reader (another run) never sees half of it.
    Raises OSError; the temporary file never stays."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".vsl-tmp"
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


class ReportNotWritten(Exception):
    """``--output-file`` could not be written; the message names it and why."""


def write_report(path: Path, text: str) -> None:
    """Write a report, creating missing folders (as ruff does); a report
    replaced in one step, so a reader never sees half of one."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".vsl-tmp"
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(temporary, 0o666 & ~_umask())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as e:
        reason = e.strerror or str(e)
        raise ReportNotWritten(f"{path}: cannot write the report: {reason}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def pause_point(phase: str, target: Path) -> None:
    """Test-only: with ``VSL_TEST_PAUSE=PHASE:FILE_NAME:MARKER``, handling
    ``FILE_NAME`` stops at ``PHASE`` (``analyse``, in a worker or the main
    process; ``read``, ``temp-written``, ``replaced`` while writing),
    creates ``MARKER`` and waits to be killed, so a test stops a run at a
    known point instead of a moment."""
    spec = os.environ.get("VSL_TEST_PAUSE")
    if not spec:
        return
    want, name, marker = spec.split(":", 2)
    if want == phase and target.name == name:
        Path(marker).touch()
        _wait_to_be_killed()


def _wait_to_be_killed() -> None:
    import threading

    threading.Event().wait()  # an event nothing sets: forever
