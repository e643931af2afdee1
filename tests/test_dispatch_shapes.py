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


DISPATCHER = (
    "import functools\n\n\n@functools.singledispatch\ndef handle(spec):\n    pass\n\n\n"
)


@pytest.mark.parametrize(
    "body, expected",
    [
        # A starred element of the pairs is no pair, even if it is a tuple.
        ("TABLE = dict([*(MLAAttentionSpec, 1)])\n", []),
        # A call that is no register() registers nothing.
        # (beside a registration, so the module's calls are read at all)
        ("registry.register(SlidingWindowSpec)\nprint(MLAAttentionSpec)\n", []),
        ("registry.register(SlidingWindowSpec)\nregistry.add(MLAAttentionSpec)\n", []),
        # A starred argument of a dispatcher's register() names no class.
        (DISPATCHER + "KINDS = (MLAAttentionSpec,)\nhandle.register(*KINDS)\n",
         [("VSL004", (10, 1))]),
        (DISPATCHER + "handle.register(*(MLAAttentionSpec,))\n", []),
        # In a class body: the dispatched parameter is the first one, or the
        # one after self; a function without parameters registers nothing.
        (DISPATCHER + "class Holder:\n    @handle.register\n"
         "    def _(spec: MLAAttentionSpec):\n        pass\n", [("VSL006", (12, 17))]),
        (DISPATCHER + "class Holder:\n    @handle.register\n"
         "    def _(self, spec: MLAAttentionSpec):\n        pass\n",
         [("VSL006", (12, 23))]),
        (DISPATCHER + "class Holder:\n    @handle.register\n    def _():\n"
         "        return MLAAttentionSpec\n", []),
    ],
    ids=["starred-pair", "print", "add", "starred-dispatch", "starred-display", "class-first-param",
         "class-after-self", "class-no-params"],
)  # fmt: skip
def test_registrations_in_each_shape(body, expected):
    assert _found(body) == expected


@pytest.mark.parametrize(
    "keyword",
    ["cls", "klass", "class_", "key", "type_", "typ", "spec_cls",
     "kvcache_spec_class", "layer_type"],
)  # fmt: skip
def test_a_registry_takes_its_class_by_each_keyword_registries_use(keyword):
    body = f"registry.register({keyword}=MLAAttentionSpec)\n"
    column = len(f"registry.register({keyword}=") + 1
    assert _found(body) == [("VSL006", (2, column))]
    assert _found("registry.register(name=MLAAttentionSpec)\n") == []


@pytest.mark.parametrize(
    "lookup, expected",
    [
        # Indexed, .get() or membership with the MRO's variable: by the MRO.
        ("found = [TABLE[c] for c in type(spec).__mro__]\n", "VSL007"),
        ("found = [TABLE.get(c) for c in type(spec).__mro__]\n", "VSL007"),
        ("found = [c for c in type(spec).__mro__ if c in TABLE]\n", "VSL007"),
        # Anything else is no lookup by the MRO: the table stays exact.
        ("found = [TABLE[c, 0] for c in type(spec).__mro__]\n", "VSL006"),
        ("found = [TABLE.pop(c) for c in type(spec).__mro__]\n", "VSL006"),
        ("found = [TABLE.get() for c in type(spec).__mro__]\n", "VSL006"),
        ("found = [c for c in type(spec).__mro__ if c in TABLE == True]\n", "VSL006"),
        ("found = [c for c in type(spec).__mro__ if 0 in TABLE]\n", "VSL006"),
    ],
)
def test_a_table_is_looked_up_by_the_mro_only_with_the_mros_variable(lookup, expected):
    location = (2, 31) if expected == "VSL007" else (2, 10)
    assert _found(TABLE + lookup) == [(expected, location)]


def test_a_table_bound_to_two_names_is_not_followed_to_its_lookups():
    body = "TABLE = OTHER = {MLAAttentionSpec: 1, SlidingWindowSpec: 2}\n"
    lookup = "found = {TABLE[c] for c in type(spec).__mro__ if c in TABLE}\n"
    assert _found(body + lookup) == [("VSL006", (2, 18))]
