"""Laying out fixed statements the way the project's own formatter would:
that formatter, run on just the lines a fix changed, so nothing else in the
file moves.

``fix-formatter``: ``ruff`` (``ruff format --range``), ``black``
(``black --line-ranges``), ``yapf`` (``yapf --lines``), ``none`` (the edit
as made, inside the existing layout), or ``auto`` (the default): the
formatter the project configures (its pre-commit hooks first, then a yapf,
black or ruff configuration). A project that configures none gets ruff's
defaults only in a file they already leave as it is; in any other file the
edit stays as made, since formatting it would impose a layout the project
never chose. Each runs from the user's environment; when it is missing,
fixes apply unformatted, with one warning.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

FIX_FORMATTERS = ("auto", "ruff", "black", "yapf", "none")


class FormatError(Exception):
    pass


@dataclass(frozen=True)
class FormatterChoice:
    """Which formatter lays out fixes, and where its executable is (None:
    not installed, or ``none`` chosen). ``assumed``: the project configures
    no formatter, and ruff's defaults lay out only files already laid out
    so. Picklable: worker processes get it."""

    kind: str
    executable: str | None = None
    line_length: int | None = None
    assumed: bool = False

    def for_file(self, path: str):
        """The formatter for one file, or None to leave fixes as made."""
        if self.executable is None:
            return None
        return RangeFormatter(
            self.kind, self.executable, path, self.line_length, self.assumed
        )


def find_executable(kind: str) -> str | None:
    """The formatter installed beside the interpreter running this tool (its
    environment, activated or not: a pre-commit hook's, a venv's), then
    ruff's own package, then on PATH."""
    beside = os.pathsep.join(_interpreter_scripts())
    found = shutil.which(kind, path=beside) if beside else None
    if found is None and kind == "ruff":
        try:
            from ruff.__main__ import find_ruff_bin

            found = find_ruff_bin()
        except (ImportError, FileNotFoundError):
            pass
    return found or shutil.which(kind)


def _interpreter_scripts() -> list[str]:
    """The running interpreter's scripts folders: sysconfig's, and the folder
    of ``sys.executable`` (a venv's bin, whatever sysconfig says)."""
    import sysconfig

    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    return [f for f in dict.fromkeys(folders) if f]


def find_ruff() -> str | None:
    return find_executable("ruff")


def choose(
    setting: str, start: Path, line_length: int | None, warnings: list[str]
) -> FormatterChoice:
    """The formatter ``setting`` names (``auto``: the one the project at
    ``start`` configures), with a warning when it is not installed."""
    kind = detect(start) if setting == "auto" else setting
    assumed = kind is None
    kind = "ruff" if kind is None else kind
    if kind == "none":
        return FormatterChoice("none", None, line_length)
    executable = find_executable(kind)
    if executable is None:
        warnings.append(missing_warning(kind))
    return FormatterChoice(kind, executable, line_length, assumed)


_warned: set[str] = set()


def formatter_for(path: str, line_length: int | None, setting: str = "auto"):
    """The formatter for one file outside a run (codemods, tests), or None;
    a missing formatter is warned about once per process."""
    warnings: list[str] = []
    choice = choose(setting, Path(path).absolute(), line_length, warnings)
    for warning in warnings:
        if warning not in _warned:
            _warned.add(warning)
            print(f"warning: {warning}", file=sys.stderr)
    return choice.for_file(path)


def missing_warning(kind: str) -> str:
    if kind == "ruff":
        # A dependency of ours: it was removed from the environment since.
        hint = "pip install ruff"
    else:
        hint = f"the project formats with {kind}; pip install {kind}"
    return f"{kind} is not installed: fixes are applied without formatting ({hint})"


# -- which formatter a project uses ---------------------------------------------

_HOOKS = {"ruff-format": "ruff", "black": "black", "yapf": "yapf"}
_HOOK_ID = re.compile(r"^\s*-?\s*id:\s*['\"]?([\w.-]+)", re.MULTILINE)


def detect(start: Path) -> str | None:
    """The formatter configured nearest ``start``: in each folder up from
    it, the formatter hooks of ``.pre-commit-config.yaml`` first, then a
    yapf, black or ruff configuration; None when none is found."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        found = _configured_in(candidate)
        if found is not None:
            return found
    return None


def _configured_in(folder: Path) -> str | None:
    hooks = _read(folder / ".pre-commit-config.yaml")
    for hook in _HOOK_ID.findall(hooks):
        if hook in _HOOKS:
            return _HOOKS[hook]
    pyproject = _read(folder / "pyproject.toml")
    setup_cfg = _read(folder / "setup.cfg")
    if (
        (folder / ".style.yapf").is_file()
        or "[tool.yapf]" in pyproject
        or re.search(r"^\[yapf\]", setup_cfg, re.MULTILINE)
    ):
        return "yapf"
    if "[tool.black]" in pyproject:
        return "black"
    if (
        (folder / "ruff.toml").is_file()
        or (folder / ".ruff.toml").is_file()
        or re.search(r"^\[tool\.ruff[\].]", pyproject, re.MULTILINE)
    ):
        return "ruff"
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# -- running one --------------------------------------------------------------------


def _row_col(starts: list[int], offset: int) -> tuple[int, int]:
    """1-based row and column of ``offset``, given the text's line starts."""
    import bisect

    row = bisect.bisect_right(starts, offset) - 1
    return row + 1, offset - starts[row] + 1


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _confined(before: str, after: str, rows: list[tuple[int, int]]) -> bool:
    """Whether every change from ``before`` to ``after`` replaces lines of
    one of ``rows`` (1-based, inclusive) and nothing else."""
    import bisect

    firsts = [first for first, _ in rows]
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for op, i1, i2, j1, j2 in line_opcodes(old, new):
        if op == "equal":
            continue
        at = bisect.bisect_right(firsts, i1 + 1) - 1
        if at < 0 or i2 > rows[at][1]:
            return False  # beyond a changed row
        if _blank(new[j1:j2]) > _blank(old[i1:i2]):
            return False  # blank lines put between statements
    return True


def _semicolon_on(text: str, starts: list[int], rows: list[tuple[int, int]]) -> bool:
    """Whether any of ``rows`` (1-based, inclusive) holds a ``;`` (in code,
    a string or a comment alike: a call too many costs only time)."""
    ends = [*starts[1:], len(text)]
    return any(";" in text[starts[a - 1] : ends[b - 1]] for a, b in rows)


def _blank(lines: list[str]) -> int:
    return sum(1 for line in lines if not line.strip())


def line_opcodes(old: list[str], new: list[str]) -> list[tuple]:
    """difflib's opcodes turning lines ``old`` into ``new``. The lines both
    begin and end with are matched first, in one pass, so that difflib
    compares only what lies between the first and the last change (over a
    whole file, its search is quadratic in the number of blank lines);
    there, lines too common to anchor a match (blank ones) are left to
    difflib's own junk heuristic."""
    import difflib

    from vllm_spec_lint.repair.text import common_ends

    head, tail = common_ends(old, new)
    middle = difflib.SequenceMatcher(
        None, old[head : len(old) - tail], new[head : len(new) - tail]
    )
    opcodes = [("equal", 0, head, 0, head)] if head else []
    opcodes += [
        (tag, head + i1, head + i2, head + j1, head + j2)
        for tag, i1, i2, j1, j2 in middle.get_opcodes()
    ]
    if tail:
        opcodes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return opcodes


def only_within(before: str, after: str, rows: list[tuple[int, int]]) -> str:
    """``after``'s changes to the lines in ``rows`` (1-based, inclusive);
    every other line as in ``before``. A formatter asked to format a range
    may still touch its surroundings (black drops a blank line below an
    import it reformats): those changes are not the fix's to make. A changed
    hunk that reaches into the rows is taken whole, but for the blank lines
    around it: the formatter may have rewritten one statement across the
    range's edge, and half of it would not parse."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    kept: list[str] = []
    for op, i1, i2, j1, j2 in line_opcodes(old, new):
        inside = [
            (max(i1, first - 1), min(i2, last))
            for first, last in rows
            if i1 < last and first - 1 < max(i2, i1 + 1)
        ]
        if op == "equal":
            kept += new[j1:j2]
        elif not inside:
            kept += old[i1:i2]
        else:
            # Blank lines the hunk took from around the range stay as they were.
            before_range = old[i1 : inside[0][0]]
            after_range = old[inside[-1][1] : i2]
            part = new[j1:j2]
            if all(not line.strip() for line in before_range + after_range):
                while part and not part[0].strip() and before_range:
                    part = part[1:]
                while part and not part[-1].strip() and after_range:
                    part = part[:-1]
                part = before_range + part + after_range
            kept += part
    return "".join(kept)


# From this many changed places in a file, one ruff call for them all is
# tried first (RangeFormatter._ruff): in a formatted file it is kept, and a
# call costs 4-10 ms (a fix's import and its site are two places).
ONE_CALL_FROM = 2


class RangeFormatter:
    """Formats the spans of a file's text a fix changed, and nothing else.

    ``path`` tells the formatter which project's settings apply (ruff and
    black take it as ``--stdin-filename``, absolute: they run from the
    file's folder, where yapf looks for its style). ``assumed``: no
    formatter is configured, so the file's own layout is the evidence."""

    def __init__(
        self,
        kind: str,
        executable: str,
        path: str,
        line_length: int | None,
        assumed: bool = False,
    ):
        self.kind = kind
        self.executable = executable
        self.path = path
        self.line_length = line_length
        self.assumed = assumed

    def __call__(self, text: str, spans: list[tuple[int, int]], before: str) -> str:
        """``text`` with its ``spans`` laid out. ``before``: the file as it
        was found, before any fix, the evidence of its layout when no
        formatter is configured."""
        from vllm_spec_lint.repair.text import line_starts

        if not spans:
            return text
        if self.assumed and not self._laid_out_by_ruff(before):
            return text
        starts = line_starts(text)
        merged = _merged(spans)
        rows = [(_row_col(starts, a)[0], _row_col(starts, b)[0]) for a, b in merged]
        if self.kind == "ruff":
            formatted = self._ruff(text, starts, merged, rows)
        else:
            option = "--line-ranges" if self.kind == "black" else "--lines"
            ranges = [a for r in rows for a in (option, f"{r[0]}-{r[1]}")]
            formatted = self._run(ranges, text)
        return only_within(text, formatted, rows)

    def _ruff(self, text, starts, merged, rows) -> str:
        """ruff takes one range a call, and each call parses the whole file.
        Two places or more: one call for the range from the first to the
        last, kept when ruff changed nothing but the changed statements
        (the rest of the file is ruff-formatted already: the same result as
        a call per place); otherwise, and for one place, one call each,
        last first, so that earlier offsets stay valid. A changed row that
        holds a ``;`` also takes calls of its own: the range from the first
        place to the last takes in the other statements of the row, which
        ruff then puts on lines of their own (a call for the place alone
        leaves them)."""
        if len(merged) >= ONE_CALL_FROM and not _semicolon_on(text, starts, rows):
            (r1, c1), (r2, c2) = (
                _row_col(starts, merged[0][0]),
                _row_col(starts, merged[-1][1]),
            )
            formatted = self._run(["--range", f"{r1}:{c1}-{r2}:{c2}"], text)
            if _confined(text, formatted, rows):
                return formatted
        formatted = text
        for start, end in reversed(merged):
            (r1, c1), (r2, c2) = _row_col(starts, start), _row_col(starts, end)
            formatted = self._run(["--range", f"{r1}:{c1}-{r2}:{c2}"], formatted)
        return formatted

    def _laid_out_by_ruff(self, source: str) -> bool:
        """Whether ruff's defaults leave ``source`` as it is."""
        try:
            return self._run([], source) == source
        except FormatError:  # ruff cannot read it: no evidence of ruff
            return False

    def _command(self, ranges: list[str]) -> list[str]:
        if self.kind == "ruff":
            # The project's own settings (found from the file's path) decide,
            # unless our line-length was set: never a setting nobody chose.
            length = [] if self.line_length is None else [
                "--line-length", str(self.line_length)
            ]  # fmt: skip
            return [
                self.executable, "format", *ranges, *length,
                "--stdin-filename", os.path.abspath(self.path), "-",
            ]  # fmt: skip
        if self.kind == "black":
            return [
                self.executable, "-q", *ranges,
                "--stdin-filename", os.path.abspath(self.path), "-",
            ]  # fmt: skip
        return [self.executable, *ranges]  # yapf reads stdin

    def _run(self, ranges: list[str], text: str) -> str:
        folder = os.path.dirname(os.path.abspath(self.path))
        result = subprocess.run(
            self._command(ranges),
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=120,
            cwd=folder if os.path.isdir(folder) else None,
        )
        if result.returncode != 0:
            raise FormatError(result.stderr.decode("utf-8", "replace").strip())
        return result.stdout.decode("utf-8")
