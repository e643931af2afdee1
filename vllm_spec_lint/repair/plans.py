"""How a finding's code is repaired, as libcst node replacements.

Rules call these to describe a fix (a :class:`FixPlan`); ``fixes.py`` turns
plans into text edits and applies them. The companion goes right after the
anchor, in the container style the code already uses; layout is left to the
formatter.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.model.syntax import code_of, unparenthesized


@dataclass(frozen=True)
class FixPlan:
    """Replace ``node`` with ``replacement`` (None: leave it), and put the
    lines ``after`` (statements or decorators) right after ``node``'s last
    line, at its indentation. ``imports`` are companions the new code names
    bare, to be imported where ``anchor`` is imported from."""

    node: cst.CSTNode
    replacement: cst.CSTNode | None
    message: str
    anchor: cst.BaseExpression
    imports: tuple[str, ...] = ()
    after: tuple[cst.CSTNode, ...] = ()
    # As ruff defines it: every plan here changes which values a class test
    # admits (that is what adding a companion does), so none keeps the
    # code's behaviour and none is safe. A project may promote a rule's
    # fixes (extend-safe-fixes); core/analysis.py applies that.
    applicability: str = "unsafe"


_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def flat_tuple(values: list[cst.BaseExpression]) -> cst.Tuple:
    """``(a, b, c)`` on one line."""
    last = len(values) - 1
    return cst.Tuple(
        [
            cst.Element(v, _COMMA if i < last else cst.MaybeSentinel.DEFAULT)
            for i, v in enumerate(values)
        ]
    )


def _has_newline(node: cst.CSTNode) -> bool:
    return "\n" in code_of(node)


def companion_expressions(
    model: SemanticModel, anchor: cst.BaseExpression, companions: list[str]
) -> tuple[list[cst.BaseExpression], tuple[str, ...]] | None:
    """How to name each companion next to ``anchor``, and which need an import.

    ``mod.MLAAttentionSpec`` gives ``mod.SlidingWindowMLASpec``; a bare name
    gives the name the companion is already bound to in that scope, or its
    class name plus an import. None when the name is taken by something
    else, or when a companion of another module is not bound in scope.
    """
    anchor_class = model.names.class_of(anchor) or ""
    module = anchor_class.rpartition(".")[0]
    # A companion from another module (a plugin's stand-in beside vLLM's
    # class) is named only where a name is bound to it already.
    elsewhere = [c for c in companions if c.rpartition(".")[0] != module]
    if isinstance(anchor, cst.Attribute) and not elsewhere:
        return [
            anchor.with_changes(attr=cst.Name(short_name(c))) for c in companions
        ], ()
    expressions, imports = [], []
    for companion in companions:
        bound = model.names.bound_name(anchor, companion)
        if bound is not None:
            expressions.append(cst.Name(bound))
            continue
        if companion in elsewhere or isinstance(anchor, cst.Attribute):
            return None
        name = short_name(companion)
        if model.names.name_is_taken(anchor, name):
            return None
        expressions.append(cst.Name(name))
        imports.append(companion)
    return expressions, tuple(imports)


def _without_comment(comma: cst.Comma) -> cst.Comma:
    """The same comma and line break, minus any comment after it."""
    after = comma.whitespace_after
    if isinstance(after, cst.ParenthesizedWhitespace):
        return comma.with_changes(
            whitespace_after=after.with_changes(
                first_line=cst.TrailingWhitespace(), empty_lines=()
            )
        )
    return comma


def _closer(node: cst.CSTNode):
    """The closing bracket whose ``whitespace_before`` holds the line break
    (and any comment) after the last item of a multi-line container."""
    if isinstance(node, cst.Tuple) or isinstance(node, cst.ImportFrom):
        parens = node.rpar if isinstance(node, cst.Tuple) else [node.rpar]
        return parens[-1] if parens and parens[-1] is not None else None
    if isinstance(node, cst.List):
        return node.rbracket
    if isinstance(node, (cst.Set, cst.Dict)):
        return node.rbrace
    return None


def _with_closer(node: cst.CSTNode, closer) -> cst.CSTNode:
    if isinstance(node, cst.Tuple):
        return node.with_changes(rpar=[*node.rpar[:-1], closer])
    if isinstance(node, cst.ImportFrom):
        return node.with_changes(rpar=closer)
    if isinstance(node, cst.List):
        return node.with_changes(rbracket=closer)
    return node.with_changes(rbrace=closer)


def insert_items(container: cst.CSTNode, field: str, index: int, new: list):
    """``container`` with ``new`` items (tuple elements or import aliases)
    inserted into its ``field`` at ``index``, punctuated like their neighbours."""
    items = list(getattr(container, field))
    last = index == len(items)
    if not _has_newline(container):
        # One line: "a, b" separators; a lone "(A,)" comma is not kept.
        new = [n.with_changes(comma=_COMMA) for n in new]
        if last:
            own = items[-1].comma
            new[-1] = new[-1].with_changes(
                comma=own if len(items) > 1 else cst.MaybeSentinel.DEFAULT
            )
            items[-1] = items[-1].with_changes(comma=_COMMA)
        items[index:index] = new
        return container.with_changes(**{field: items})
    # One per line: new items take a line break like their neighbours'; a
    # comment after an existing item stays on that item's line.
    closer = _closer(container)
    breaks = [i.comma for i in items[:-1] if isinstance(i.comma, cst.Comma)]
    if breaks:
        between = _without_comment(breaks[0])
    elif closer is not None and isinstance(
        closer.whitespace_before, cst.ParenthesizedWhitespace
    ):
        closing = closer.whitespace_before
        between = cst.Comma(
            whitespace_after=closing.with_changes(
                first_line=cst.TrailingWhitespace(),
                empty_lines=(),
                last_line=cst.SimpleWhitespace(closing.last_line.value + "    "),
            )
        )
    else:
        between = _COMMA
    new = [n.with_changes(comma=between) for n in new]
    if last:
        own = items[-1].comma
        own_break = isinstance(own, cst.Comma) and isinstance(
            own.whitespace_after, cst.ParenthesizedWhitespace
        )
        one_per_line = isinstance(between.whitespace_after, cst.ParenthesizedWhitespace)
        if own_break and not one_per_line:
            # One item, or all on one line: the break after the opening
            # parenthesis says which.
            opening = _opening_break(container)
            if opening is not None:
                between, one_per_line = cst.Comma(whitespace_after=opening), True
        if one_per_line and own_break:
            new[-1] = new[-1].with_changes(comma=_without_comment(own))
            items[-1] = items[-1].with_changes(
                comma=own.with_changes(
                    whitespace_after=_indented_like(own.whitespace_after, between)
                )
            )
        elif one_per_line and isinstance(
            closer.whitespace_before, cst.ParenthesizedWhitespace
        ):
            # libcst keeps the last line break and its comment before the
            # closing bracket: it moves to the old last item's comma.
            closing = closer.whitespace_before
            before = own.whitespace_before if isinstance(own, cst.Comma) else None
            moved = cst.Comma(whitespace_after=_indented_like(closing, between))
            if before is not None:
                moved = moved.with_changes(whitespace_before=before)
            items[-1] = items[-1].with_changes(comma=moved)
            new[-1] = new[-1].with_changes(comma=own)
            container = _with_closer(
                container,
                closer.with_changes(
                    whitespace_before=closing.with_changes(
                        first_line=cst.TrailingWhitespace(), empty_lines=()
                    )
                ),
            )
        else:  # on one line: the new items join it, before any line break
            items[-1] = items[-1].with_changes(comma=between)
            new[-1] = new[-1].with_changes(comma=own)
    items[index:index] = new
    return container.with_changes(**{field: items})


def _opening_break(container: cst.CSTNode):
    """The line break after an import's opening parenthesis, which indents its
    first name; None where the first name follows on the same line. (libcst
    keeps the break before a display's closer there, not after its last
    comma: only an import's last comma breaks the line.)"""
    opener = container.lpar if isinstance(container, cst.ImportFrom) else None
    after = opener.whitespace_after if opener is not None else None
    if isinstance(after, cst.ParenthesizedWhitespace):
        return after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
    return None


def _indented_like(
    whitespace: cst.ParenthesizedWhitespace, between: cst.Comma
) -> cst.ParenthesizedWhitespace:
    """``whitespace``'s comment and line break, indented like ``between``'s."""
    target = between.whitespace_after
    return whitespace.with_changes(indent=target.indent, last_line=target.last_line)


def _insert_after(
    container: cst.Tuple | cst.List | cst.Set,
    element: cst.Element,
    values: list[cst.BaseExpression],
) -> cst.Tuple | cst.List | cst.Set:
    index = next(i for i, e in enumerate(container.elements) if e is element)
    return insert_items(
        container, "elements", index + 1, [cst.Element(v) for v in values]
    )


def _import_sort_key(name: str) -> tuple[int, str, str]:
    """ruff/isort order within ``from m import ...``: CONSTANTS, Classes,
    then everything else, each case-insensitively (ties: uppercase first)."""
    if name.isupper() and len(name) > 1:
        return 0, name.lower(), name
    return (1 if name[:1].isupper() else 2), name.lower(), name


def with_imported_names(statement: cst.ImportFrom, names: list[str]) -> cst.ImportFrom:
    """``statement`` also importing ``names``, each at its sorted position."""
    for name in names:
        key = _import_sort_key(name)
        index = next(
            (
                i
                for i, a in enumerate(statement.names)
                if _import_sort_key(a.evaluated_name) > key
            ),
            len(statement.names),
        )
        statement = insert_items(
            statement, "names", index, [cst.ImportAlias(cst.Name(name))]
        )
    return statement


def add_companions(
    model: SemanticModel,
    anchor: cst.BaseExpression,
    companions: list[str],
) -> FixPlan | None:
    """Add ``companions`` right after the ``anchor`` reference in a class
    collection: the bare classinfo becomes a tuple, a tuple or list gets new
    elements, a union gets ``| Companion``."""
    named = companion_expressions(model, anchor, companions)
    if named is None:
        return None
    values, imports = named
    message = f"Add {', '.join(short_name(c) for c in companions)}"
    parent = model.parent(anchor)
    if isinstance(parent, cst.Element):
        container = model.parent(parent)
        if isinstance(container, (cst.Tuple, cst.List, cst.Set)):
            replacement = _insert_after(container, parent, values)
            return FixPlan(container, replacement, message, anchor, imports)
        return None
    if isinstance(parent, cst.BinaryOperation) and isinstance(
        parent.operator, cst.BitOr
    ):
        replacement = anchor
        for value in values:
            replacement = cst.BinaryOperation(replacement, cst.BitOr(), value)
        return FixPlan(anchor, replacement, message, anchor, imports)
    if isinstance(parent, cst.Arg):
        replacement = flat_tuple([unparenthesized(anchor), *values])
        return FixPlan(anchor, replacement, message, anchor, imports)
    return None


def exact_comparison_to_membership(
    model: SemanticModel,
    comparison: cst.Comparison,
    type_side: cst.BaseExpression,
    anchor: cst.BaseExpression,
    companions: list[str],
    positive: bool,
) -> FixPlan | None:
    """``type(x) is A`` -> ``type(x) in (A, C)``; ``is not``/``!=`` -> ``not in``."""
    named = companion_expressions(model, anchor, companions)
    if named is None:
        return None
    values, imports = named
    return _membership(comparison, type_side, anchor, values, positive, imports)


def _membership(
    comparison: cst.Comparison,
    kept_side: cst.BaseExpression,
    anchor: cst.BaseExpression,
    values: list[cst.BaseExpression],
    positive: bool,
    imports: tuple[str, ...],
) -> FixPlan:
    """``kept_side (in | not in) (anchor, *values)`` in place of ``comparison``."""
    operator = cst.NotIn() if not positive else cst.In()
    replacement = comparison.with_changes(
        left=kept_side,
        comparisons=[
            cst.ComparisonTarget(
                operator, flat_tuple([unparenthesized(anchor), *values])
            )
        ],
    )
    message = (
        f"Compare with ({code_of(anchor)}, {', '.join(code_of(v) for v in values)})"
    )
    return FixPlan(comparison, replacement, message, anchor, imports)


def add_class_names(
    model: SemanticModel,
    anchor: cst.SimpleString,
    companions: list[str],
) -> FixPlan | None:
    """Add the companions' class names, quoted like ``anchor``, next to it: a
    display of names gets new elements; ``<name> == "A"`` becomes
    ``<name> in ("A", "C")`` (``!=`` becomes ``not in``)."""
    values = [
        cst.SimpleString(f"{anchor.prefix}{anchor.quote}{short_name(c)}{anchor.quote}")
        for c in companions
    ]
    parent = model.parent(anchor)
    if isinstance(parent, cst.Element):
        container = model.parent(parent)
        if isinstance(container, (cst.Tuple, cst.List, cst.Set)):
            message = f"Add {', '.join(code_of(v) for v in values)}"
            replacement = _insert_after(container, parent, values)
            return FixPlan(container, replacement, message, anchor)
        return None
    if isinstance(parent, cst.ComparisonTarget):
        parent = model.parent(parent)
    if not isinstance(parent, cst.Comparison) or len(parent.comparisons) != 1:
        return None
    operator = parent.comparisons[0].operator
    if not isinstance(operator, (cst.Equal, cst.NotEqual)):
        return None
    other = (
        parent.left
        if anchor is parent.comparisons[0].comparator
        else (parent.comparisons[0].comparator)
    )
    positive = isinstance(operator, cst.Equal)
    return _membership(parent, other, anchor, values, positive, ())


def add_companion_patterns(
    model: SemanticModel, pattern: cst.MatchClass, companions: list[str]
) -> FixPlan | None:
    """``case A():`` -> ``case A() | C():``, for patterns without sub-patterns."""
    if pattern.patterns or pattern.kwds:
        return None
    named = companion_expressions(model, pattern.cls, companions)
    if named is None:
        return None
    values, imports = named
    alternatives = [pattern.with_changes(lpar=(), rpar=())]
    alternatives += [cst.MatchClass(v) for v in values]
    # libcst writes " | " between alternatives by default.
    replacement = cst.MatchOr(
        [cst.MatchOrElement(p) for p in alternatives],
        lpar=pattern.lpar,
        rpar=pattern.rpar,
    )
    message = f"Add {' | '.join(short_name(c) + '()' for c in companions)}"
    return FixPlan(pattern, replacement, message, pattern.cls, imports)


def add_table_entries(
    model: SemanticModel,
    table: cst.Dict | cst.Call,
    element: cst.CSTNode,
    anchor: cst.BaseExpression,
    value: cst.BaseExpression,
    companions: list[str],
) -> FixPlan | None:
    """``{A: v}`` -> ``{A: v, C: v}`` (the anchor's value for the companion);
    in ``dict([(A, v)])`` a pair ``(C, v)``."""
    named = companion_expressions(model, anchor, companions)
    if named is None:
        return None
    keys, imports = named
    if isinstance(table, cst.Dict):
        container = table
        new = [cst.DictElement(k, value) for k in keys]
    else:
        container = table.args[0].value
        new = [cst.Element(flat_tuple([k, value])) for k in keys]
    index = next(i for i, e in enumerate(container.elements) if e is element)
    replacement = insert_items(container, "elements", index + 1, new)
    added = ", ".join(short_name(c) for c in companions)
    message = f"Add {added} with {code_of(anchor)}'s value"
    return FixPlan(container, replacement, message, anchor, imports)


def add_registrations(
    model: SemanticModel,
    site: cst.CSTNode,
    anchor: cst.BaseExpression,
    companions: list[str],
    dispatcher: str,
) -> FixPlan | None:
    """Register each companion as the anchor is: after ``@f.register`` (or
    ``@f.register(A)``) a decorator ``@f.register(C)``; after a statement
    ``R.register(A, ...)`` the same statement naming ``C``."""
    named = companion_expressions(model, anchor, companions)
    if named is None:
        return None
    values, imports = named
    if isinstance(site, cst.Decorator):
        register = cst.parse_expression(f"{dispatcher}.register")
        after = tuple(cst.Decorator(cst.Call(register, [cst.Arg(v)])) for v in values)
    elif isinstance(site, cst.SimpleStatementLine):
        # The copy takes neither the comment lines above nor the comment after.
        after = tuple(
            site.deep_replace(anchor, v).with_changes(
                leading_lines=(),
                trailing_whitespace=cst.TrailingWhitespace(
                    newline=site.trailing_whitespace.newline
                ),
            )
            for v in values
        )
    else:
        return None
    message = (
        f"Register {', '.join(short_name(c) for c in companions)} as {code_of(anchor)}"
    )
    return FixPlan(site, None, message, anchor, imports, after)
