"""The analysis core: source bytes in, findings out.

Every face (CLI, flake8 plugin, codemods, pre-commit) calls
:func:`analyze_source`. It does no file I/O: reading, discovery, caching and
parallelism live at the edges (``runner.py``). libcst and the rules are
imported only when a file is actually parsed, so runs that parse nothing
start fast.
"""

from __future__ import annotations

import fnmatch
import functools
import gc
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import PurePath

from vllm_spec_lint import noqa
from vllm_spec_lint.config import Config
from vllm_spec_lint.families import ClassHierarchy, short_name

PARSE_ERROR_CODE = "VSL900"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (row, column) positions."""

    content: str
    location: tuple[int, int]
    end_location: tuple[int, int]


@dataclass(frozen=True)
class Fix:
    applicability: str
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    location: tuple[int, int]  # 1-based row and column
    end_location: tuple[int, int]
    fix: Fix | None = None
    # The reported line's source, for baselines.
    line_text: str = field(default="", compare=False)
    # Why the default mode leaves it out (set on findings strict mode adds).
    suppressed_by: str | None = None


@dataclass
class FileAnalysis:
    """What analysing one file gave."""

    path: str
    findings: list[Finding]
    # Sites the default mode does not report, each with its reason.
    suppressed: list[Finding] = field(default_factory=list)


def wanted(finding: Finding, unsafe: bool) -> bool:
    """Whether a fix run applies this finding's fix."""
    return finding.fix is not None and (unsafe or finding.fix.applicability == "safe")


# Line breaks as Python counts them.
NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as Python counts them (``str.splitlines`` also splits on form
    feeds and other separators, which would shift row numbers)."""
    return NEWLINE.split(text)


def might_have_findings(source: bytes, config: Config) -> bool:
    """Cheap, sound test on the raw bytes: every finding names an anchor
    class in the file, so a file without any anchor's name has none."""
    return any(name in source for name in _anchor_names(config.families))


@functools.cache
def _anchor_names(families: tuple) -> tuple[bytes, ...]:
    return tuple(short_name(f.anchor).encode() for f in families)


def parse_error(path: str, message: str, row: int = 1, column: int = 1) -> Finding:
    return Finding(PARSE_ERROR_CODE, message, path, (row, column), (row, column))


def _ignored_for_path(path: str, config: Config) -> tuple[str, ...]:
    relative = PurePath(os.path.relpath(os.path.abspath(path), config.root))
    candidates = (relative.as_posix(), PurePath(path).name)
    return tuple(
        code
        for pattern, codes in config.per_file_ignores
        for code in codes
        if any(fnmatch.fnmatch(c, pattern) for c in candidates)
    )


def _parse_error_of(exc: BaseException, path: str) -> Finding:
    if isinstance(exc, SyntaxError):
        row, column = exc.lineno or 1, exc.offset or 1
        return parse_error(path, f"cannot parse: {exc.msg}", row, max(column, 1))
    if isinstance(exc, (RecursionError, MemoryError)):
        return parse_error(path, "cannot parse: nested too deeply")
    return parse_error(path, f"cannot parse: {exc}")


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Parsing builds hundreds of thousands of short-lived, acyclic nodes; the
    cycle collector would walk them again and again (about half of parse
    time). Reference counting frees them; the collector runs afterwards."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _visit(module, visitors) -> None:
    import libcst as cst

    """Call each rule's ``visit_<Node>`` methods on every node, parents
    first. Our own walk (scopes.walk) rather than libcst's visitor machinery,
    which rebuilds every node it passes; rules never prune the walk."""
    from vllm_spec_lint.scopes import walk

    handlers: dict[type, list] = {}
    for node in walk(module):
        kind = type(node)
        calls = handlers.get(kind)
        if calls is None:
            method = f"visit_{kind.__name__}"
            # libcst's visitor base defines every visit_ method as a no-op.
            calls = handlers[kind] = [
                getattr(v, method)
                for v in visitors
                if getattr(type(v), method, None)
                is not getattr(cst.BatchableCSTVisitor, method, None)
            ]
        for call in calls:
            call(node)


def analyze_source(
    source: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy | None = None,
    *,
    module_name: str | None = None,
    apply_noqa: bool = True,
    tree=None,
) -> FileAnalysis:
    """Run every selected rule over one file's (decoded) source.

    ``module_name`` (``vllm.v1.core.x``) resolves relative imports and
    recognises a family's own module; ``apply_noqa`` is off for flake8,
    which applies ``# noqa`` itself and hands over its ``ast`` ``tree`` of
    the source.
    """
    with _gc_paused():
        return _analyze_source(
            source, path, config, hierarchy, module_name, apply_noqa, tree
        )


def _analyze_source(
    source: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy | None,
    module_name: str | None,
    apply_noqa: bool,
    tree,
) -> FileAnalysis:
    import ast

    from vllm_spec_lint.slicing import Screen, relevant_source

    hierarchy = hierarchy or ClassHierarchy.default()
    ignored = _ignored_for_path(path, config)
    report_errors = config.is_enabled(PARSE_ERROR_CODE, ignored)
    try:
        # CPython's parser decides what is valid Python; libcst then sees
        # only the parts of the file the rules can act on (slicing.py).
        if tree is None:
            tree = ast.parse(source)
        relevant = relevant_source(
            source, tree, Screen.build(config, hierarchy, module_name)
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        error = _parse_error_of(e, path)
        return FileAnalysis(path, [error] if report_errors else [])
    if not relevant.has_candidates:
        return FileAnalysis(path, [])

    import libcst as cst

    from vllm_spec_lint.rules import ALL_RULES
    from vllm_spec_lint.semantics import FileContext

    rules = [r for r in ALL_RULES if config.is_enabled(r.CODE, ignored)]
    try:
        module = cst.parse_module(relevant.text)
    except cst.ParserSyntaxError as e:
        error = parse_error(
            path, f"cannot parse: {e.message}", e.raw_line, e.raw_column + 1
        )
        return FileAnalysis(path, [error] if report_errors else [])
    except (RecursionError, MemoryError) as e:
        error = _parse_error_of(e, path)
        return FileAnalysis(path, [error] if report_errors else [])
    if not rules:
        return FileAnalysis(path, [])
    try:
        context = FileContext(
            module,
            relevant.text,
            config=config,
            hierarchy=hierarchy,
            module_name=module_name,
            rows=relevant.rows,
        )
        visitors = [rule(context) for rule in rules]
        _visit(module, visitors)
    except RecursionError:
        error = parse_error(path, "cannot analyse: nested too deeply")
        return FileAnalysis(path, [error] if report_errors else [])

    from vllm_spec_lint.fixes import fix_from_plan

    lines = split_lines(source)
    findings, suppressed = [], []
    for visitor in visitors:
        for report in visitor.reports:
            start, end = context.span(report.node)
            row = start[0]
            if (
                apply_noqa
                and row <= len(lines)
                and noqa.is_suppressed(lines[row - 1], report.code)
            ):
                continue
            fix = fix_from_plan(context, report.fix) if report.fix else None
            if report.suppressed_by and fix is not None:
                # The author chose this code: changing it is never safe.
                fix = replace(fix, applicability="unsafe")
            finding = Finding(
                report.code,
                report.message,
                path,
                start,
                end,
                fix=fix,
                line_text=lines[row - 1] if row <= len(lines) else "",
                suppressed_by=report.suppressed_by,
            )
            if report.suppressed_by and not config.strict:
                suppressed.append(finding)
            else:
                findings.append(finding)
    findings.sort(key=lambda f: (f.location, f.code))
    suppressed.sort(key=lambda f: (f.location, f.code))
    return FileAnalysis(path, findings, suppressed=suppressed)
