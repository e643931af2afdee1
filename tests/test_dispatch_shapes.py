"""Tables and registrations (model/dispatch.py) in the shapes the rules'
examples do not reach: what is read as a table keyed by classes, how a
table is looked up, what is a registration."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

pytestmark = pytest.mark.fast

HEADER = "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
TABLE = "TABLE = {MLAAttentionSpec: 1, SlidingWindowSpec: 2}\n"


def _found(body: str) -> list[tuple[str, tuple[int, int]]]:
    analysis = analyze_source(HEADER + body, "x.py", Config(strict=True))
    return [(f.code, f.location) for f in analysis.findings]


@pytest.mark.parametrize(
    "body",
    [
        "TABLE = dict(items=[(MLAAttentionSpec, 1)])\n",  # a keyword: no pairs
        "TABLE = dict(*[(MLAAttentionSpec, 1)])\n",
        "TABLE = dict([(MLAAttentionSpec, 1)], [(SlidingWindowSpec, 2)])\n",
        "TABLE = mod.dict([(MLAAttentionSpec, 1)])\n",  # not the builtin
        # The module's own dict(), defined away from the table.
        "def dict(pairs):\n    return len(pairs)\n\n\nTABLE = dict([(MLAAttentionSpec, 1)])\n",
        "TABLE = dict([(MLAAttentionSpec, *rest)])\n",  # not a pair
        "TABLE = dict([(MLAAttentionSpec, 1), *rest])\n",  # keys unknown
        # Not a singledispatch function's register, nor a call with a class.
        "@registry.register\ndef handle(spec: MLAAttentionSpec):\n    pass\n",
    ],
)
def test_what_is_no_table_or_registration_of_classes(body):
    assert _found(body) == []


@pytest.mark.parametrize(
    "lookup",
    [
        "found = {TABLE[c] for c in type(spec).__mro__ if c in TABLE}\n",
        "found = {c: TABLE[c] for c in type(spec).__mro__ if c in TABLE}\n",
        "found = next(TABLE[c] for c in type(spec).__mro__ if c in TABLE)\n",
    ],
    ids=["set", "dict", "generator"],
)
def test_a_comprehension_over_the_mro_looks_the_table_up_by_the_mro(lookup):
    # Along the MRO the parent's key serves the companion (VSL007), and no
    # exact-type lookup misses it (VSL006).
    assert _found(TABLE + lookup) == [("VSL007", (2, 31))]


def test_a_loop_over_the_mro_with_a_tuple_target_is_no_lookup():
    body = TABLE + "for c, in type(spec).__mro__:\n    pass\n"
    assert _found(body) == [("VSL006", (2, 10))]


def test_a_registration_of_a_starred_argument_names_no_class():
    body = "KINDS = (MLAAttentionSpec,)\nregistry.register(*KINDS)\n"
    assert _found(body) == [("VSL004", (2, 1))]
    assert _found("registry.register(MLAAttentionSpec)\n") == [("VSL006", (2, 19))]


def test_a_registration_call_without_arguments_registers_nothing():
    body = "registry.register()\nregistry.register(MLAAttentionSpec)\n"
    assert _found(body) == [("VSL006", (3, 19))]
