"""The text edits that carry out a rule's fix plan (plans.py)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.repair.plans import FixPlan, with_imported_names
from vllm_spec_lint.repair.text import Edit, Fix


def _position(model: SemanticModel, node: cst.CSTNode) -> tuple[tuple[int, int], ...]:
    """1-based start and end of ``node``, its own parentheses included."""
    lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
    # Expressions and patterns hold parentheses as sequences; ImportFrom's
    # single lpar/rpar lie inside its own span.
    first = lpar[0] if isinstance(lpar, Sequence) and lpar else node
    last = rpar[-1] if isinstance(rpar, Sequence) and rpar else node
    return model.span(first)[0], model.span(last)[1]


def _code_in_place(
    model: SemanticModel, original: cst.CSTNode, node: cst.CSTNode
) -> str:
    """``node``'s code as it reads where ``original`` stands: continuation
    lines keep the indentation of the blocks around it (``code_for_node``
    alone would write them as if at module level)."""
    from libcst._nodes.internal import CodegenState  # code_for_node's own state

    indents = []
    parent = model.parent(original)
    while parent is not None:
        if isinstance(parent, cst.IndentedBlock):
            indents.append(
                model.module.default_indent if parent.indent is None else parent.indent
            )
        parent = model.parent(parent)
    state = CodegenState(
        default_indent=model.module.default_indent,
        default_newline=model.module.default_newline,
        indent_tokens=indents[::-1],
    )
    node._codegen(state)
    return "".join(state.tokens)


def fix_from_plan(model: SemanticModel, plan: FixPlan) -> Fix | None:
    """The edits that carry out ``plan``; None when its import cannot be placed."""
    start, end = _position(model, plan.node)
    edits = []
    if plan.replacement is not None:
        edits.append(
            Edit(_code_in_place(model, plan.node, plan.replacement), start, end)
        )
    if plan.after:
        # Whole lines, after the node's last line (a node's span ends after
        # its last character, never at a line's start); each node writes its
        # own indentation and line break.
        row = end[0] + 1
        text = "".join(_code_in_place(model, plan.node, n) for n in plan.after)
        edits.append(Edit(text, (row, 1), (row, 1)))
    if plan.imports:
        import_edit = _import_edit(model, plan)
        if import_edit is None:
            return None
        edits.append(import_edit)
    return Fix(plan.applicability, plan.message, tuple(edits))


def _import_edit(model: SemanticModel, plan: FixPlan) -> Edit | None:
    """Import the plan's companions next to the anchor's own import: into the
    same ``from ... import`` statement, or on a line of their own after an
    ``as``-aliased one."""
    if not isinstance(plan.anchor, cst.Name):
        return None
    found = model.names.import_of(plan.anchor)
    if found is None:
        return None
    statement, alias = found
    names = [short_name(c) for c in plan.imports]
    if alias.asname is None:
        start, end = _position(model, statement)
        new = with_imported_names(statement, names)
        return Edit(model.module.code_for_node(new), start, end)
    line = model.parent(statement)
    (_, column), (end_row, _) = _position(model, line)
    newline = model.module.default_newline
    text = "".join(
        " " * (column - 1)
        + model.module.code_for_node(
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
