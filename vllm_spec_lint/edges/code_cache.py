"""The compiled methods of dataclasses, kept from one run to the next.

Importing libcst makes 223 frozen dataclasses, and ``dataclasses`` writes
each one's methods (``__init__``, ``__eq__``, ``__hash__``, ``__repr__``,
``__setattr__``, ``__delattr__``) as source text and compiles it with
``exec``, every time: about 70 ms of the 130 ms the import takes, half of
a one-file check's CPU apart from it. Python keeps the bytecode of modules
(``.pyc`` files), never of these. While a command runs, the text
``dataclasses`` compiles is looked up here first; what had to be compiled
is saved for the next run. The code is what compiling that text gives
(the same flags and optimisation level), so every class is as without the
cache.

One file per bytecode format and optimisation level, in the tool's own
cache folder (:func:`cache_folder`). It holds the tool's code (libcst's,
ours), never anything about the files checked: ``--no-cache`` is about
those, as it leaves Python's ``.pyc`` files alone. Like those, it is code
the tool runs: the folder is the user's own (a checksum catches a damaged
file, not a hostile one).
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType

from vllm_spec_lint.edges.files import replace_whole

FOLDER_VARIABLE = "VLLM_SPEC_LINT_CACHE_DIR"
# A file holding more sources than this starts again (libcst's classes make
# about 620 on Python 3.11, fewer from 3.13; each libcst upgrade adds its).
MAX_SOURCES = 5000
_HEADER = b"vllm-spec-lint dataclass code\n" + MAGIC_NUMBER


def cache_folder() -> Path | None:
    """The tool's own cache folder, chosen as pre-commit chooses its:
    ``$VLLM_SPEC_LINT_CACHE_DIR`` if set (empty: no cache), else
    ``vllm-spec-lint`` in ``$XDG_CACHE_HOME``, else in ``~/.cache``."""
    chosen = os.environ.get(FOLDER_VARIABLE)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    if base.startswith("~"):  # no home folder to expand to
        return None
    return Path(base) / "vllm-spec-lint"


class DataclassCode:
    """Compiled code by source text, read from ``path`` at first use."""

    def __init__(self, path: Path):
        self.path = path
        self._codes: dict[str, CodeType] | None = None
        # The code this process asked for, found or compiled.
        self._asked: dict[str, CodeType] = {}
        # Sources this process compiled, not found in the file: to save.
        self.compiled = 0

    def exec(self, source, globals=None, locals=None) -> None:
        """``exec`` as ``dataclasses`` calls it, with a source's code from
        the cache."""
        if type(source) is str:
            source = self.code_for(source)
        exec(source, globals, locals)

    def code_for(self, source: str) -> CodeType:
        if self._codes is None:
            self._codes = self._read()
        code = self._codes.get(source)
        if code is None:
            # What ``exec(source)`` in ``dataclasses`` compiles: none of this
            # module's ``__future__`` flags.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self._codes[source] = code
            self.compiled += 1
        self._asked[source] = code
        return code

    def _read(self) -> dict[str, CodeType]:
        """The file's codes; none when it is missing, from another bytecode
        format, or damaged (its checksum)."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        start = len(_HEADER) + 4
        checksum, payload = data[len(_HEADER) : start], data[start:]
        if not data.startswith(_HEADER) or checksum != _checksum(payload):
            return {}
        try:
            codes = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return {}
        return codes if isinstance(codes, dict) else {}

    def save(self) -> None:
        """Add what this process compiled to the file (with what other
        processes added since it was read), written whole (``replace_whole``).
        A folder that cannot be written keeps nothing."""
        if not self.compiled:
            return
        codes = {**self._read(), **self._asked}
        if len(codes) > MAX_SOURCES:
            codes = self._asked
        payload = marshal.dumps(codes)
        try:
            replace_whole(self.path, _HEADER + _checksum(payload) + payload)
        except OSError:
            return
        self.compiled = 0


def _checksum(payload: bytes) -> bytes:
    return zlib.crc32(payload).to_bytes(4, "little")


# The cache ``dataclasses`` compiles through in this process, if any.
_active: DataclassCode | None = None


def start() -> DataclassCode | None:
    """From now on, the dataclasses made in this process (and in the workers
    it forks) take their methods' code from the cache; the cache, for
    :meth:`DataclassCode.save`. None where there is no cache folder, no
    bytecode format, or a cache in use already (a forked worker's, from the
    process that forked it)."""
    global _active
    folder, tag = cache_folder(), sys.implementation.cache_tag
    if folder is None or tag is None or _active is not None:
        return None
    name = f"dataclass-code-{tag}-O{sys.flags.optimize}.marshal"
    _active = DataclassCode(folder / name)
    # ``dataclasses`` looks ``exec`` up in its own module before the builtins.
    dataclasses.exec = _active.exec
    return _active


def _stop() -> None:
    global _active
    del dataclasses.exec
    _active = None


@contextmanager
def compiled_dataclasses() -> Iterator[DataclassCode | None]:
    """:func:`start` for the block's length; yields what it gave."""
    started = start()
    try:
        yield started
    finally:
        if started is not None:
            _stop()


def save_compiled() -> None:
    """Save what this process compiled so far (a worker, once it has
    imported the analysis: its code is not the main process's to save)."""
    if _active is not None:
        _active.save()
