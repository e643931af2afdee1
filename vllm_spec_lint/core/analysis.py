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
from dataclasses import replace
from pathlib import PurePath

from vllm_spec_lint.core import noqa
from vllm_spec_lint.core.findings import (
    FileAnalysis,
    Finding,
    parse_error,
)
from vllm_spec_lint.core.last_analysis import LastAnalysis
from vllm_spec_lint.core.name_search import NameSearch
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.ast_fields import CANNOT_PARSE, TOO_DEEP
from vllm_spec_lint.model.hierarchy import ClassHierarchy, short_name
from vllm_spec_lint.model.lines import split_lines


def might_have_findings(
    source: bytes, config: Config, hierarchy: ClassHierarchy | None = None
) -> bool:
    """Cheap, sound test on the raw bytes: every finding names an anchor
    class, or a companion's own parent (VSL007), in the file, so a file
    without any of those names has none."""
    hierarchy = hierarchy or _default_hierarchy()
    return _screen_search(config.families, hierarchy).found_in(source)


# One object, so that screened_names' memo (by identity) holds across calls;
# built on first use, not at import (mutmut's stats cannot follow a call made
# while a module is imported).
@functools.cache
def _default_hierarchy() -> ClassHierarchy:
    return ClassHierarchy.default()


# (families, hierarchy) -> their search; the hierarchy (unhashable) kept by
# identity.
_SCREENED: dict[tuple, tuple[ClassHierarchy, NameSearch]] = {}


def screened_names(families: tuple, hierarchy: ClassHierarchy) -> tuple[bytes, ...]:
    """The names a file must hold to have a finding."""
    return _screen_search(families, hierarchy).names


def _screen_search(families: tuple, hierarchy: ClassHierarchy) -> NameSearch:
    key = (families, id(hierarchy))
    known = _SCREENED.get(key)
    if known is not None and known[0] is hierarchy:
        return known[1]
    names = {short_name(f.anchor) for f in families}
    for family in families:
        for parents in hierarchy.companion_parents(family).values():
            names.update(short_name(p) for p in parents)
    screened = NameSearch(n.encode() for n in names)
    if len(_SCREENED) > 16:
        _SCREENED.clear()
    _SCREENED[key] = (hierarchy, screened)
    return screened


def _ignored_for_path(path: str, config: Config) -> tuple[str, ...]:
    relative = PurePath(os.path.relpath(os.path.abspath(path), config.root))
    candidates = (relative.as_posix(), PurePath(path).name)
    return tuple(
        code
        for pattern, codes in config.per_file_ignores
        for code in codes
        if any(fnmatch.fnmatch(c, pattern) for c in candidates)
    )


# "error at 5:0: " in libcst's refusals (a position in the slice it saw).
_SLICE_POSITION = re.compile(r"error at \d+:\d+: ")


def _parse_error_of(exc: BaseException, path: str) -> Finding:
    if isinstance(exc, SyntaxError):
        row, column = exc.lineno or 1, exc.offset or 1
        return parse_error(path, f"cannot parse: {exc.msg}", row, max(column, 1))
    if isinstance(exc, TOO_DEEP):
        return parse_error(path, "cannot parse: nested too deeply")
    return parse_error(path, f"cannot parse: {exc}")


@contextmanager
def gc_paused(*, survivors_old: bool = False) -> Iterator[None]:
    """Parsing builds hundreds of thousands of short-lived, acyclic nodes; the
    cycle collector would walk them again and again (about half of parse
    time). Reference counting frees them; the collector runs afterwards,
    unless it was off already (a caller's own pause).

    ``survivors_old``: what the block made and left alive joins the oldest
    generation. Resumed as it was, the collector counts it all young, and
    the first allocation after walks it whole: about 40 ms after a whole
    tree, in a process about to end. Frozen and unfrozen (two list splices
    in CPython) it is old, walked at the next full collection like anything
    that lived through the young ones. Not when something is frozen already
    (a host's ``gc.freeze()``): unfreezing would let it go too."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if survivors_old and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _visit(module, visitors) -> None:
    """Call each rule's ``visit_<Node>`` methods on every node, parents
    first. Our own walk (syntax.walk) rather than libcst's visitor machinery,
    which rebuilds every node it passes; rules never prune the walk."""
    import libcst as cst

    from vllm_spec_lint.model.syntax import walk

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
    last: LastAnalysis | None = None,
) -> FileAnalysis:
    """Run every selected rule over one file's (decoded) source.

    ``module_name`` (``vllm.v1.core.x``) resolves relative imports and
    recognises a family's own module; ``apply_noqa`` is off for flake8,
    which applies ``# noqa`` itself and hands over its ``ast`` ``tree`` of
    the source. ``last``, the file's last analysis, is reused when the
    file's slice has not changed (and updated when it has).
    """
    with gc_paused():
        return _analyze_source(
            source, path, config, hierarchy, module_name, apply_noqa, tree, last
        )


def _analyze_source(
    source: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy | None,
    module_name: str | None,
    apply_noqa: bool,
    tree,
    last: LastAnalysis | None,
) -> FileAnalysis:
    hierarchy = hierarchy or ClassHierarchy.default()
    relevant = _screen(source, path, config, hierarchy, module_name, tree)
    if isinstance(relevant, FileAnalysis):
        return relevant
    key = (relevant.text, path, module_name, config, apply_noqa)
    if last is not None:
        reused = last.reuse(key, hierarchy, relevant.rows, source)
        if reused is not None:
            return reused
    analysis = _analyze_slice(
        relevant, source, path, config, hierarchy, module_name, apply_noqa
    )
    if last is not None:
        last.keep(key, hierarchy, relevant.rows, analysis)
    return analysis


def screen_source(
    source: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy,
    *,
    module_name: str | None = None,
):
    """The first half of :func:`analyze_source`, without libcst: the file's
    analysis when CPython's parser and the slicer settle it (no candidate,
    or a parse error), else the slice (core/slicing.py) that
    :func:`analyze_slice` finishes."""
    with gc_paused():
        return _screen(source, path, config, hierarchy, module_name, None)


def analyze_slice(
    relevant,
    source: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy,
    *,
    module_name: str | None = None,
) -> FileAnalysis:
    """The second half of :func:`analyze_source`: the rules over the slice
    :func:`screen_source` returned for ``source``."""
    with gc_paused():
        return _analyze_slice(
            relevant, source, path, config, hierarchy, module_name, True
        )


def _screen(source, path, config, hierarchy, module_name, tree):
    import ast

    from vllm_spec_lint.core.partial_parse import statements_naming
    from vllm_spec_lint.core.slicing import Screen, relevant_source

    screen = Screen.build(config, hierarchy, module_name)
    # A file that does not parse is reported, whatever the selection (as
    # ruff reports syntax errors, and as unreadable files are): where the
    # statements that can matter do not, or anywhere once it is parsed
    # whole (partial_parse.py).
    try:
        # CPython's parser decides what is valid Python; libcst then sees
        # only the parts of the file the rules can act on (slicing.py).
        if tree is None:
            tree = statements_naming(source, screen.looked_for) or ast.parse(source)
        relevant = relevant_source(source, tree, screen)
    except CANNOT_PARSE as e:
        return FileAnalysis([_parse_error_of(e, path)])
    if not relevant.has_candidates:
        return FileAnalysis([])
    if relevant.too_deep is not None:
        error = parse_error(path, "cannot parse: nested too deeply", relevant.too_deep)
        return FileAnalysis([error])
    return relevant


def _analyze_slice(
    relevant, source, path, config, hierarchy, module_name, apply_noqa
) -> FileAnalysis:
    import libcst as cst

    from vllm_spec_lint.model.semantic_model import SemanticModel
    from vllm_spec_lint.rules import ALL_RULES

    ignored = _ignored_for_path(path, config)
    rules = [r for r in ALL_RULES if config.is_enabled(r.CODE, ignored)]
    try:
        module = cst.parse_module(relevant.text)
    except cst.ParserSyntaxError as e:
        # libcst saw the slice: its row is mapped back to the file's, and the
        # slice's coordinates leave its message.
        row = relevant.rows[min(e.raw_line, len(relevant.rows)) - 1]
        message = _SLICE_POSITION.sub("", e.message, count=1)
        error = parse_error(path, f"cannot parse: {message}", row, e.raw_column + 1)
        return FileAnalysis([error])
    if not rules:
        return FileAnalysis([])
    try:
        model = SemanticModel(
            module,
            relevant.text,
            families=config.families,
            hierarchy=hierarchy,
            module_name=module_name,
            rows=relevant.rows,
            statement_rows=relevant.statement_rows,
        )
        visitors = [rule(model) for rule in rules]
        _visit(module, visitors)
        reports = [report for visitor in visitors for report in visitor.reports]
        return _file_analysis(model, reports, source, path, config, apply_noqa)
    except RecursionError:
        # Our walks and libcst's code generation (positions, fixes) recurse
        # once per level of nesting.
        return FileAnalysis([parse_error(path, "cannot analyse: nested too deeply")])


def _file_analysis(
    model, reports: list, source: str, path: str, config: Config, apply_noqa: bool
) -> FileAnalysis:
    """The rules' reports as findings on the file's own rows and text."""
    from vllm_spec_lint.repair.edits import fix_from_plan

    lines = split_lines(source)
    findings, suppressed = [], []
    for report in reports:
        start, end = model.span(report.node)
        line = lines[start[0] - 1]  # a finding's row is always one of the file's
        silenced = apply_noqa and any(
            noqa.is_suppressed(line, code) for code in (report.code, *report.follows)
        )
        if silenced and not config.noqa_as_suppression:
            continue
        if silenced:
            report = replace(report, suppressed_by="noqa: the line's noqa comment")
        fix = fix_from_plan(model, report.fix) if report.fix else None
        # A project may promote a rule's fixes to safe (extend-safe-fixes),
        # never where the author chose the code (a suppressed site) or where
        # the family is a guess (a discovered twin).
        if fix is not None and not (report.suppressed_by or report.guessed_family):
            fix = replace(fix, applicability=config.fix_applicability(report.code, fix))
        finding = Finding(
            report.code,
            report.message,
            path,
            start,
            end,
            fix=fix,
            line_text=line,
            suppressed_by=report.suppressed_by,
            own_spec=report.own_spec,
            follows=report.follows,
        )
        if report.suppressed_by and not config.strict:
            suppressed.append(finding)
        else:
            findings.append(finding)
    findings.sort(key=lambda f: (f.location, f.code))
    suppressed.sort(key=lambda f: (f.location, f.code))
    return FileAnalysis(findings, suppressed=suppressed)
