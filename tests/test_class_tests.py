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


def last_test(text: str, header: str = HEADER):
    """The class test of the last line of ``header + text``, or None."""
    source = header + text
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
    "five constants deep through tuples are not": (
        "A = (MLAAttentionSpec,)\nB = (A,)\nC = (B,)\nD = (C,)\nE = (D,)\n"
        "ok = isinstance(s, E)\n",
        [("A", None, True)],
    ),
    "four constants deep through unions are followed, both sides": (
        "A = MLAAttentionSpec\nB = A | FullAttentionSpec\n"
        "C = SlidingWindowSpec | B\nD = C | FullAttentionSpec\n"
        "ok = isinstance(s, D)\n",
        [
            ("SlidingWindowSpec", WINDOW, True),
            ("MLAAttentionSpec", MLA, True),
            ("FullAttentionSpec", FULL, True),
            ("FullAttentionSpec", FULL, True),
        ],
    ),
    "five constants deep through unions are not, on either side": (
        "A = MLAAttentionSpec\nB = A | A\nC = B | B\nD = C | C\nE = D | D\n"
        "ok = isinstance(s, E)\n",
        [("A", None, True)] * 16,
    ),
    "five constants deep through frozensets are not": (
        "A = MLAAttentionSpec\nB = frozenset({A})\nC = frozenset({B})\n"
        "D = frozenset({C})\nE = frozenset({D})\nok = isinstance(s, E)\n",
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


def summary(text: str, header: str = HEADER):
    test = last_test(text, header)
    if test is None:
        return None
    return (
        test.kind,
        test.exact,
        test.positive,
        code_of(test.target),
        [(code_of(r.node), r.qualname) for r in test.refs],
    )


M = '"MLAAttentionSpec"'
BY_NAME = [('"MLAAttentionSpec"', MLA)]
NAME_CASES = {
    "type().__name__ ==": (
        f"ok = type(s).__name__ == {M}\n",
        ("name", True, True, "s", BY_NAME),
    ),
    "reversed, !=, __class__.__qualname__": (
        f"ok = {M} != s.__class__.__qualname__\n",
        ("name", True, False, "s", BY_NAME),
    ),
    "in a list of names": (
        f'ok = type(s).__name__ in [{M}, "SlidingWindowSpec"]\n',
        ("name", True, True, "s", BY_NAME + [('"SlidingWindowSpec"', WINDOW)]),
    ),
    "not in a set of names": (
        f"ok = type(s).__name__ not in {{{M}}}\n",
        ("name", True, False, "s", BY_NAME),
    ),
    "bytes: no class's name": (
        'ok = type(s).__name__ == b"MLAAttentionSpec"\n',
        ("name", True, True, "s", [('b"MLAAttentionSpec"', None)]),
    ),
    "a name no spec class has": (
        'ok = type(s).__name__ == "Mla"\n',
        ("name", True, True, "s", [('"Mla"', None)]),
    ),
    "any() over __mro__ by name": (
        f"ok = any(c.__name__ == {M} for c in type(s).__mro__)\n",
        ("mro", False, True, "s", BY_NAME),
    ),
    "any() over mro() by names in a tuple": (
        f"ok = any(c.__qualname__ in ({M},) for c in s.__class__.mro())\n",
        ("mro", False, True, "s", BY_NAME),
    ),
    "any() over getmro by class": (
        "import inspect\n"
        "ok = any(c is MLAAttentionSpec for c in inspect.getmro(type(s)))\n",
        ("mro", False, True, "s", [("MLAAttentionSpec", MLA)]),
    ),
    "a name in the set of MRO names": (
        f"ok = {M} not in {{c.__name__ for c in type(s).__mro__}}\n",
        ("mro", False, False, "s", BY_NAME),
    ),
    "a name in the list of MRO names": (
        f"ok = {M} in [k.__name__ for k in type(s).mro()]\n",
        ("mro", False, True, "s", BY_NAME),
    ),
    "a class in the MRO": (
        "ok = MLAAttentionSpec in type(s).__mro__\n",
        ("mro", False, True, "s", [("MLAAttentionSpec", MLA)]),
    ),
}
NOT_NAME_TESTS = {
    "a class's own name": f"ok = cls.__name__ == {M}\n",
    "a plain variable": f"ok = name == {M}\n",
    "in a variable": "ok = type(s).__name__ in NAMES\n",
    "compared with a call": "ok = type(s).__name__ == pick()\n",
    "two names with ==": f'ok = type(s).__name__ == ({M}, "X")\n',
    "any() with a condition": (
        f"ok = any(c.__name__ == {M} for c in type(s).__mro__ if c)\n"
    ),
    "any() over two loops": (
        f"ok = any(c.__name__ == {M} for c in type(s).__mro__ for d in xs)\n"
    ),
    "any() unpacking": f"ok = any(c.__name__ == {M} for c, _ in type(s).__mro__)\n",
    "any() with !=": f"ok = any(c.__name__ != {M} for c in type(s).__mro__)\n",
    "any() not over an MRO": f"ok = any(c.__name__ == {M} for c in classes)\n",
    "any() over another variable's name": (
        f"ok = any(d.__name__ == {M} for c in type(s).__mro__)\n"
    ),
    "any() of a list": f"ok = any([c.__name__ == {M} for c in type(s).__mro__])\n",
    "a shadowed any": (
        f"any = all\nok = any(c.__name__ == {M} for c in type(s).__mro__)\n"
    ),
    "the MRO names with a condition": (
        f"ok = {M} in {{c.__name__ for c in type(s).__mro__ if c}}\n"
    ),
    "the MRO names of something else": (
        f"ok = {M} in {{c.__name__ for c in type(s).__mro__ for d in xs}}\n"
    ),
    "a name in the MRO classes": f"ok = {M} in {{c for c in type(s).__mro__}}\n",
    "a variable in the MRO names": (
        "ok = name in {c.__name__ for c in type(s).__mro__}\n"
    ),
    "any() of the classes themselves": "ok = any(c for c in type(s).__mro__)\n",
    "any() with a chained comparison": (
        f"ok = any(c.__name__ == {M} == n for c in type(s).__mro__)\n"
    ),
    "any() comparing another variable with a class": (
        "ok = any(d is MLAAttentionSpec for c in type(s).__mro__)\n"
    ),
    "any() in an empty tuple": "ok = any(c in () for c in type(s).__mro__)\n",
    "any() is a tuple of classes": (
        "ok = any(c is (MLAAttentionSpec, SlidingWindowSpec) for c in type(s).__mro__)\n"
    ),
    "a class in a call's result": "ok = MLAAttentionSpec in pick()\n",
    "a display of names in a name": f"ok = ({M},) in type(s).__name__\n",
    "an MRO of a class, not of a value's type": (
        "ok = MLAAttentionSpec in cls.__mro__\n"
    ),
}


@pytest.mark.parametrize("case", NAME_CASES)
def test_tests_by_name_and_through_the_mro(case):
    text, expected = NAME_CASES[case]
    assert summary(text) == expected


@pytest.mark.parametrize("case", NOT_NAME_TESTS)
def test_what_is_not_a_test_by_name(case):
    assert summary(NOT_NAME_TESTS[case]) is None


@pytest.mark.parametrize(
    "text, node, classinfo",
    [
        (
            "ok = MLAAttentionSpec not in type(s).__mro__\n",
            "MLAAttentionSpec not in type(s).__mro__",
            "MLAAttentionSpec",
        ),
        (
            f"ok = {M} in {{c.__name__ for c in type(s).__mro__}}\n",
            f"{M} in {{c.__name__ for c in type(s).__mro__}}",
            M,
        ),
        (
            f"ok = type(s).__name__ in ({M}, 'X')\n",
            f"type(s).__name__ in ({M}, 'X')",
            f"({M}, 'X')",
        ),
        (
            "ok = any(c is MLAAttentionSpec for c in type(s).__mro__)\n",
            "any(c is MLAAttentionSpec for c in type(s).__mro__)",
            "MLAAttentionSpec",
        ),
    ],
    ids=["class-not-in-mro", "name-in-mro-names", "name-in-names", "mro-scan"],
)
def test_a_test_keeps_its_expression_and_what_it_compares_with(text, node, classinfo):
    test = last_test(text)
    assert (code_of(test.node), code_of(test.classinfo)) == (node, classinfo)


def test_a_class_not_in_the_mro_is_a_negative_test():
    test = last_test("ok = MLAAttentionSpec not in type(s).__mro__\n")
    assert (test.kind, test.exact, test.positive) == ("mro", False, False)


def test_a_module_class_of_the_same_name_is_not_the_spec_class():
    text = "class MLAAttentionSpec:\n    pass\n" + f"ok = type(s).__name__ == {M}\n"
    assert summary(text, header="") == (
        "name",
        True,
        True,
        "s",
        [('"MLAAttentionSpec"', None)],
    )
