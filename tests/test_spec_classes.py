"""edges/spec_classes.py: a plugin's own spec classes, placed in the hierarchy
by the names of their bases as written."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.spec_classes import _ancestry, _root, spec_hierarchy
from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family
from vllm_spec_lint.model.twins import class_shapes

KCI = "vllm.v1.kv_cache_interface"
# vLLM's chain above MLAAttentionSpec, in the built-in hierarchy.
MLA_CHAIN = {
    f"{KCI}.MLAAttentionSpec",
    f"{KCI}.FullAttentionSpec",
    f"{KCI}.AttentionSpec",
    f"{KCI}.KVCacheSpec",
}
PLUGIN = """\
from typing import Generic, TypeVar

from vllm.v1 import kv_cache_interface as kv
from vllm.v1.kv_cache_interface import MLAAttentionSpec

T = TypeVar("T")


class DottedSpec(kv.MLAAttentionSpec): ...
class GenericSpec(MLAAttentionSpec, Generic[T]): ...
class SubscriptedSpec(GenericSpec[int]): ...
class GrandchildSpec(DottedSpec): ...
class LoopA(LoopB): ...
class LoopB(LoopA): ...
"""


@pytest.fixture
def ancestors():
    shapes = class_shapes(PLUGIN, "plugin.specs")
    hierarchy = ClassHierarchy.default()
    known = {c.rpartition(".")[2]: c for c in hierarchy.classes()}
    known.update({s.qualname.rpartition(".")[2]: s.qualname for s in shapes})
    return _ancestry(shapes, hierarchy, known)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("DottedSpec", {"plugin.specs.DottedSpec"} | MLA_CHAIN),
        # Generic is no spec class: it is left out, not looked up.
        ("GenericSpec", {"plugin.specs.GenericSpec"} | MLA_CHAIN),
        (
            "SubscriptedSpec",
            {"plugin.specs.SubscriptedSpec", "plugin.specs.GenericSpec"} | MLA_CHAIN,
        ),
        (
            "GrandchildSpec",
            {"plugin.specs.GrandchildSpec", "plugin.specs.DottedSpec"} | MLA_CHAIN,
        ),
        ("LoopA", {"plugin.specs.LoopA", "plugin.specs.LoopB"}),
    ],
)
def test_a_scanned_classs_ancestors_follow_its_bases_as_written(
    ancestors, name, expected
):
    assert ancestors(f"plugin.specs.{name}") == expected


def test_a_class_of_the_hierarchy_keeps_its_ancestors_there(ancestors):
    assert ancestors(f"{KCI}.MLAAttentionSpec") == MLA_CHAIN


def test_the_spec_hierarchy_is_what_derives_from_the_root():
    hierarchy = ClassHierarchy.default().with_module(
        KCI,
        {
            "KVCacheSpec": (),
            "KVCacheConfig": (),
            "MLAAttentionSpec": ("KVCacheSpec",),
            "SlidingWindowMLASpec": ("KVCacheSpec",),
        },
        "test",
        "scanned tree",
    )
    assert spec_hierarchy(Config(), hierarchy) == [
        f"{KCI}.KVCacheSpec",
        f"{KCI}.MLAAttentionSpec",
        f"{KCI}.SlidingWindowMLASpec",
    ]
    assert _root(Config(), hierarchy) == f"{KCI}.KVCacheSpec"


def test_without_families_there_is_no_root_and_in_a_loop_the_anchor_is_it():
    assert _root(Config(families=()), ClassHierarchy.default()) is None
    hierarchy = ClassHierarchy.default().with_module(
        "plugin.specs",
        {"Anchor": ("Companion",), "Companion": ("Anchor",)},
        "test",
        "scanned tree",
    )
    family = Family("x", "plugin.specs", ("Anchor", "Companion"))
    assert _root(Config(families=(family,)), hierarchy) == "plugin.specs.Anchor"
