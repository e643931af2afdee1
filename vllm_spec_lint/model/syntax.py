"""Syntax helpers every layer above uses: walking libcst trees in source
order, parents, an expression's code, what a statement assigns."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import libcst as cst

_EMPTY_MODULE = cst.Module([])
_WHITESPACE = re.compile(r"\s+")

# Fields that hold only whitespace, comments and punctuation: most of a
# libcst tree, and nothing the rules look at (parentheses are kept: fixes
# replace an expression with its own parentheses).
_LAYOUT_FIELDS = frozenset(
    {
        "comma", "colon", "dot", "equal", "semicolon", "operator",
        "leading_lines", "trailing_whitespace", "lines_after_decorators",
        "header", "footer", "newline", "empty_lines", "lbrace", "rbrace",
        "lbracket", "rbracket", "first_colon", "second_colon", "posonly_ind",
    }
)  # fmt: skip
# Field orders that differ from the source order (libcst declares these
# fields in another order): walks visit code as it reads. A field this
# libcst does not have is passed over; one it adds comes last.
_SOURCE_ORDER = {
    cst.IfExp: ("lpar", "body", "test", "orelse", "rpar"),
    cst.FunctionDef: (
        "decorators", "asynchronous", "name", "type_parameters", "params",
        "returns", "body",
    ),
    cst.ClassDef: (
        "decorators", "name", "type_parameters", "lpar", "bases", "keywords",
        "rpar", "body",
    ),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.Arg: ("keyword", "value"),
    cst.ImportFrom: ("relative", "module", "lpar", "names", "rpar"),
    cst.Parameters: (
        "posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"
    ),
}  # fmt: skip
_PARENS = ("lpar", "rpar")
_FIELDS: dict[type, tuple[str, ...]] = {}

# Node classes by what they are, for ``type(node) in ...``: isinstance()
# takes libcst's slow path (see walk) for every class a node is not.
COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})
# Definitions: a body of code under a name or a lambda.
DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
# Nodes whose names are their own scope's, not the enclosing one's.
OWN_SCOPES = DEFINITIONS | COMPREHENSIONS
# Code that runs only when called.
FUNCTIONS = frozenset({cst.FunctionDef, cst.Lambda})
# What a statement's assignments leave out: functions, lambdas and
# comprehensions' clauses, whose names are their own.
_ASSIGNMENTS_PRUNE = FUNCTIONS | {cst.CompFor}
# The assigning nodes that bind their ``target``.
_TARGET_HOLDERS = frozenset(
    {cst.AssignTarget, cst.AugAssign, cst.For, cst.NamedExpr, cst.Del}
)


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Direct children that are code (not layout), in source order."""
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        fields = [
            name
            for name in kind.__dataclass_fields__
            if name not in _LAYOUT_FIELDS and not name.startswith(("whitespace", "_"))
        ]
        order = _SOURCE_ORDER.get(kind)
        if order is None:  # parentheses around the rest
            order = ("lpar", *(f for f in fields if f not in _PARENS), "rpar")
        names = _FIELDS[kind] = (
            *(f for f in order if f in fields),
            *(f for f in fields if f not in order),
        )
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                if _is_node(type(item)):
                    yield item
        elif _is_node(kind):
            yield value


@functools.cache
def _is_node(kind: type) -> bool:
    # isinstance() against libcst's abstract node class is slow, and walks
    # ask it for every field of every node.
    return issubclass(kind, cst.CSTNode)


def walk(
    node: cst.CSTNode, prune: frozenset[type] = frozenset()
) -> Iterator[cst.CSTNode]:
    """``node`` and its code descendants, parents first, in source order;
    the children of nodes whose class is in ``prune`` are left out. Several
    times faster than a libcst visitor, which rebuilds every node it passes.

    ``prune`` holds node classes themselves, not bases: a set lookup of a
    node's class, where isinstance() takes libcst's slow path (every node
    class derives from an abstract one) for every class it is not."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if type(current) not in prune:
            stack.extend(reversed(list(child_nodes(current))))


def parent_map(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each code node's parent (layout nodes left out). libcst's
    ParentNodeProvider visits every node's children twice over and costs
    several times more."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        for child in child_nodes(node):
            parents[child] = node
            stack.append(child)
    return parents


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY_MODULE.code_for_node(node)


def unparenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if not expr.lpar or (isinstance(expr, cst.Tuple) and not expr.elements):
        return expr  # ``()`` is its parentheses
    return expr.with_changes(lpar=(), rpar=())


def target_key(expr: cst.BaseExpression) -> str | None:
    """A key equal for structurally equal targets (``s``, ``self.spec``,
    ``specs[i]``); None for anything whose value could differ between two
    evaluations (calls and the like)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = target_key(expr.value)
        return None if base is None else f"{base}.{expr.attr.value}"
    if isinstance(expr, cst.Subscript):
        base = target_key(expr.value)
        if base is None:
            return None
        index = ",".join(code_of(element.slice) for element in expr.slice)
        return f"{base}[{_WHITESPACE.sub('', index)}]"
    return None


def assignment_targets(statement: cst.CSTNode) -> Iterator[tuple]:
    """What a statement assigns to (not in nested functions, lambdas and
    comprehensions, whose names are their own), each with the node to place
    it by."""
    for node in walk(statement, prune=_ASSIGNMENTS_PRUNE):
        target = _bound_by(node)
        if target is not None:
            yield from _targets(target, node)


def _bound_by(node: cst.CSTNode) -> cst.CSTNode | None:
    """What an assigning node binds; None for any other node, for an
    annotation without a value, and for ``import a.b as c`` (its AsName
    binds)."""
    kind = type(node)
    if kind in _TARGET_HOLDERS:
        return node.target
    if kind is cst.AnnAssign:
        return node.target if node.value is not None else None
    if kind is cst.AsName:
        return node.name
    if kind is cst.ImportAlias and node.asname is None:
        return _leftmost(node.name)  # `import a.b` binds `a`
    return None


def _leftmost(name: cst.Attribute | cst.Name) -> cst.Name:
    while isinstance(name, cst.Attribute):
        name = name.value
    return name


def _targets(target: cst.CSTNode, at: cst.CSTNode) -> Iterator[tuple]:
    # A starred target (`a, *b = ...`) is an element of a tuple or list: its
    # value is the name.
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _targets(element.value, at)
    elif isinstance(target, cst.BaseExpression):
        yield target, at
