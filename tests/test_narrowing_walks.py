"""Where narrowing's walks up from a check stop, and what may stand
between a check and the statement that decides on it: each case is a
check the default mode must keep reporting, or one it must leave out,
in a shape the common cases do not reach."""

from __future__ import annotations

import pytest

from tests.conftest import THREE_MEMBER_MLA
from tests.test_narrowing import analyse, reason, reported
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

pytestmark = pytest.mark.fast

# name -> (source under the header, rows the default mode reports)
CASES = {
    # Only `not` negates: `+` keeps the check's sense, so this `if` raises
    # when the check passes, and a failing check goes on quietly.
    "unary-plus-is-no-negation": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if +isinstance(spec, MLAAttentionSpec):
                raise ValueError("MLA")
            return 1
        """,
        [2],
    ),
    # A check in a conditional expression decides nothing on its own.
    "conditional-expression-assert": (
        """\
        def f(spec: KVCacheSpec, strict: bool) -> None:
            assert (isinstance(spec, MLAAttentionSpec) if strict else True)
        """,
        [2],
    ),
    "conditional-expression-before-a-rejection": (
        """\
        def f(spec: KVCacheSpec, strict: bool) -> int:
            if (isinstance(spec, MLAAttentionSpec) if strict else False):
                return 1
            assert isinstance(spec, FullAttentionSpec)
            return 2
        """,
        [2],
    ),
    # VSL007 too: `+` is no negation, so the `else` raises for what is not
    # windowed, and the companion (windowed) is not swept into a rejection.
    "unary-plus-is-no-negation-for-a-parent-test": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if +isinstance(spec, SlidingWindowSpec):
                return 1
            else:
                raise ValueError("windowed layers only")
        """,
        [],
    ),
    "not-negates-a-parent-test": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if not isinstance(spec, SlidingWindowSpec):
                return 1
            else:
                raise ValueError("no windowed layers")
        """,
        [2],
    ),
    # Handed to a function that is not any()/all(): its result decides.
    "argument-of-another-call-before-a-rejection": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if check(isinstance(spec, MLAAttentionSpec)):
                return 1
            assert isinstance(spec, FullAttentionSpec)
            return 2
        """,
        [2],
    ),
    # `and`: a failing check makes the test false, so the value goes on to
    # the assert, which the companion cannot pass.
    "and-conjunct-before-a-rejection": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, MLAAttentionSpec) and spec.head_size > 0:
                return 1
            assert isinstance(spec, FullAttentionSpec)
            return 2
        """,
        [],
    ),
    # Raising when the check passes rejects nothing the check lets through.
    "raise-when-a-later-check-passes-is-no-rejection": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, MLAAttentionSpec):
                return 1
            if isinstance(spec, FullAttentionSpec):
                raise ValueError("full attention")
            return 2
        """,
        [2],
    ),
    # A negative test's passing branch is where the companion goes.
    "negative-test-before-a-rejection": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if type(spec) is not MLAAttentionSpec:
                return 1
            assert isinstance(spec, FullAttentionSpec)
            return 2
        """,
        [2],
    ),
    # Two calls are two values: the assert (loud) rejects another spec.
    "a-calls-result-is-not-rejected-by-a-later-call": (
        """\
        def f(layer) -> int:
            if isinstance(layer.get_spec(), MLAAttentionSpec):
                return 1
            assert isinstance(layer.get_spec(), FullAttentionSpec)
            return 2
        """,
        [2],
    ),
    # Awaiting may run anything, the spec's rebinding included.
    "an-await-between-check-and-rejection": (
        """\
        async def f(spec: KVCacheSpec, ready) -> int:
            if isinstance(spec, MLAAttentionSpec):
                return 1
            done = await ready
            assert isinstance(spec, FullAttentionSpec)
            return 2
        """,
        [2],
    ),
    # A function made in a loop reads the loop's last spec when called, not
    # each element: its check is not the loop's check of the collection.
    "a-function-defined-in-a-loop-does-not-iterate-it": (
        """\
        def f(specs: list[KVCacheSpec]) -> list:
            makers = []
            for spec in specs:
                def uses_mla() -> bool:
                    if any(isinstance(s, SlidingWindowMLASpec) for s in specs):
                        return True
                    return isinstance(spec, MLAAttentionSpec)
                makers.append(uses_mla)
            return makers
        """,
        [7],
    ),
    # A check of a call's result inside a loop over the same collection
    # is not a test of the collection's elements.
    "a-call-in-a-loop-over-the-collection-is-not-its-elements": (
        """\
        def f(specs: dict[str, KVCacheSpec]) -> bool:
            for name, (spec, size) in specs.items():
                if isinstance(pick(spec), SlidingWindowMLASpec):
                    return True
            return any(isinstance(s, MLAAttentionSpec) for s in specs.values())
        """,
        [5],
    ),
    # A lambda's parameter is its own variable: its check is of the
    # layers, not of the groups another check tests for the companion.
    "a-lambda-in-a-filter-binds-its-own-name": (
        """\
        def f(groups: list) -> list:
            mla = [
                s
                for s in groups
                if any(map(lambda s: isinstance(s, MLAAttentionSpec), s.layers))
            ]
            windowed = [s for s in groups if isinstance(s, SlidingWindowMLASpec)]
            return mla + windowed
        """,
        [5],
    ),
    "a-lambda-in-a-generator-binds-its-own-name": (
        """\
        def f(groups: list) -> bool:
            if any(isinstance(s, SlidingWindowMLASpec) for s in groups):
                return True
            return any(
                any(map(lambda s: isinstance(s, MLAAttentionSpec), s.layers))
                for s in groups
            )
        """,
        [5],
    ),
    # A lambda called in a filter decides the filter: two filters over one
    # collection are two decisions (a partition fixed on one side only).
    "a-lambda-called-in-a-filter-is-the-filter": (
        """\
        def f(specs: list[KVCacheSpec]) -> list:
            mla = [s for s in specs if (lambda: isinstance(s, MLAAttentionSpec))()]
            windowed = [s for s in specs if isinstance(s, SlidingWindowMLASpec)]
            return mla + windowed
        """,
        [2],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_what_stands_between_a_check_and_its_decision(name):
    body, rows = CASES[name]
    assert reported(body) == rows


def test_an_and_conjunct_before_a_rejection_names_the_asserts_line():
    body, _ = CASES["and-conjunct-before-a-rejection"]
    assert reason(body).startswith(
        "assert: line 14 rejects what the check lets through, SlidingWindowMLASpec"
    )


THREE_MEMBERS = """\
from vllm.v1.kv_cache_interface import (
    ChunkedMLASpec,
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
)


def kind(spec: KVCacheSpec) -> str:
    windowed = isinstance(spec, SlidingWindowMLASpec)
    {chunked}
    if isinstance(spec, MLAAttentionSpec):
        return "mla"
    return "windowed" if windowed else "other"
"""


@pytest.mark.parametrize(
    "chunked, reported_rows, reason",
    [
        # One companion tested, the other overlooked: still a finding.
        ("pass", [12], None),
        (
            "chunked = isinstance(spec, ChunkedMLASpec)",
            [],
            "deliberate: lines 10, 11 test `spec` for SlidingWindowMLASpec, "
            "ChunkedMLASpec",
        ),
    ],
    ids=["one-of-two-companions-tested", "both-tested"],
)
def test_deliberate_handling_needs_every_companion_left_out_tested(
    chunked, reported_rows, reason
):
    text = THREE_MEMBERS.format(chunked=chunked)
    analysis = analyze_source(
        text, "layers.py", Config(families=(THREE_MEMBER_MLA,)), None
    )
    assert [f.location[0] for f in analysis.findings] == reported_rows
    assert [f.suppressed_by for f in analysis.suppressed] == (
        [reason] if reason else []
    )


def test_the_checks_left_out_are_listed_in_the_files_order():
    body = """\
        def f(spec: KVCacheSpec) -> None:
            assert type(spec) is MLAAttentionSpec
            assert isinstance(spec, MLAAttentionSpec)
        """
    assert [(f.code, f.location[0] - 10) for f in analyse(body).suppressed] == [
        ("VSL002", 2),
        ("VSL001", 3),
    ]


@pytest.mark.parametrize("exit_", ["break", "continue"])
def test_a_guard_that_leaves_the_loop_narrows_the_rest_of_its_body(exit_):
    body = f"""\
        def first_mla(specs: list[KVCacheSpec]) -> KVCacheSpec | None:
            for spec in specs:
                if isinstance(spec, SlidingWindowMLASpec):
                    {exit_}
                if isinstance(spec, MLAAttentionSpec):
                    return spec
            return None
        """
    assert reason(body).startswith(
        "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 13) already excludes"
    )


@pytest.mark.parametrize(
    "call, rows",
    [
        *(
            (f"kept.{method}()", [])
            for method in (
                "pop", "remove", "discard", "clear", "copy", "count", "index",
                "get", "keys", "values", "items", "sort", "reverse", "popitem",
            )
        ),
        ("kept.append(other)", [4]),
    ],
)  # fmt: skip
def test_a_method_that_adds_no_element_keeps_what_is_known_of_them(call, rows):
    body = f"""\
        def mla(specs: list[KVCacheSpec], other: KVCacheSpec) -> list:
            kept = [s for s in specs if not isinstance(s, SlidingWindowMLASpec)]
            {call}
            return [s for s in kept if isinstance(s, MLAAttentionSpec)]
        """
    assert reported(body) == rows


@pytest.mark.parametrize("build", ["list", "set", "tuple", "sorted", "frozenset"])
def test_every_build_of_a_filter_keeps_what_it_let_through(build):
    body = f"""\
        def f(specs: list[KVCacheSpec]) -> list:
            full = {build}(filter(lambda s: isinstance(s, FullAttentionSpec), specs))
            return [s for s in full if isinstance(s, MLAAttentionSpec)]
        """
    assert reason(body).startswith("narrowed: `isinstance(s, FullAttentionSpec)`")
