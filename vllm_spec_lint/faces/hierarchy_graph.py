"""The spec hierarchy as a picture: mermaid (GitHub renders it in pull
requests and Markdown) or graphviz dot. Edges go from a base class to the
class that derives from it; each family's anchor and companions are
marked, and joined by a dashed line (discovered twins too, with --discover)."""

from __future__ import annotations

from collections.abc import Iterable

from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family, short_name

_ANCHOR_FILL, _COMPANION_FILL = "#fde2e2", "#e2effd"


def _edges(hierarchy: ClassHierarchy, classes: list[str]) -> list[tuple[str, str]]:
    shown = set(classes)
    return [
        (base, cls)
        for cls in classes
        for base in hierarchy.bases.get(cls, ())
        if base in shown
    ]


def _label(family: Family) -> str:
    if family.quiet_reason:
        return f"subclass {family.name}, --strict only"
    return f"{'stand-in' if family.derived_from else 'family'} {family.name}"


def _pairs(families: Iterable[Family], twins) -> list[tuple[str, str, str]]:
    """(anchor, companion, label) of each family pair and each twin."""
    pairs = {(f.anchor, c): _label(f) for f in families for c in f.companions}
    for twin in twins:
        pairs.setdefault(
            (twin.anchor, twin.companion), f"discovered twin, score {twin.score:g}"
        )
    return [(a, c, label) for (a, c), label in pairs.items()]


def mermaid(
    hierarchy: ClassHierarchy,
    classes: list[str],
    families: Iterable[Family],
    twins=(),
) -> str:
    pairs = _pairs(families, twins)
    lines = ["flowchart TD"]
    lines += [
        f"    {short_name(b)} --> {short_name(c)}"
        for b, c in _edges(hierarchy, classes)
    ]
    lines += [
        f'    {short_name(a)} -.-|"{label}"| {short_name(c)}' for a, c, label in pairs
    ]
    anchors = sorted({short_name(a) for a, _, _ in pairs})
    companions = sorted({short_name(c) for _, c, _ in pairs} - set(anchors))
    lines.append(f"    classDef anchor fill:{_ANCHOR_FILL},stroke:#c0392b")
    lines.append(f"    classDef companion fill:{_COMPANION_FILL},stroke:#2874a6")
    if anchors:
        lines.append(f"    class {','.join(anchors)} anchor")
    if companions:
        lines.append(f"    class {','.join(companions)} companion")
    return "\n".join(lines) + "\n"


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(
    hierarchy: ClassHierarchy,
    classes: list[str],
    families: Iterable[Family],
    twins=(),
) -> str:
    pairs = _pairs(families, twins)
    lines = [
        "digraph spec_hierarchy {",
        "    rankdir=TB;",
        "    node [shape=box, fontname=Helvetica];",
    ]
    anchors = {a for a, _, _ in pairs}
    for cls in classes:
        attributes = ""
        if cls in anchors:
            attributes = f' [style=filled, fillcolor="{_ANCHOR_FILL}"]'
        elif any(cls == c for _, c, _ in pairs):
            attributes = f' [style=filled, fillcolor="{_COMPANION_FILL}"]'
        lines.append(f"    {_quoted(short_name(cls))}{attributes};")
    lines += [
        f"    {_quoted(short_name(b))} -> {_quoted(short_name(c))};"
        for b, c in _edges(hierarchy, classes)
    ]
    lines += [
        f"    {_quoted(short_name(a))} -> {_quoted(short_name(c))} "
        f"[style=dashed, dir=none, constraint=false, label={_quoted(label)}];"
        for a, c, label in pairs
    ]
    lines.append("}")
    return "\n".join(lines) + "\n"
