"""Shapes at the edge of what VSL003 and VSL004 read, and what a guessed or
stand-in family changes in a report (rules/base.py), each with the findings
written out."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

MLA = "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"


def _found(source: str, config: Config | None = None) -> list[tuple]:
    analysis = analyze_source(source, "x.py", config or Config(), module_name="m")
    return [(f.code, *f.location) for f in analysis.findings]


@pytest.mark.parametrize(
    "source, expected",
    [
        # A function's local tuple is no module constant.
        (MLA + "\n\ndef f(spec):\n    KINDS = (MLAAttentionSpec,)\n"
         "    if isinstance(spec, MLAAttentionSpec):\n        return KINDS\n",
         [("VSL001", 6, 25)]),
        # Two targets: which one is the constant is not said.
        (MLA + "\nA = B = (MLAAttentionSpec,)\n", []),
        # An attribute of a module is no constant of this one.
        ("import mod\n" + MLA + "\nmod.KINDS = (MLAAttentionSpec,)\n", []),
        # A type alias names a type, not a collection of classes, however
        # TypeAlias is spelled.
        ("import typing\n\n" + MLA
         + "\nAnyMLA: typing.TypeAlias = FullAttentionSpec | MLAAttentionSpec\n", []),
        ("from typing import TypeAlias\n\n" + MLA
         + "\nAnyMLA: TypeAlias = FullAttentionSpec | MLAAttentionSpec\n", []),
        ("from typing_extensions import TypeAlias\n\n" + MLA
         + "\nAnyMLA: TypeAlias = FullAttentionSpec | MLAAttentionSpec\n", []),
        # Any other annotation: a constant.
        (MLA + "\nAnyMLA: type = FullAttentionSpec | MLAAttentionSpec\n",
         [("VSL004", 3, 1)]),
        # Classes named through their module are classes too.
        ("from vllm.v1 import kv_cache_interface as kv\n\n"
         "KINDS = (kv.MLAAttentionSpec,)\n", [("VSL004", 3, 1)]),
    ],
    ids=["local", "two-targets", "attribute", "typing-alias", "from-typing-alias",
         "typing-extensions-alias", "annotated", "module-attribute"],
)  # fmt: skip
def test_what_vsl004_reads_as_a_constant_listing_classes(source, expected):
    assert _found(source) == expected


MATCH = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n\n"
    "def f(spec):\n    match spec:\n        case SlidingWindowMLASpec({}):\n"
    "            return 1\n        case MLAAttentionSpec():\n            return 2\n"
)


def test_an_earlier_case_takes_the_companion_only_without_sub_patterns():
    # SlidingWindowMLASpec() takes every companion; (16) only some of them.
    assert _found(MATCH.format("")) == []
    assert _found(MATCH.format("16")) == [("VSL003", 8, 14)]
    assert _found(MATCH.format("block_size=16")) == [("VSL003", 8, 14)]


def test_a_stand_in_familys_fix_is_never_promoted_to_safe():
    from dataclasses import replace

    from tests.test_no_fix import _plugin_config

    config, hierarchy = _plugin_config(
        {"q.TkvMLAAttentionSpec": ("vllm.v1.kv_cache_interface.MLAAttentionSpec",)}
    )
    config = replace(config, extend_safe_fixes=("VSL001",))
    stand_in = (
        "import q\nfrom vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n\n"
        "ok = isinstance(spec, q.TkvMLAAttentionSpec)\n"
    )
    vllms = MLA + "\nok = isinstance(spec, MLAAttentionSpec)\n"
    [guessed] = analyze_source(
        stand_in, "x.py", config, hierarchy, module_name="r"
    ).findings
    [own] = analyze_source(vllms, "x.py", config, hierarchy, module_name="r").findings
    # The stand-in is a guess from a name: its fix stays unsafe.
    assert (guessed.fix.applicability, own.fix.applicability) == ("unsafe", "safe")


@pytest.mark.parametrize(
    "constant",
    [
        "KINDS = OTHER = (SlidingWindowMLASpec,)\n",  # two names: neither followed
        "KINDS: tuple\n",  # declared, never assigned
    ],
)
def test_a_name_is_followed_to_its_classes_only_when_assigned_once(constant):
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        + constant
        + "\n\ndef f(s):\n    return isinstance(s, (MLAAttentionSpec, KINDS))\n"
    )
    # KINDS is not read: the companion is left out as far as is known.
    assert _found(source) == [("VSL001", 7, 27)]
    once = source.replace(constant, "KINDS = (SlidingWindowMLASpec,)\n")
    assert _found(once) == []


def test_a_singledispatchmethods_registration_is_read():
    source = (
        "import functools\n\n"
        "from vllm.v1.kv_cache_interface import KVCacheSpec, MLAAttentionSpec\n\n\n"
        "class Layout:\n    @functools.singledispatchmethod\n"
        "    def rows(self, spec: KVCacheSpec) -> int:\n        return 2\n\n"
        "    @rows.register\n"
        "    def _(self, spec: MLAAttentionSpec) -> int:\n        return 1\n"
    )
    assert _found(source) == [("VSL006", 12, 23)]


@pytest.mark.parametrize(
    "body, expected",
    [
        # Read through the one name bound to the set of the MRO's names.
        ("    names = {c.__name__ for c in type(x).__mro__}\n"
         '    return "MLAAttentionSpec" in names\n', [("VSL005", 3, 12)]),
        # An inner function's own binding of the name comes first: not it.
        ("    def helper():\n        names = {'FullAttentionSpec'}\n"
         "        return names\n"
         "    names = {c.__name__ for c in type(x).__mro__}\n"
         '    return "MLAAttentionSpec" in names\n', [("VSL005", 6, 12)]),
        # Bound to two names at once: not followed.
        ("    names = other = {c.__name__ for c in type(x).__mro__}\n"
         '    return "MLAAttentionSpec" in names\n', []),
        # Not the classes' names: a call's, a docstring.
        ('    return "MLAAttentionSpec" in {c().__name__ for c in type(x).__mro__}\n',
         []),
        ('    return any(c().__name__ == "MLAAttentionSpec" for c in type(x).__mro__)\n',
         []),
        # The classes themselves compared with a name: never equal.
        ('    return any(c == "MLAAttentionSpec" for c in type(x).__mro__)\n', []),
        ('    return "MLAAttentionSpec" in {c for c in type(x).__mro__}\n', []),
        ('    return any(c.__doc__ == "MLAAttentionSpec" for c in type(x).__mro__)\n',
         []),
    ],
    ids=["names-bound-once", "names-and-an-inner-functions", "names-bound-twice", "called", "called-any", "classes-any", "classes-set", "docstring"],
)  # fmt: skip
def test_what_is_a_scan_of_the_mros_class_names(body, expected):
    assert _found("def f(x):\n" + body) == expected


def test_stand_in_families_get_no_declaration_of_their_own():
    from tests.test_no_fix import _plugin_config
    from vllm_spec_lint.edges.hierarchy_sources import with_layout_property

    kci = "vllm.v1.kv_cache_interface"
    config, hierarchy = _plugin_config(
        {
            "q.TkvMLAAttentionSpec": (f"{kci}.MLAAttentionSpec",),
            "q.TkvSlidingWindowMLASpec": (f"{kci}.SlidingWindowMLASpec",),
        }
    )
    assert [f.name for f in config.families] == ["mla", "mla:TkvMLAAttentionSpec"]
    # The stand-ins inherit the property of the classes they derive from.
    assert sorted(with_layout_property(hierarchy, config).declared) == [
        f"{kci}.KVCacheSpec",
        f"{kci}.MLAAttentionSpec",
        f"{kci}.SlidingWindowMLASpec",
    ]
