"""What a report shows of a fix is what ``fix`` writes.

A rule's fix is a raw edit (``isinstance(x, (A, B))`` on one long line);
``fix`` lays it out with the project's formatter. A report that shows fixes
(the full format's diff, JSON's and SARIF's edits) runs the same first pass
for each file: every fix applied at once, the changed ranges laid out, as
``fix`` does; the laid-out text is then cut back into one fix per finding,
each holding the changed lines its own edits touched. The formatter runs
only for files with a fix to show (ruff once per changed range), files side
by side, in a check already while the run waits for its workers
(LaidOutEarly), and what it gives is cached (edges/cache.py's PreviewCache).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.cache import PreviewCache
from vllm_spec_lint.edges.files import decode_source, read_source
from vllm_spec_lint.model.lines import split_lines
from vllm_spec_lint.repair.formatting import (
    FormatError,
    FormatterChoice,
    choose,
    line_opcodes,
)
from vllm_spec_lint.repair.text import Edit, Fix, apply_fixes, common_ends

if TYPE_CHECKING:
    from concurrent.futures import Future


class LaidOutEarly:
    """Fixes laid out while a run goes on, each file's once its result is
    in: the main process mostly waits for its workers then, and the
    formatter runs on the core it leaves idle. :func:`laid_out` takes what
    was laid out here for the same text and fixes, and lays out the rest
    itself. A file with a test of a builder's own spec waits for it: backend
    pairing's verdict, still to come, may take findings away."""

    def __init__(self, config: Config, start: Path):
        self._config = config
        self._start = start
        self._choice: FormatterChoice | None = None
        self._pool = None
        # path -> (the text and fixes laid out, the laid-out fixes to come)
        self._started: dict[str, tuple[str, list[Fix], Future]] = {}

    def add(self, result) -> None:
        """Start laying out ``result``'s fixes (a FileResult)."""
        fixes = [f.fix for f in result.findings if f.fix is not None]
        if not fixes or any(f.own_spec for f in result.findings):
            return
        if self._choice is None:
            self._choice = _choice(self._config, self._start)
        formatter = self._choice.for_file(result.path)
        if formatter is None:
            return
        try:
            text = decode_source(read_source(result.path))[0]
        except (OSError, SyntaxError, UnicodeDecodeError):
            return  # the report shows no code of it either
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            # One at a time: the other cores are the workers'.
            self._pool = ThreadPoolExecutor(1)
        future = self._pool.submit(_laid_out_fixes, text, fixes, formatter)
        self._started[result.path] = (text, fixes, future)

    def take(self, path: str, text: str, fixes: list[Fix]):
        """The fixes laid out for ``path`` with this text and these fixes
        (None: the formatter failed), or NOT_LAID_OUT."""
        started = self._started.pop(path, None)
        if started is None or started[:2] != (text, fixes):
            return NOT_LAID_OUT
        try:
            return started[2].result()
        except FormatError:
            return None

    def close(self) -> None:
        """Drop what has not started (a run that stops, or a report that
        needs no more)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


NOT_LAID_OUT = object()


def _choice(config: Config, start: Path) -> FormatterChoice:
    # A missing formatter is fix's to warn about; a report shows the raw edit.
    return choose(config.fix_formatter, start.absolute(), config.line_length, [])


def laid_out(
    findings: list[Finding],
    sources: dict[str, str],
    config: Config,
    start: Path,
    cache: PreviewCache | None = None,
    early: LaidOutEarly | None = None,
) -> list[Finding]:
    """``findings`` with each fix as the project's formatter lays it out;
    findings in files not in ``sources``, or whose formatter fails or is not
    installed, keep their fix as the rule made it. ``cache`` remembers the
    laid-out fixes, so that a warm run calls no formatter; ``early`` holds
    what was laid out while the run went on."""
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fix is not None and finding.path in sources:
            by_file.setdefault(finding.path, []).append(finding)
    if not by_file:
        return findings
    choice = _choice(config, start)
    if choice.executable is None:
        return findings
    identity = (
        f"{choice.kind} {choice.executable} {choice.line_length} {choice.assumed}"
    )

    keys: dict[str, str] = {}
    laid: dict[str, list[Fix] | None] = {}
    if cache is not None:
        for path, with_fix in by_file.items():
            raw = [f.fix for f in with_fix]
            keys[path] = cache.key(path, sources[path], raw, identity)
            cached = cache.get(keys[path])
            if cached is not None and len(cached) == len(raw):
                laid[path] = cached

    def one_file(path: str) -> list[Fix] | None:
        raw = [f.fix for f in by_file[path]]
        try:
            fixes = _laid_out_fixes(sources[path], raw, choice.for_file(path))
        except FormatError:
            return None
        if cache:
            cache.put(keys[path], fixes)
        return fixes

    if early is not None:
        for path, with_fix in by_file.items():
            if path not in laid:
                raw = [f.fix for f in with_fix]
                fixes = early.take(path, sources[path], raw)
                if fixes is not NOT_LAID_OUT:
                    laid[path] = fixes
                    if cache is not None and fixes is not None:
                        cache.put(keys[path], fixes)
    missing = [path for path in by_file if path not in laid]
    if len(missing) > 1:
        # The formatter runs in a process of its own: files side by side.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(len(missing), os.cpu_count() or 1)) as pool:
            laid.update(zip(missing, pool.map(one_file, missing), strict=True))
    else:
        laid.update((path, one_file(path)) for path in missing)
    replaced: dict[int, Finding] = {}
    for path, fixes in laid.items():
        if fixes is not None:
            for finding, fix in zip(by_file[path], fixes, strict=True):
                replaced[id(finding)] = replace(finding, fix=fix)
    return [replaced.get(id(f), f) for f in findings]


def _laid_out_fixes(text: str, fixes: list[Fix], formatter) -> list[Fix]:
    """Each fix as the first pass of ``fix`` writes it in ``text``: laid out
    where it was applied and the formatter moved something, else as made."""
    new, changed, applied = apply_fixes(text, fixes)
    formatted = formatter(new, changed, text)
    if formatted == new:  # laid out as made: the rules' own edits stand
        return list(fixes)
    before, after = _lines_with_ends(text), _lines_with_ends(formatted)
    blocks = _changed_blocks(before, after)
    result = list(fixes)
    for index in applied:
        fix = fixes[index]
        rows = [
            (e.location[0] - 1, e.end_location[0] - 1) for e in fix.edits
        ]  # 0-based, both ends included
        edits = tuple(
            _narrowed("".join(before[i1:i2]), "".join(after[j1:j2]), i1 + 1)
            for i1, i2, j1, j2 in blocks
            if any(first < max(i2, i1 + 1) and i1 <= last for first, last in rows)
        )
        if edits:
            result[index] = replace(fix, edits=edits)
    return result


def _changed_blocks(before: list[str], after: list[str]) -> list[tuple]:
    """``(i1, i2, j1, j2)`` for each run of lines that differ."""
    return [
        (i1, i2, j1, j2)
        for tag, i1, i2, j1, j2 in line_opcodes(before, after)
        if tag != "equal"
    ]


def _lines_with_ends(text: str) -> list[str]:
    """Lines as Python counts them (not ``str.splitlines``, which also splits
    on form feeds), each with its line break."""
    return _LINE.findall(text)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _narrowed(old: str, new: str, row: int) -> Edit:
    """The edit that turns ``old`` (whole lines from ``row``) into ``new``,
    without the text both begin and end with: as narrow as the rule's own."""
    prefix, suffix = common_ends(old, new)
    # Whole words: `is X` -> `in (X, Y)` replaces `is`, not its `s`.
    while prefix and _word(new[prefix - 1]) and _in_word(old, new, prefix):
        prefix -= 1
    while (
        suffix
        and _word(new[len(new) - suffix])
        and (_in_word(old, new, len(old) - suffix, len(new) - suffix, before=True))
    ):
        suffix -= 1
    return Edit(
        new[prefix : len(new) - suffix],
        _position(old, prefix, row),
        _position(old, len(old) - suffix, row),
    )


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _in_word(
    old: str, new: str, at: int, at_new: int | None = None, *, before: bool = False
) -> bool:
    """Whether the changed text next to a boundary (after it at ``at``, or
    with ``before`` the character before it) continues the word there."""
    at_new = at if at_new is None else at_new
    if before:
        return (at > 0 and _word(old[at - 1])) or (
            at_new > 0 and _word(new[at_new - 1])
        )
    return (at < len(old) and _word(old[at])) or (
        at_new < len(new) and _word(new[at_new])
    )


def _position(text: str, offset: int, row: int) -> tuple[int, int]:
    """The 1-based (row, column) of ``offset`` in ``text``, which starts at
    column 1 of ``row``."""
    lines = split_lines(text[:offset])
    return row + len(lines) - 1, len(lines[-1]) + 1
