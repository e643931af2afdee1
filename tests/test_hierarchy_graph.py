"""faces/hierarchy_graph.py on its own: the dot and mermaid text for a small
hierarchy, one family and two twins (one the family's own pair), written out
(the whole command's graphs are golden files in tests/test_twins.py)."""

from __future__ import annotations

from vllm_spec_lint.faces.hierarchy_graph import dot, mermaid
from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy, Family
from vllm_spec_lint.model.twins import Twin

K = KV_CACHE_INTERFACE
CLASSES = [
    f"{K}.KVCacheSpec",
    f"{K}.AttentionSpec",
    f"{K}.MLAAttentionSpec",
    f"{K}.SlidingWindowMLASpec",
    f"{K}.ChunkedSpec",
]
FAMILY = Family("mla", K, ("MLAAttentionSpec", "SlidingWindowMLASpec"))
TWINS = [
    # The family's own pair: the family's label stays.
    Twin(f"{K}.MLAAttentionSpec", f"{K}.SlidingWindowMLASpec", 9.0, ("x",)),
    Twin(f"{K}.MLAAttentionSpec", f"{K}.ChunkedSpec", 6.5, ("shares fields a, b",)),
]


def test_dot_fills_anchors_and_companions_and_draws_each_pair_once():
    assert dot(ClassHierarchy.default(), CLASSES, [FAMILY], TWINS) == (
        "digraph spec_hierarchy {\n"
        "    rankdir=TB;\n"
        "    node [shape=box, fontname=Helvetica];\n"
        '    "KVCacheSpec";\n'
        '    "AttentionSpec";\n'
        '    "MLAAttentionSpec" [style=filled, fillcolor="#fde2e2"];\n'
        '    "SlidingWindowMLASpec" [style=filled, fillcolor="#e2effd"];\n'
        '    "ChunkedSpec" [style=filled, fillcolor="#e2effd"];\n'
        '    "KVCacheSpec" -> "AttentionSpec";\n'
        '    "MLAAttentionSpec" -> "SlidingWindowMLASpec" [style=dashed, dir=none, '
        'constraint=false, label="family mla"];\n'
        '    "MLAAttentionSpec" -> "ChunkedSpec" [style=dashed, dir=none, '
        'constraint=false, label="discovered twin, score 6.5"];\n'
        "}\n"
    )


def test_mermaid_classes_anchors_and_companions():
    assert mermaid(ClassHierarchy.default(), CLASSES, [FAMILY], TWINS) == (
        "flowchart TD\n"
        "    KVCacheSpec --> AttentionSpec\n"
        '    MLAAttentionSpec -.-|"family mla"| SlidingWindowMLASpec\n'
        '    MLAAttentionSpec -.-|"discovered twin, score 6.5"| ChunkedSpec\n'
        "    classDef anchor fill:#fde2e2,stroke:#c0392b\n"
        "    classDef companion fill:#e2effd,stroke:#2874a6\n"
        "    class MLAAttentionSpec anchor\n"
        "    class ChunkedSpec,SlidingWindowMLASpec companion\n"
    )
