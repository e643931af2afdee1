"""Fixes as text edits: built from the rules' fix plans, applied to text.

No file I/O here: the caller reads and writes files and passes in the
formatter (``formatting.py``) that lays out the statements edits touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from vllm_spec_lint.analysis import (
    NEWLINE,
    Edit,
    Finding,
    Fix,
    analyze_source,
    wanted,
)
from vllm_spec_lint.config import Config
from vllm_spec_lint.families import ClassHierarchy, short_name
from vllm_spec_lint.rewrite import FixPlan, with_imported_names
from vllm_spec_lint.semantics import FileContext

# Formatter: (text, [(start offset, end offset), ...]) -> text
Formatter = Callable[[str, list[tuple[int, int]]], str]


def line_starts(text: str) -> list[int]:
    """Offset of each line's start, splitting lines as Python does."""
    return [0] + [m.end() for m in NEWLINE.finditer(text)]


def _position(ctx: FileContext, node: cst.CSTNode) -> tuple[tuple[int, int], ...]:
    """1-based start and end of ``node``, its own parentheses included."""
    lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
    # Expressions and patterns hold parentheses as sequences; ImportFrom's
    # single lpar/rpar lie inside its own span.
    first = lpar[0] if isinstance(lpar, Sequence) and lpar else node
    last = rpar[-1] if isinstance(rpar, Sequence) and rpar else node
    return ctx.span(first)[0], ctx.span(last)[1]


def _code_in_place(ctx: FileContext, original: cst.CSTNode, node: cst.CSTNode) -> str:
    """``node``'s code as it reads where ``original`` stands: continuation
    lines keep the indentation of the blocks around it (``code_for_node``
    alone would write them as if at module level)."""
    from libcst._nodes.internal import CodegenState  # code_for_node's own state

    indents = []
    parent = ctx.parent(original)
    while parent is not None:
        if isinstance(parent, cst.IndentedBlock):
            indents.append(
                ctx.module.default_indent if parent.indent is None else parent.indent
            )
        parent = ctx.parent(parent)
    state = CodegenState(
        default_indent=ctx.module.default_indent,
        default_newline=ctx.module.default_newline,
        indent_tokens=indents[::-1],
    )
    node._codegen(state)
    return "".join(state.tokens)


def fix_from_plan(ctx: FileContext, plan: FixPlan) -> Fix | None:
    """The edits that carry out ``plan``; None when its import cannot be placed."""
    start, end = _position(ctx, plan.node)
    edits = [Edit(_code_in_place(ctx, plan.node, plan.replacement), start, end)]
    if plan.imports:
        import_edit = _import_edit(ctx, plan)
        if import_edit is None:
            return None
        edits.append(import_edit)
    return Fix(plan.applicability, plan.message, tuple(edits))


def _import_edit(ctx: FileContext, plan: FixPlan) -> Edit | None:
    """Import the plan's companions next to the anchor's own import: into the
    same ``from ... import`` statement, or on a line of their own after an
    ``as``-aliased one."""
    if not isinstance(plan.anchor, cst.Name):
        return None
    found = ctx.import_of(plan.anchor)
    if found is None:
        return None
    statement, alias = found
    names = [short_name(c) for c in plan.imports]
    if alias.asname is None:
        start, end = _position(ctx, statement)
        new = with_imported_names(statement, names)
        return Edit(ctx.module.code_for_node(new), start, end)
    line = ctx.parent(statement)
    (_, column), (end_row, _) = _position(ctx, line)
    newline = ctx.module.default_newline
    text = "".join(
        " " * (column - 1)
        + ctx.module.code_for_node(
            cst.ImportFrom(
                module=statement.module,
                relative=statement.relative,
                names=[cst.ImportAlias(cst.Name(n))],
            )
        )
        + newline
        for n in names
    )
    return Edit(text, (end_row + 1, 1), (end_row + 1, 1))


# -- applying ---------------------------------------------------------------


def _offset(starts: list[int], text: str, row_col: tuple[int, int]) -> int:
    row, column = row_col
    if row > len(starts):
        return len(text)
    return starts[row - 1] + column - 1


def apply_fixes(
    text: str, fixes: list[Fix]
) -> tuple[str, list[tuple[int, int]], list[int]]:
    """Apply every fix whose edits do not overlap an earlier fix's.

    Identical edits (the same import added for several findings) are made
    once. Returns the new text, the spans it changed (offsets in the new
    text) and the indices of the fixes applied.
    """
    starts = line_starts(text)
    accepted: dict[tuple[int, int, str], None] = {}
    applied = []
    for index, fix in enumerate(fixes):
        spans = [
            (
                _offset(starts, text, e.location),
                _offset(starts, text, e.end_location),
                e.content,
            )
            for e in fix.edits
        ]
        new = [s for s in spans if s not in accepted]
        if any(
            s[0] < a[1] and a[0] < s[1] or (s[0] == a[0] == s[1] == a[1])
            for s in new
            for a in accepted
        ):
            continue  # overlaps: the next pass gets it
        accepted.update(dict.fromkeys(new))
        applied.append(index)
    pieces, changed, cursor, shift = [], [], 0, 0
    for start, end, content in sorted(accepted):
        pieces.append(text[cursor:start])
        pieces.append(content)
        new_start = start + shift
        changed.append((new_start, new_start + len(content)))
        shift += len(content) - (end - start)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), changed, applied


@dataclass
class FixOutcome:
    text: str
    # The code of each finding fixed.
    fixed: tuple[str, ...] = ()
    remaining: list[Finding] = field(default_factory=list)
    failure: str | None = None


def fix_source(
    text: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy | None = None,
    *,
    module_name: str | None = None,
    unsafe: bool = False,
    formatter: Formatter | None = None,
    select: Callable[[Finding], bool] = lambda f: True,
    max_passes: int = 4,
) -> FixOutcome:
    """Fix ``text`` until nothing fixable is left (a few passes at most: a
    fix that overlaps another waits for the next pass)."""

    def analyze(source: str):
        return analyze_source(
            source, path, config, hierarchy, module_name=module_name
        ).findings

    current, fixed = text, ()
    findings = analyze(current)
    for _ in range(max_passes):
        todo = [f for f in findings if wanted(f, unsafe) and select(f)]
        if not todo or any(f.code == "VSL900" for f in findings):
            break
        new, changed, applied = apply_fixes(current, [f.fix for f in todo])
        if formatter is not None and changed:
            new = formatter(new, changed)
        findings = analyze(new)
        if any(f.code == "VSL900" for f in findings):
            return FixOutcome(
                text, failure="the fixed code does not parse; not written"
            )
        current = new
        fixed += tuple(todo[i].code for i in applied)
    still = [f for f in findings if wanted(f, unsafe) and select(f)]
    if still:
        return FixOutcome(
            text,
            remaining=findings,
            failure=f"{still[0].code} at {still[0].location[0]}:{still[0].location[1]}"
            " is still reported after fixing; not written",
        )
    return FixOutcome(current, fixed, findings)
