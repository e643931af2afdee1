"""The syntax helpers against libcst itself: `child_nodes` yields a node's
children as libcst's own `children` does (source order), less layout.

The order of a node kind is worked out the first time the kind is seen;
conftest's ``cold_caches`` empties that cache before each test, so that a
cache filled by an earlier test (or, under mutmut, by the process the test
was forked from) does not hide how it is worked out."""

from __future__ import annotations

import libcst as cst
import pytest

from vllm_spec_lint.model.syntax import (
    child_nodes,
    code_of,
    parent_map,
    target_key,
    unparenthesized,
    walk,
)

# What libcst keeps besides code: whitespace, punctuation, operators.
LAYOUT = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comma,
    cst.Colon,
    cst.Dot,
    cst.Semicolon,
    cst.AssignEqual,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.ParamSlash,
)

SOURCE = """\
from ..v1 import (kv_cache_interface as kci)
import os, sys


@register("mla")
class Spec(Base, metaclass=Meta):
    def f(self, a: int = (1), /, *args, b, **kw) -> (bool):
        if (isinstance(self, (kci.MLAAttentionSpec))):
            return a if (a > 0) else -a
        x = [i for i in (args) if not i]
        y = {k: v for k, v in kw.items()}
        match a:
            case Point(x=0) as p if p:
                pass
        try:
            pass
        except (ValueError) as err:
            raise
        z = lambda q=1: q
        a += 1; b = 2
        return (x, y, z, self.spec[i, 1 : 2 : 3], f(b, *args, key=(a)))
        # a comment after the block's last statement (its footer)


@register("twice")
# between the decorator and the class
class Other:
    pass


class Generic[T](Base):
    async def g[U](self, u: U) -> T:
        pass
# the module's footer
"""


def _libcst_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """libcst's own children, in source order, less layout. The dots of a
    relative import are code here: they say which package it names."""
    return [
        child
        for child in node.children
        if not isinstance(child, LAYOUT)
        or (isinstance(child, cst.Dot) and isinstance(node, cst.ImportFrom))
    ]


def _all_nodes(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _all_nodes(child)


def test_child_nodes_are_libcsts_children_in_source_order_less_layout():
    # Type parameters are 3.12 syntax, whatever Python runs the test.
    module = cst.parse_module(SOURCE, cst.PartialParserConfig(python_version="3.12"))
    compared = 0
    for node in _all_nodes(module):
        if isinstance(node, LAYOUT):
            continue
        assert list(child_nodes(node)) == _libcst_children(node), code_of(node)
        compared += 1
    assert compared > 150


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # Parentheses come first and last around an expression's own fields.
        ("(a)", ["LeftParen", "RightParen"]),  # a Name's value is text
        ("(-a)", ["LeftParen", "Name", "RightParen"]),
        ("((a, b))", ["LeftParen", "LeftParen", "Element", "Element"]
         + ["RightParen", "RightParen"]),
        ("(a if b else c)", ["LeftParen", "Name", "Name", "Name", "RightParen"]),
        ("(x.y)", ["LeftParen", "Name", "Name", "RightParen"]),
    ],
)  # fmt: skip
def test_parentheses_are_the_first_and_last_children(code, expected):
    expr = cst.parse_expression(code)
    assert [type(child).__name__ for child in child_nodes(expr)] == expected


def test_whitespace_and_punctuation_are_not_children():
    call = cst.parse_expression("f( a ,  b = 1 )")
    assert [code_of(child) for child in child_nodes(call)] == ["f", "a ,  ", "b = 1 "]
    keyword = list(child_nodes(call))[2]
    assert [code_of(child) for child in child_nodes(keyword)] == ["b", "1"]


def test_walk_yields_parents_first_in_source_order():
    module = cst.parse_module("x = f(a, g(b)) + c\n")
    names = [node.value for node in walk(module) if isinstance(node, cst.Name)]
    assert names == ["x", "f", "a", "g", "b", "c"]


def test_walk_leaves_out_the_children_of_pruned_kinds():
    module = cst.parse_module("def f(a):\n    b = 1\nc = lambda d: d\n")
    names = [
        node.value
        for node in walk(module, prune=(cst.FunctionDef,))
        if isinstance(node, cst.Name)
    ]
    assert names == ["c", "d", "d"]


def test_parent_map_names_each_code_nodes_parent():
    module = cst.parse_module("x = (a.b)\n")
    parents = parent_map(module)
    attribute = module.body[0].body[0].value
    assert parents[attribute.value] is attribute
    assert parents[attribute.lpar[0]] is attribute
    assert parents[attribute] is module.body[0].body[0]
    assert module not in parents
    assert not any(isinstance(node, LAYOUT) for node in parents)


def test_unparenthesized_drops_the_nodes_own_parentheses_only():
    expr = cst.parse_expression("((a, (b)))")
    assert code_of(unparenthesized(expr)) == "a, (b)"
    bare = cst.parse_expression("a")
    assert unparenthesized(bare) is bare
    # An empty tuple is its parentheses: kept (libcst refuses one without).
    empty = cst.parse_expression("(())")
    assert code_of(unparenthesized(empty)) == "(())"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("spec", "spec"),
        ("self.spec", "self.spec"),
        ("specs[i]", "specs[i]"),
        ("specs[ i ,  j ].kind", "specs[i,j].kind"),
        ("get().spec", None),
        ("specs[f()]", "specs[f()]"),
        ("f()[0]", None),
        ("1", None),
    ],
)
def test_target_key(code, expected):
    assert target_key(cst.parse_expression(code)) == expected


def test_child_nodes_of_a_node_built_with_a_list():
    # Fixes build nodes with lists (with_changes(elements=[...])).
    built = cst.Tuple([cst.Element(cst.Name("a")), cst.Element(cst.Name("b"))])
    assert [code_of(child) for child in child_nodes(built)] == ["(", "a", "b", ")"]
