"""What the layout rewrite knows to be a spec (model/layout.py), seen in the
rewrite it writes: a value known to be a spec reads the property alone
(``s.uses_mla_layout``); any other value keeps a guard
(``isinstance(s, KVCacheSpec) and s.uses_mla_layout``); a test the property
cannot take stays VSL001's."""

from __future__ import annotations

import pytest

from tests.test_layout_property import CLASSES, _hierarchy
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config

HEAD = """\
import typing
from collections import OrderedDict
from collections.abc import Iterable, Mapping, MutableMapping, Sequence

from vllm.v1.kv_cache_interface import (
    AttentionSpec, KVCacheSpec, MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec
)

"""
WHOLE = "isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))"
KNOWN = "s.uses_mla_layout"
GUARDED = "isinstance(s, KVCacheSpec) and s.uses_mla_layout"


def _rewritten(source: str) -> str:
    outcome = fix_source(
        HEAD + source, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other",
        unsafe=True, formatter=None,
    )  # fmt: skip
    assert outcome.failure is None
    return outcome.text[len(HEAD) :]


# Elements of a parameter annotated as a collection of specs: known.
COLLECTIONS = {
    "dict-values": ("specs: dict[str, KVCacheSpec]", "for s in specs.values()"),
    "mapping-values": ("specs: Mapping[str, KVCacheSpec]", "for s in specs.values()"),
    "mutable-mapping": ("specs: MutableMapping[str, KVCacheSpec]", "for s in specs.values()"),
    "ordered-dict": ("specs: OrderedDict[str, KVCacheSpec]", "for s in specs.values()"),
    "typing-mapping": ("specs: typing.Mapping[str, KVCacheSpec]", "for s in specs.values()"),
    "items-second": ("specs: dict[str, KVCacheSpec]", "for k, s in specs.items()"),
    "list": ("specs: list[KVCacheSpec]", "for s in specs"),
    "sequence": ("specs: Sequence[KVCacheSpec]", "for s in specs"),
    "iterable": ("specs: Iterable[KVCacheSpec]", "for s in specs"),
    "set": ("specs: set[KVCacheSpec]", "for s in specs"),
    "frozenset": ("specs: frozenset[KVCacheSpec]", "for s in specs"),
    "tuple-repeated": ("specs: tuple[KVCacheSpec, ...]", "for s in specs"),
    "tuple-of-specs": ("specs: tuple[KVCacheSpec, AttentionSpec]", "for s in specs"),
}  # fmt: skip

# Loops whose element is not known to be a spec: guarded.
NOT_KNOWN = {
    "tuple-with-int": ("specs: tuple[KVCacheSpec, int]", "for s in specs"),
    "bare-list": ("specs: list", "for s in specs"),
    "slice-in-list": ("specs: list[1:2]", "for s in specs"),
    "slice-in-tuple": ("specs: tuple[KVCacheSpec, 1:2]", "for s in specs"),
    "items-not-unpacked": ("specs: dict[str, KVCacheSpec]", "for s in specs.items()"),
    "other-method-unpacked": ("specs: dict[str, KVCacheSpec]", "for k, s in specs.copy()"),
    "items-nested": ("specs: dict[str, KVCacheSpec]", "for k, (a, s) in specs.items()"),
    "items-three": ("specs: dict[str, KVCacheSpec]", "for k, s, w in specs.items()"),
    "values-unpacked": (
        "specs: dict[str, tuple[KVCacheSpec, KVCacheSpec]]", "for (s, b) in specs.values()"
    ),
    "unbound-collection": ("", "for s in undefined_specs"),
    "called-collection": ("make", "for s in make()"),
    "optional-collection": ("specs: list[KVCacheSpec] | None", "for s in specs"),
}  # fmt: skip


@pytest.mark.parametrize("name", COLLECTIONS)
def test_an_element_of_an_annotated_collection_of_specs_reads_the_property_alone(name):
    params, loop = COLLECTIONS[name]
    source = f"def f({params}):\n    return [{WHOLE} {loop}]\n"
    assert _rewritten(source) == f"def f({params}):\n    return [{KNOWN} {loop}]\n"


@pytest.mark.parametrize("name", NOT_KNOWN)
def test_an_element_of_anything_else_keeps_the_guard(name):
    params, loop = NOT_KNOWN[name]
    source = f"def f({params}):\n    return [{WHOLE} {loop}]\n"
    assert _rewritten(source) == f"def f({params}):\n    return [{GUARDED} {loop}]\n"


@pytest.mark.parametrize(
    "source, known",
    [
        # Comprehensions of each kind own their loop variable.
        ("def f(specs: list[KVCacheSpec]):\n    return {WHOLE for s in specs}\n", True),
        (
            "def f(specs: dict[str, KVCacheSpec]):\n"
            "    return {k: WHOLE for k, s in specs.items()}\n",
            True,
        ),
        (
            "def f(specs: list[KVCacheSpec]):\n    return any(WHOLE for s in specs)\n",
            True,
        ),
        # A loop statement too, its variable bound once.
        (
            "def f(specs: list[KVCacheSpec]):\n"
            "    for s in specs:\n        if WHOLE:\n            return s\n",
            True,
        ),
        # Bound again in the loop: no longer the element.
        (
            "def f(specs: list[KVCacheSpec]):\n"
            "    for s in specs:\n        s = s.base\n        if WHOLE:\n"
            "            return s\n",
            False,
        ),
        # A parameter annotated with a spec class, bound once.
        ("def f(s: KVCacheSpec):\n    return WHOLE\n", True),
        ("def f(s: KVCacheSpec, make):\n    s = make()\n    return WHOLE\n", False),
        ('def f(s: "KVCacheSpec"):\n    return WHOLE\n', False),
        ("def f(s: int):\n    return WHOLE\n", False),
        ("def f(s: KVCacheSpec | None):\n    return WHOLE\n", False),
        # A collection that is no parameter of the function.
        (
            "class Holder:\n    def f(self):\n"
            "        return [WHOLE for s in self.specs]\n",
            False,
        ),
        (
            "SPECS: list[KVCacheSpec] = []\n\n\n"
            "def f():\n    return [WHOLE for s in SPECS]\n",
            False,
        ),
        # An earlier test of the same decision: only a spec class tested.
        ("def f(s):\n    return isinstance(s, AttentionSpec) and WHOLE\n", True),
        ("def f(s):\n    return not isinstance(s, AttentionSpec) or WHOLE\n", True),
        (
            "def f(s):\n    return isinstance(s, (AttentionSpec, int)) and WHOLE\n",
            False,
        ),
        (
            "class Foo:\n    pass\n\n\n"
            "def f(s):\n    return isinstance(s, Foo) and WHOLE\n",
            False,
        ),
        ("def f(s, Foo):\n    return isinstance(s, Foo) and WHOLE\n", False),
        (
            "class Foo:\n    pass\n\n\n"
            "def f(s):\n    return isinstance(s, (AttentionSpec, Foo)) and WHOLE\n",
            False,
        ),
        # A class that is no spec, as an annotation.
        ("class Foo:\n    pass\n\n\ndef f(s: Foo):\n    return WHOLE\n", False),
        # A test of no class, of a call among classes, and a negative one.
        ("def f(s, kinds):\n    return isinstance(s, kinds()) and WHOLE\n", False),
        (
            "def f(s, kinds):\n"
            "    return isinstance(s, (AttentionSpec, kinds())) and WHOLE\n",
            False,
        ),
        ("def f(s):\n    return not isinstance(s, MambaSpec) and WHOLE\n", False),
        ("def f(s):\n    return isinstance(s, ()) and WHOLE\n", False),
    ],
)
def test_the_rewrite_reads_the_property_alone_only_where_the_value_is_a_spec(
    source, known
):
    expected = source.replace("WHOLE", KNOWN if known else GUARDED)
    assert _rewritten(source.replace("WHOLE", WHOLE)) == expected


@pytest.mark.parametrize(
    "source",
    [
        "def f(s: Unrelated):\n    return WHOLE\n",
        "def f(s):\n    return isinstance(s, (AttentionSpec, Unrelated)) and WHOLE\n",
    ],
    ids=["annotation", "earlier-test"],
)
def test_a_known_class_outside_the_spec_hierarchy_keeps_the_guard(source):
    classes = CLASSES + "\n\nclass Unrelated:\n    pass\n"
    head = HEAD.replace(
        "AttentionSpec, KVCacheSpec", "AttentionSpec, KVCacheSpec, Unrelated"
    )
    outcome = fix_source(
        head + source.replace("WHOLE", WHOLE), "x.py", Config(), _hierarchy(classes),
        module_name="vllm.other", unsafe=True, formatter=None,
    )  # fmt: skip
    assert outcome.text == head + source.replace("WHOLE", GUARDED)


def test_an_attribute_other_than_kv_cache_spec_is_not_known_to_be_a_spec():
    source = (
        "class Holder:\n    def f(self):\n"
        "        return isinstance(self.other_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert _rewritten(source) == source.replace(
        "isinstance(self.other_spec, (MLAAttentionSpec, SlidingWindowMLASpec))",
        "isinstance(self.other_spec, KVCacheSpec) and self.other_spec.uses_mla_layout",
    )


def test_an_exact_test_of_a_set_display_is_the_property_for_a_known_spec():
    source = "def f(s: KVCacheSpec):\n    return type(s) in {MLAAttentionSpec, SlidingWindowMLASpec}\n"
    assert _rewritten(source) == f"def f(s: KVCacheSpec):\n    return {KNOWN}\n"


@pytest.mark.parametrize(
    "classinfo",
    [
        "(*KINDS, MLAAttentionSpec)",  # starred: not written out
        "(MLAAttentionSpec, kinds())",  # a call among the classes
        "KINDS + (MLAAttentionSpec,)",  # a concatenation
        "MLAAttentionSpec | kinds()",  # a union with a call, either side
        "kinds() | MLAAttentionSpec",
    ],
)
def test_a_classinfo_the_property_cannot_take_stays_vsl001s(classinfo):
    source = (
        "KINDS = (MambaSpec,)\n\n\n"
        f"def f(s: KVCacheSpec, kinds):\n    return isinstance(s, {classinfo})\n"
    )
    analysis = analyze_source(
        HEAD + source, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other"
    )
    assert [f.code for f in analysis.findings] == ["VSL001"]


@pytest.mark.parametrize(
    "source",
    [
        # Only the companion named: no test of the anchor to rewrite.
        "def f(s: KVCacheSpec):\n    return isinstance(s, SlidingWindowMLASpec)\n",
        # A match pattern: VSL003's, the property has no pattern.
        "def f(s: KVCacheSpec):\n    match s:\n        case MLAAttentionSpec():\n"
        "            return 1\n",
    ],
    ids=["companion-only", "match-class"],
)
def test_a_test_without_the_anchor_or_without_a_call_is_no_layout_test(source):
    analysis = analyze_source(
        HEAD + source, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other"
    )
    assert "VSL008" not in [f.code for f in analysis.findings]
