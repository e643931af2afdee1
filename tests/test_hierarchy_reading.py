"""Reading class hierarchies (model/hierarchy.py): what a second module
keeps of the first, how imports name bases, what a class body defines, and
the layout property's name."""

from __future__ import annotations

from vllm_spec_lint.model.hierarchy import (
    KV_CACHE_INTERFACE,
    ClassHierarchy,
    Family,
    body_names,
    read_class_bases,
    read_declared,
)

PLUGIN = "from unknown import Base\n\n\nclass A(Base):\n    pass\n\n\nclass B(A):\n    pass\n"


def test_a_class_with_an_unresolved_ancestor_has_unknown_bases_after_another_read():
    first = ClassHierarchy.default().with_module(
        "p.kv", read_class_bases(PLUGIN), "p/kv.py", "scanned tree"
    )
    second = first.with_module("q.kv", {"C": ()}, "q/kv.py", "scanned tree")
    for hierarchy in (first, second):
        assert hierarchy.unresolved == {"p.kv.A": ("unknown.Base",)}
        # B's own bases are known, one of its ancestors' is not.
        assert not hierarchy.knows_bases("p.kv.B")
        assert hierarchy.knows_bases("q.kv.C") is (hierarchy is second)


def test_reading_vllms_module_drops_the_defaults_but_keeps_other_sources():
    plugin = ClassHierarchy.default().with_module(
        "p.kv", {"X": ()}, "p/kv.py", "scanned tree"
    )
    read = plugin.with_module(
        KV_CACHE_INTERFACE,
        {"KVCacheSpec": ()},
        "v/kv.py",
        "vllm-source",
        {"KVCacheSpec": frozenset({"uses_mla_layout"})},
    )
    assert read.described_sources() == "scanned tree: p/kv.py, vllm-source: v/kv.py"
    # A third read keeps what the second declared.
    again = read.with_module("q.kv", {"C": ()}, "q/kv.py", "scanned tree")
    assert again.declared == {
        f"{KV_CACHE_INTERFACE}.KVCacheSpec": frozenset({"uses_mla_layout"})
    }


def test_bases_are_named_through_relative_and_dotted_imports():
    source = (
        "import pkg.mod\n"
        "from . import base\n"
        "from .. import up as other\n\n\n"
        "class A(pkg.mod.Base):\n    pass\n\n\n"
        "class B(base.Base):\n    pass\n\n\n"
        "class C(other.Thing):\n    pass\n"
    )
    assert read_class_bases(source) == {
        "A": ("pkg.mod.Base",),
        "B": (".base.Base",),
        "C": ("..up.Thing",),
    }


def test_bases_are_named_through_imports_in_every_kind_of_block():
    """Imports under ``if``, ``try`` (its handlers too), ``with`` and
    ``match``, as well as at the top; of two imports of one name, the one
    met last going down level by level (as ``ast.walk`` would) names it."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from first import Twice\n"
        "if TYPE_CHECKING:\n    from a import A\n"
        "try:\n    from b import B\nexcept ImportError:\n"
        "    from c import C\n    from deeper import Twice\n"
        "with context():\n    from d import D\n"
        "match version:\n    case 1:\n        from e import E\n"
        "from second import Twice\n\n\n"
        "class X(A, B, C, D, E, Twice):\n    pass\n"
    )
    assert read_class_bases(source) == {
        "X": ("a.A", "b.B", "c.C", "d.D", "e.E", "deeper.Twice"),
    }


def test_a_source_naming_none_of_the_declarations_is_not_parsed():
    assert read_declared("class (", {"uses_mla_layout"}) == {}


def test_a_class_body_defines_methods_and_plain_annotated_names_only():
    import ast

    node = ast.parse(
        "class A:\n    rows: int\n    other.attr: int = 1\n"
        "    async def load(self):\n        pass\n"
    ).body[0]
    assert body_names(node) == {"rows", "load"}


def test_the_layout_property_is_configured_or_made_from_the_anchors_name():
    assert (
        Family("f", "m", ("MLAAttentionSpec", "B")).property_name == "uses_mla_layout"
    )
    configured = Family(
        "f", "m", ("MLAAttentionSpec", "B"), layout_property="is_latent"
    )
    assert configured.property_name == "is_latent"
    # An anchor that is only the ending keeps it as its stem.
    assert Family("f", "m", ("Spec", "B")).property_name == "uses_spec_layout"
    assert (
        Family("f", "m", ("AttentionSpec", "B")).property_name
        == "uses_attention_spec_layout"
    )
