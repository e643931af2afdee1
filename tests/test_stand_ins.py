"""The model under the plugin support: stand-ins, bases read through
imports, classes whose bases are unknown, MRO name sets bound to a name."""

from __future__ import annotations

from tests.conftest import findings
from vllm_spec_lint.model.hierarchy import (
    KV_CACHE_INTERFACE,
    ClassHierarchy,
    Family,
    read_class_bases,
)
from vllm_spec_lint.model.stand_ins import stand_in_families, stands_in

KCI = KV_CACHE_INTERFACE
MLA = Family("mla", KCI, ("MLAAttentionSpec", "SlidingWindowMLASpec"))


def _with_plugin(classes: dict[str, tuple[str, ...]]) -> ClassHierarchy:
    return ClassHierarchy.default().with_classes(classes, "test", "scanned files")


def test_a_name_that_extends_the_parents_stands_in_for_it():
    assert stands_in("p.AscendMLAAttentionSpec", f"{KCI}.MLAAttentionSpec")
    assert stands_in("p.MLAAttentionSpecV2", f"{KCI}.MLAAttentionSpec")
    assert not stands_in("p.IndexerCacheSpec", f"{KCI}.MLAAttentionSpec")
    assert not stands_in("p.MLAAttentionSpec", f"{KCI}.MLAAttentionSpec")


def test_a_mirrored_pair_forms_one_family_of_the_two_stand_ins():
    hierarchy = _with_plugin(
        {
            "p.XMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",),
            "p.XSlidingWindowMLASpec": (f"{KCI}.SlidingWindowMLASpec",),
        }
    )
    (family,) = stand_in_families([MLA], hierarchy)
    assert family.anchor == "p.XMLAAttentionSpec"
    assert family.companions == ("p.XSlidingWindowMLASpec",)
    assert family.derived_from == "mla"
    assert family.quiet_reason == ""
    assert family.stand_in == (
        "XMLAAttentionSpec stands in for MLAAttentionSpec (its name extends "
        "MLAAttentionSpec's); XSlidingWindowMLASpec for the companion"
    )


def test_a_stand_in_without_a_companions_stand_in_is_paired_with_vllms():
    hierarchy = _with_plugin({"q.TkvMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",)})
    (family,) = stand_in_families([MLA], hierarchy)
    assert family.anchor == "q.TkvMLAAttentionSpec"
    assert family.companions == (f"{KCI}.SlidingWindowMLASpec",)
    assert family.module == "q"
    assert family.member_modules == ("q", KCI)


def test_a_subclass_under_its_own_name_forms_a_quiet_family_after_the_stand_ins():
    hierarchy = _with_plugin(
        {
            "p.AIndexerSpec": (f"{KCI}.MLAAttentionSpec",),
            "p.ZMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",),
        }
    )
    stand_in, other = stand_in_families([MLA], hierarchy)
    assert stand_in.anchor == "p.ZMLAAttentionSpec" and not stand_in.quiet_reason
    assert other.anchor == "p.AIndexerSpec"
    assert other.quiet_reason == (
        "not a stand-in: AIndexerSpec subclasses MLAAttentionSpec under a name of "
        "its own (a different cache reusing its code?)"
    )


def test_the_familys_own_module_and_configured_classes_derive_nothing():
    # vLLM's own HiddenStateCacheSpec (in the defaults) is vLLM's design.
    assert stand_in_families([MLA], ClassHierarchy.default()) == ()
    hierarchy = _with_plugin({"p.XMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",)})
    configured = Family("x", "p", ("XMLAAttentionSpec", "Other"))
    assert stand_in_families([MLA, configured], hierarchy) == ()


def test_imported_bases_are_read_by_their_dotted_names():
    source = (
        "import vllm.v1.kv_cache_interface as kci\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as M\n"
        "from ..base import Mixin\n"
        "from typing import Generic\n"
        "class A(M):\n    pass\n"
        "class B(kci.SlidingWindowMLASpec, Mixin):\n    pass\n"
        "class C(A, Generic[T], object):\n    pass\n"
    )
    assert read_class_bases(source) == {
        "A": (f"{KCI}.MLAAttentionSpec",),
        "B": (f"{KCI}.SlidingWindowMLASpec", "..base.Mixin"),
        "C": ("A", "typing.Generic"),
    }


def test_a_modules_imported_bases_resolve_against_the_known_classes():
    bases = {
        "A": (f"{KCI}.MLAAttentionSpec",),
        "B": ("vllm.attention.SlidingWindowMLASpec",),  # re-exported
        "C": ("..base.Mixin",),
        "D": ("A",),
    }
    module = "p.sub.specs"
    hierarchy = ClassHierarchy.default().with_module(module, bases, "s", "o")
    assert hierarchy.bases[f"{module}.A"] == (f"{KCI}.MLAAttentionSpec",)
    assert hierarchy.bases[f"{module}.B"] == (f"{KCI}.SlidingWindowMLASpec",)
    assert hierarchy.bases[f"{module}.C"] == ()
    assert hierarchy.unresolved == {f"{module}.C": ("p.base.Mixin",)}
    assert hierarchy.bases[f"{module}.D"] == (f"{module}.A",)
    assert hierarchy.knows_bases(f"{module}.D")
    assert not hierarchy.knows_bases(f"{module}.C")
    assert not hierarchy.knows_bases(f"{module}.Missing")


def test_a_parent_test_does_not_exclude_a_companion_whose_bases_are_unknown():
    from vllm_spec_lint.core.settings import Config

    # The companion's module was never read: AttentionSpec may admit it.
    family = Family("p", "p.specs", ("PMLAAttentionSpec", "PSlidingWindowMLASpec"))
    config = Config(families=(family,))
    source = """\
        from vllm.v1.kv_cache_interface import AttentionSpec
        from p.specs import PMLAAttentionSpec

        def f(spec):
            if not isinstance(spec, AttentionSpec):
                return 0
            return isinstance(spec, PMLAAttentionSpec)
        """
    assert findings(source, config=config) == [("VSL001", 7, 29)]


def test_a_name_set_of_the_mro_bound_once_is_read_where_it_is_tested():
    source = """\
        from vllm.v1.kv_cache_interface import MLAAttentionSpec

        def once(spec):
            names = {k.__name__ for k in type(spec).__mro__}
            return "MLAAttentionSpec" in names

        def rebound(spec):
            names = {k.__name__ for k in type(spec).__mro__}
            names = set()
            return "MLAAttentionSpec" in names

        def elsewhere(spec, names):
            return "MLAAttentionSpec" in names

        listed = [k.__name__ for k in type(x).__mro__]
        ok = "MLAAttentionSpec" not in listed

        flags = ["MLAAttentionSpec" in names for names in groups]
        """
    assert findings(source) == [("VSL005", 5, 12), ("VSL005", 16, 6)]


def test_a_derived_or_discovered_family_has_no_stand_ins_of_its_own():
    from dataclasses import replace

    hierarchy = _with_plugin({"q.TkvMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",)})
    assert len(stand_in_families([MLA], hierarchy)) == 1
    derived = replace(MLA, derived_from="mla")
    discovered = replace(MLA, evidence="shares fields a, b")
    assert stand_in_families([derived], hierarchy) == ()
    assert stand_in_families([discovered], hierarchy) == ()


def test_a_quiet_familys_test_is_reported_only_with_strict_saying_why():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    hierarchy = _with_plugin({"p.AIndexerSpec": (f"{KCI}.MLAAttentionSpec",)})
    (quiet,) = stand_in_families([MLA], hierarchy)
    source = "from p import AIndexerSpec\n\nok = isinstance(spec, AIndexerSpec)\n"
    reason = (
        "not a stand-in: AIndexerSpec subclasses MLAAttentionSpec under a name of "
        "its own (a different cache reusing its code?)"
    )
    for strict in (False, True):
        analysis = analyze_source(
            source, "x.py", Config(families=(MLA, quiet), strict=strict), hierarchy
        )
        assert [(f.code, f.location) for f in analysis.findings] == (
            [("VSL001", (3, 23))] if strict else []
        )
        assert [f.suppressed_by for f in analysis.findings + analysis.suppressed] == [
            reason
        ]
