"""Stand-ins: a plugin's subclasses of a family's classes that take their
place, and the families they form.

A plugin that builds ``AscendMLAAttentionSpec(MLAAttentionSpec)`` wherever
vLLM builds ``MLAAttentionSpec`` tests against its own class; the bug class
is the same in its names. A subclass *stands in* for its parent when its
name extends the parent's (``AscendMLAAttentionSpec``,
``TkvMLAAttentionSpec``): a plugin names its replacement after what it
replaces. A subclass named otherwise (``IndexerCacheSpec(MLAAttentionSpec)``)
is taken for a different cache that reuses the parent's code.

Each stand-in of an anchor forms a family: the stand-in is its anchor; its
companions are the stand-ins of the configured family's companions, or the
companions themselves where the plugin has none (a test naming both halves
of a plugin's mirrored pair is complete). A subclass that is no stand-in
forms a *quiet* family: reported only with ``--strict``, with the reason.

Only classes outside the family's own modules are considered (vLLM's
``HiddenStateCacheSpec`` is part of vLLM's own design), and none that a
configured family names.
"""

from __future__ import annotations

from collections.abc import Iterable

from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family, short_name


def stands_in(subclass: str, parent: str) -> bool:
    """Whether ``subclass``'s name extends ``parent``'s."""
    sub, name = short_name(subclass), short_name(parent)
    return name in sub and sub != name


def stand_in_families(
    families: Iterable[Family], hierarchy: ClassHierarchy
) -> tuple[Family, ...]:
    """The families the stand-ins (and the other subclasses) of each
    configured family's anchor form, the stand-ins' first, each in name
    order; none for a class a configured family already names."""
    families = tuple(families)
    configured = {m for f in families for m in f.qualified_members}
    subclasses: dict[str, list[str]] = {}
    for cls in sorted(hierarchy.bases):
        for base in hierarchy.bases[cls]:
            subclasses.setdefault(base, []).append(cls)
    derived = []
    for family in families:
        if family.derived_from or family.evidence:
            continue  # only configured families have stand-ins
        companions = []
        for companion in family.companions:
            own = [
                c
                for c in _outside(family, subclasses.get(companion, ()))
                if stands_in(c, companion)
            ]
            companions += own or [companion]
        for cls in _outside(family, subclasses.get(family.anchor, ())):
            if cls not in configured:
                derived.append(_family(family, cls, companions))
    return tuple(sorted(derived, key=lambda f: bool(f.quiet_reason)))


def _outside(family: Family, classes: Iterable[str]) -> list[str]:
    """Those of ``classes`` not defined in the family's own modules."""
    return [c for c in classes if c.rpartition(".")[0] not in family.modules]


def _family(family: Family, cls: str, companions: list[str]) -> Family:
    members = (cls, *companions)
    anchor = short_name(family.anchor)
    name = short_name(cls)
    standing_in = [
        c for c in companions if c not in family.companions
    ]  # the companions' stand-ins
    if stands_in(cls, family.anchor):
        why = f"{name} stands in for {anchor} (its name extends {anchor}'s)"
        if standing_in:
            pairs = ", ".join(short_name(c) for c in standing_in)
            why += f"; {pairs} for the companion"
        quiet = ""
    else:
        why = f"{name} subclasses {anchor} under a name of its own"
        quiet = (
            f"not a stand-in: {name} subclasses {anchor} under a name of its "
            "own (a different cache reusing its code?)"
        )
    return Family(
        name=f"{family.name}:{name}",
        module=cls.rpartition(".")[0],
        members=tuple(short_name(m) for m in members),
        member_modules=tuple(m.rpartition(".")[0] for m in members),
        derived_from=family.name,
        stand_in=why,
        quiet_reason=quiet,
        # Stand-ins inherit the property of the classes they stand in for.
        layout_property=family.property_name,
    )
