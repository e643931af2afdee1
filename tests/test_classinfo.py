"""What a classinfo expression names (model/class_tests.py): the shapes
the rules' examples do not reach."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

pytestmark = pytest.mark.fast

HEADER = "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
LEAVES_OUT = "leaves out SlidingWindowMLASpec"


def _found(body: str) -> list[tuple[str, tuple[int, int], str]]:
    analysis = analyze_source(HEADER + body, "x.py", Config(strict=True))
    return [(f.code, f.location, f.message) for f in analysis.findings]


def test_a_call_other_than_frozenset_is_no_classinfo_it_can_read():
    # What pick() returns is unknown: the anchor is its argument, not a class
    # the check tests.
    assert _found("ok = isinstance(spec, pick(MLAAttentionSpec))\n") == []


def test_constants_that_name_each_other_are_read_to_a_depth_and_stop():
    body = "A = (B, MLAAttentionSpec)\nB = (A,)\nok = isinstance(spec, A)\n"
    assert _found(body) == [
        ("VSL004", (2, 1), f"constant A lists MLAAttentionSpec but {LEAVES_OUT}"),
        ("VSL004", (3, 1), f"constant B lists MLAAttentionSpec but {LEAVES_OUT}"),
    ]


def test_a_parameter_as_classinfo_names_no_class():
    body = (
        "def f(spec, kinds):\n"
        "    return isinstance(spec, kinds) or isinstance(spec, MLAAttentionSpec)\n"
    )
    assert _found(body) == [
        (
            "VSL001",
            (3, 56),
            f"isinstance() check against MLAAttentionSpec {LEAVES_OUT}",
        )
    ]


@pytest.mark.parametrize(
    "body",
    [
        "ok = type(spec) < MLAAttentionSpec\n",  # an order, no class test
        "ok = type(spec) == (MLAAttentionSpec, FullAttentionSpec)\n",  # never true
        "ok = type(*specs) is MLAAttentionSpec\n",  # not type(x)
        "ok = type(obj=spec) is MLAAttentionSpec\n",
        'ok = type(spec).__name__ == ("MLAAttentionSpec", "FullAttentionSpec")\n',
    ],
)
def test_a_comparison_that_is_no_class_test_is_not_reported(body):
    assert _found(body) == []


def test_an_exact_test_is_reported_and_a_membership_in_a_constant_at_the_constant():
    assert _found("ok = type(spec) is MLAAttentionSpec\n") == [
        ("VSL002", (2, 20), f"exact type comparison with MLAAttentionSpec {LEAVES_OUT}")
    ]
    body = "KINDS = (MLAAttentionSpec,)\nok = type(spec) in KINDS\n"
    assert _found(body) == [
        ("VSL004", (2, 1), f"constant KINDS lists MLAAttentionSpec but {LEAVES_OUT}")
    ]


MRO = "type(spec).__mro__"


@pytest.mark.parametrize(
    "body",
    [
        "ok = type(spec) is MLAAttentionSpec is OTHER\n",  # a chain
        "ok = (MLAAttentionSpec,) in type(spec)\n",  # the type on the right
        'ok = type(spec).__name__ in "MLAAttentionSpec"\n',  # a substring test
        'ok = type(spec).__module__ == "MLAAttentionSpec"\n',  # no class name
        f'ok = any(c.__name__ < "MLAAttentionSpec" for c in {MRO})\n',
        f'ok = any(c.__name__ in "MLAAttentionSpec" for c in {MRO})\n',
        # No MRO: the subclasses, or getmro of nothing.
        "ok = any(c is MLAAttentionSpec for c in type(spec).__subclasses__())\n",
        "ok = any(c is MLAAttentionSpec for c in inspect.getmro())\n",
    ],
)
def test_a_name_or_mro_shape_that_is_no_class_test_is_not_reported(body):
    assert _found("import inspect\n" + body) == []


def test_arithmetic_other_than_a_union_or_concatenation_is_no_classinfo():
    body = "KINDS = (MLAAttentionSpec,)\nok = isinstance(spec, KINDS * 2)\n"
    assert _found(body) == [
        ("VSL004", (2, 1), f"constant KINDS lists MLAAttentionSpec but {LEAVES_OUT}")
    ]


@pytest.mark.parametrize(
    "body, column",
    [
        (
            f'ok = any(c.__name__ in {{"MLAAttentionSpec", "FullAttentionSpec"}} '
            f"for c in {MRO})\n",
            25,
        ),
        (f'ok = "MLAAttentionSpec" in (c.__name__ for c in {MRO})\n', 6),
    ],
    ids=["names-in-a-set", "in-a-generator-of-names"],
)
def test_an_mro_scan_by_name_in_a_set_or_a_generator_is_reported(body, column):
    assert _found(body) == [
        ("VSL005", (2, column), f"MRO test against MLAAttentionSpec {LEAVES_OUT}")
    ]


@pytest.mark.parametrize(
    "body, row",
    [
        # A function's local tuple is no module or class constant (VSL004).
        (
            "def f(spec):\n    KINDS = (MLAAttentionSpec,)\n"
            "    return isinstance(spec, MLAAttentionSpec)\n",
            4,
        ),
        ("KINDS: tuple\nok = isinstance(spec, MLAAttentionSpec)\n", 3),
        (
            "KINDS = make(MLAAttentionSpec)\nok = isinstance(spec, MLAAttentionSpec)\n",
            3,
        ),
    ],
    ids=["in-a-function", "annotation-only", "a-call"],
)
def test_what_is_no_constant_listing_classes(body, row):
    # Only the check beside it is reported.
    assert [(code, at[0]) for code, at, _ in _found(body)] == [("VSL001", row)]
