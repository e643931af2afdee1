"""core/nesting.py: how deep libcst would nest a statement, measured on
CPython's tree, and a statement's text (the whole-run guard is in
tests/test_reliability.py)."""

from __future__ import annotations

import ast

import pytest

from vllm_spec_lint.core import nesting

pytestmark = pytest.mark.fast


def _statement(source: str) -> ast.stmt:
    return ast.parse(source).body[0]


@pytest.mark.parametrize(
    "source, depth",
    [
        ("x", 3),  # Expr, Name, its Load context
        ("-x", 4),  # Expr, UnaryOp, then USub and Name side by side, Load
        ("a and b", 4),  # Expr, BoolOp, Names, Load: two operands, one level
        ("a and b and c", 5),  # libcst: one more level per further operand
        ("a or b or c or d", 6),
        ("(a and b) or c", 5),  # Expr, or, and, Name, Load
    ],
)
def test_a_statements_depth_counts_a_level_per_node_and_per_further_operand(
    source, depth
):
    assert nesting._nesting(_statement(source)) == depth


def test_measuring_stops_just_past_the_limit():
    deep = _statement("-" * 1100 + "x")
    assert nesting._nesting(deep) == nesting.MAX_NESTING + 1


def _chain(operands: int) -> tuple[ast.stmt, str]:
    text = "x = " + " and ".join(["a"] * operands) + "\n"
    return _statement(text), text


def test_a_long_flat_chain_is_too_deep_and_a_shorter_one_is_not(monkeypatch):
    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    # Assign, BoolOp (+ operands - 2), Name, Load.
    assert not nesting.deeper_than_libcst(*_chain(998))  # 1,000 levels
    assert nesting.deeper_than_libcst(*_chain(999))  # 1,001


def test_a_statement_short_enough_is_never_measured(monkeypatch):
    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    deep, _ = _chain(1200)
    # Its text (with the levels that take none) fits in the limit: libcst
    # cannot nest it deeper, whatever node comes with it.
    fits = "x" * (nesting.MAX_NESTING - 8)
    assert not nesting.deeper_than_libcst(deep, fits)
    assert nesting.deeper_than_libcst(deep, fits + "x")


def test_a_statements_depth_is_remembered_by_its_text_for_64_texts(monkeypatch):
    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    deep, text = _chain(1200)
    shallow = _statement("x = 1")
    assert nesting.deeper_than_libcst(deep, text)
    # The same text: the answer remembered, not measured on the node given.
    assert nesting.deeper_than_libcst(shallow, text)
    for n in range(63):  # 64 texts remembered: the next one starts afresh
        assert not nesting.deeper_than_libcst(shallow, f"{n:<1100}")
    assert len(nesting._NESTING_BY_TEXT) == 64
    assert not nesting.deeper_than_libcst(shallow, "y" * 1100)
    assert len(nesting._NESTING_BY_TEXT) == 1
    assert not nesting.deeper_than_libcst(shallow, text)


SOURCE = """\
x = 1


@first
@second(
    1,
)
def f():
    return 2
y = 3"""


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]


def test_a_statements_text_has_its_decorators_and_ends_with_its_last_line():
    tree = ast.parse(SOURCE)
    starts = _line_starts(SOURCE)
    assert nesting.statement_text(tree.body[0], SOURCE, starts) == "x = 1\n"
    assert nesting.statement_text(tree.body[1], SOURCE, starts) == (
        "@first\n@second(\n    1,\n)\ndef f():\n    return 2\n"
    )
    assert nesting.statement_text(tree.body[2], SOURCE, starts) == "y = 3"
    assert [nesting.first_row(s) for s in tree.body] == [1, 4, 10]


def test_a_decorator_written_after_an_earlier_one_does_not_move_the_first_row():
    tree = ast.parse("class C:\n    pass\n\n\n@a\n@b\nclass D:\n    pass\n")
    assert [nesting.first_row(s) for s in tree.body] == [1, 5]


def _long_class(deep_method: str, methods: int = 60) -> tuple[ast.stmt, str]:
    """A class of many short methods (each fits in the limit, and is not
    walked) and ``deep_method``."""
    short = "".join(
        f"    def f{n}(self):\n        return {n}\n" for n in range(methods)
    )
    text = f"class C:\n{short}{deep_method}{short}"
    return _statement(text), text


CHAIN = " and ".join(["a"] * 1200)


@pytest.mark.parametrize(
    "deep_method",
    [
        f"    def deep(self):\n        x = {CHAIN}\n",
        # Its own rows fit; its decorator, above them, does not.
        f"    @decorate({CHAIN})\n    def deep(self):\n        pass\n",
        f"    def deep(self):\n        if b:\n            x = 1\n        x = {CHAIN}\n",
    ],
)
def test_a_too_deep_statement_in_a_long_class_is_found_past_those_that_fit(
    monkeypatch, deep_method
):
    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    assert nesting.deeper_than_libcst(*_long_class(deep_method))


def test_a_long_class_of_statements_that_fit_is_not_too_deep(monkeypatch):
    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    node, text = _long_class("    def g(self):\n        return 2\n")
    assert len(text) > 2 * nesting.MAX_NESTING
    assert not nesting.deeper_than_libcst(node, text)


@pytest.mark.parametrize(
    "minuses, fits",
    [
        # ClassDef, FunctionDef, then Assign at depth 3: it fits while its
        # characters from its row's start (8 + 4 + minuses + 1), its depth
        # and the 8 levels without text come to 1,000 at most.
        (976, True),
        (977, False),
    ],
)
def test_a_statement_fits_when_its_characters_and_depth_leave_the_levels_without_text(
    minuses, fits
):
    text = "class C:\n    def f(self):\n        x = " + "-" * minuses + "y\n"
    node = _statement(text)
    statement = node.body[0].body[0]
    assert nesting._fitting_statements(node, text)(statement, 3) is fits
