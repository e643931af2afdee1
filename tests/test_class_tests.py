"""Reading expressions as class tests (model/class_tests.py): which classes a
test names, whether a name came through a module constant, and which calls
are class tests at all. Every expected value is written out."""

from __future__ import annotations

import libcst as cst
import pytest

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.model.syntax import code_of, walk

HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    FullAttentionSpec,\n"
    "    MLAAttentionSpec,\n"
    "    SlidingWindowMLASpec,\n"
    "    SlidingWindowSpec,\n"
    ")\n\n"
)
KV = "vllm.v1.kv_cache_interface"
MLA = f"{KV}.MLAAttentionSpec"
SWMLA = f"{KV}.SlidingWindowMLASpec"
FULL = f"{KV}.FullAttentionSpec"
WINDOW = f"{KV}.SlidingWindowSpec"


def last_test(text: str):
    """The class test of the last line of ``HEADER + text``, or None."""
    source = HEADER + text
    module = cst.parse_module(source)
    model = SemanticModel(
        module, source, families=Config().families, hierarchy=ClassHierarchy.default()
    )
    last = module.body[-1]
    for node in walk(last):
        if isinstance(node, (cst.Call, cst.Comparison)):
            return model.tests.type_test(node)
    raise AssertionError("no call or comparison in the last statement")


def refs(text: str) -> list[tuple[str, str | None, bool]]:
    test = last_test(text)
    assert test is not None
    return [(code_of(r.node), r.qualname, r.via_constant) for r in test.refs]


REF_CASES = {
    "a name at the site": (
        "ok = isinstance(s, MLAAttentionSpec)\n",
        [("MLAAttentionSpec", MLA, False)],
    ),
    "nested tuple and list at the site": (
        "ok = isinstance(s, (MLAAttentionSpec, [FullAttentionSpec]))\n",
        [("MLAAttentionSpec", MLA, False), ("FullAttentionSpec", FULL, False)],
    ),
    "a union at the site": (
        "ok = isinstance(s, MLAAttentionSpec | SlidingWindowSpec)\n",
        [("MLAAttentionSpec", MLA, False), ("SlidingWindowSpec", WINDOW, False)],
    ),
    "a constant tuple: every element through the constant": (
        "MLA_LIKE = (MLAAttentionSpec, (FullAttentionSpec,))\n"
        "ok = isinstance(s, MLA_LIKE)\n",
        [("MLAAttentionSpec", MLA, True), ("FullAttentionSpec", FULL, True)],
    ),
    "a constant union: both sides through the constant": (
        "MLA_LIKE = MLAAttentionSpec | SlidingWindowSpec\n"
        "ok = isinstance(s, MLA_LIKE)\n",
        [("MLAAttentionSpec", MLA, True), ("SlidingWindowSpec", WINDOW, True)],
    ),
    "a constant beside a name: only the constant's classes are through it": (
        "OTHERS = (FullAttentionSpec,)\n"
        "ok = isinstance(s, (MLAAttentionSpec, OTHERS))\n",
        [("MLAAttentionSpec", MLA, False), ("FullAttentionSpec", FULL, True)],
    ),
    "a union of a name and a constant": (
        "OTHERS = FullAttentionSpec\nok = isinstance(s, MLAAttentionSpec | OTHERS)\n",
        [("MLAAttentionSpec", MLA, False), ("FullAttentionSpec", FULL, True)],
    ),
    "four constants deep are followed": (
        "A = MLAAttentionSpec\nB = A\nC = B\nD = C\nok = isinstance(s, D)\n",
        [("MLAAttentionSpec", MLA, True)],
    ),
    "five constants deep are not": (
        "A = MLAAttentionSpec\nB = A\nC = B\nD = C\nE = D\nok = isinstance(s, E)\n",
        [("A", None, True)],
    ),
    "a constant shadowed by a parameter is not followed": (
        "MLA_LIKE = (MLAAttentionSpec,)\n"
        "def f(s, MLA_LIKE):\n    return isinstance(s, MLA_LIKE)\n",
        [("MLA_LIKE", None, False)],
    ),
    "a name that is no constant stays unresolved": (
        "ok = isinstance(s, spec_type)\n",
        [("spec_type", None, False)],
    ),
}


@pytest.mark.parametrize("case", REF_CASES)
def test_the_classes_a_test_names(case):
    text, expected = REF_CASES[case]
    assert refs(text) == expected


def test_a_frozenset_constant_names_its_classes():
    # VSL004 reads constants' values with classinfo_refs directly.
    source = HEADER + "SPECS = frozenset({MLAAttentionSpec, FullAttentionSpec})\n"
    module = cst.parse_module(source)
    model = SemanticModel(
        module, source, families=Config().families, hierarchy=ClassHierarchy.default()
    )
    value = module.body[-1].body[0].value
    found = [
        (code_of(r.node), r.qualname, r.via_constant)
        for r in model.tests.classinfo_refs(value)
    ]
    assert found == [
        ("MLAAttentionSpec", MLA, False),
        ("FullAttentionSpec", FULL, False),
    ]


@pytest.mark.parametrize(
    ("text", "exact", "positive"),
    [
        ("ok = isinstance(s, MLAAttentionSpec)\n", False, True),
        ("ok = issubclass(c, MLAAttentionSpec)\n", False, True),
        ("ok = type(s) is MLAAttentionSpec\n", True, True),
        ("ok = type(s) != MLAAttentionSpec\n", True, False),
        ("ok = type(s) not in (MLAAttentionSpec,)\n", True, False),
    ],
)
def test_exact_and_positive_are_read_from_the_test(text, exact, positive):
    test = last_test(text)
    assert (test.exact, test.positive) == (exact, positive)


@pytest.mark.parametrize(
    "text",
    [
        "ok = isinstance(s, *classes)\n",
        "ok = isinstance(*args, MLAAttentionSpec)\n",
        "ok = isinstance(s, classinfo=MLAAttentionSpec)\n",
        "ok = isinstance(s)\n",
        "ok = isinstance(s, MLAAttentionSpec, x)\n",
        "ok = callable(s, MLAAttentionSpec)\n",
    ],
)
def test_calls_that_are_not_class_tests(text):
    assert last_test(text) is None
