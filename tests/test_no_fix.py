"""A finding whose fix cannot be written stays reported and carries no fix:
the companion's name is taken, the pattern has sub-patterns, the comparison
is no equality. Unsafe fixes leave such a file as it is."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config

TAKEN = "\nSlidingWindowMLASpec = None\n"

CASES = {
    "exact-comparison-name-taken": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        + TAKEN
        + "\n\ndef f(x):\n    return type(x) is MLAAttentionSpec\n",
        ("VSL002", 7, 23),
    ),
    "match-class-name-taken": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        + TAKEN
        + "\n\ndef f(x):\n    match x:\n        case MLAAttentionSpec():\n"
        "            return 1\n",
        ("VSL003", 8, 14),
    ),
    # ``A(16) | C()`` would bind or test only in one alternative.
    "match-class-positional-sub-pattern": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def f(x):\n    match x:\n        case MLAAttentionSpec(16):\n"
        "            return 1\n",
        ("VSL003", 6, 14),
    ),
    "match-class-keyword-sub-pattern": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def f(x):\n    match x:\n        case MLAAttentionSpec(block_size=16):\n"
        "            return 1\n",
        ("VSL003", 6, 14),
    ),
    # ``is`` with a string: no membership test says the same.
    "class-name-identity": (
        'def f(x):\n    return type(x).__name__ is "MLAAttentionSpec"\n',
        ("VSL005", 2, 32),
    ),
    "class-name-in-mro-names": (
        "def f(x):\n"
        '    return "MLAAttentionSpec" in {c.__name__ for c in type(x).__mro__}\n',
        ("VSL005", 2, 12),
    ),
    "registration-name-taken": (
        "import functools\n\n"
        "from vllm.v1.kv_cache_interface import KVCacheSpec, MLAAttentionSpec\n"
        + TAKEN
        + "\n\n@functools.singledispatch\n"
        "def rows(spec: KVCacheSpec) -> int:\n    return 2\n\n\n"
        "@rows.register\ndef _(spec: MLAAttentionSpec) -> int:\n    return 1\n",
        ("VSL006", 14, 13),
    ),
    "table-of-pairs-name-taken": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        + TAKEN
        + "HANDLERS = dict([(MLAAttentionSpec, 1)])\n\n\n"
        "def f(x):\n    return HANDLERS[type(x)]\n",
        ("VSL006", 4, 19),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_a_finding_whose_fix_cannot_be_written_has_none(name):
    source, expected = CASES[name]
    [finding] = analyze_source(source, "x.py", Config()).findings
    assert ((finding.code, *finding.location), finding.fix) == (expected, None)
    outcome = fix_source(source, "x.py", Config(), formatter=None, unsafe=True)
    assert (outcome.text, outcome.failure) == (source, None)


# -- a plugin's stand-in named through its module ------------------------------


def _plugin_config(classes: dict[str, tuple[str, ...]], families=None):
    from dataclasses import replace

    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.stand_ins import stand_in_families

    hierarchy = ClassHierarchy.default().with_classes(classes, "test", "scanned files")
    config = Config() if families is None else Config(families=families)
    config = replace(
        config, families=config.families + stand_in_families(config.families, hierarchy)
    )
    return config, hierarchy


KCI = "vllm.v1.kv_cache_interface"


@pytest.mark.parametrize(
    "imports, fixed",
    [
        # vLLM's companion is not in the plugin's module: ``q.`` cannot name it.
        ("import q\n", None),
        # Bound already: named as bound, beside the anchor's attribute.
        (
            "import q\nfrom vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n",
            "isinstance(spec, (q.TkvMLAAttentionSpec, SlidingWindowMLASpec))",
        ),
    ],
    ids=["unbound", "bound"],
)
def test_vllms_companion_of_a_stand_in_is_named_only_where_bound(imports, fixed):
    config, hierarchy = _plugin_config(
        {"q.TkvMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",)}
    )
    source = imports + "\nok = isinstance(spec, q.TkvMLAAttentionSpec)\n"
    outcome = fix_source(
        source, "x.py", config, hierarchy, module_name="r", unsafe=True, formatter=None
    )
    expected = (
        source
        if fixed is None
        else source.replace("isinstance(spec, q.TkvMLAAttentionSpec)", fixed)
    )
    assert outcome.text == expected


def test_a_stand_ins_companion_in_its_module_is_not_imported_beside_an_attribute():
    from vllm_spec_lint.model.hierarchy import Family

    three = (
        Family("three", KCI, ("MLAAttentionSpec", "SlidingWindowMLASpec", "MambaSpec")),
    )
    config, hierarchy = _plugin_config(
        {
            "q.TkvMLAAttentionSpec": (f"{KCI}.MLAAttentionSpec",),
            "q.TkvSlidingWindowMLASpec": (f"{KCI}.SlidingWindowMLASpec",),
        },
        three,
    )
    # MambaSpec is bound; TkvSlidingWindowMLASpec would need a bare import
    # next to ``q.``'s attribute: no fix rather than two spellings.
    source = (
        "import q\nfrom vllm.v1.kv_cache_interface import MambaSpec\n\n"
        "ok = isinstance(spec, q.TkvMLAAttentionSpec)\n"
    )
    [finding] = analyze_source(
        source, "x.py", config, hierarchy, module_name="r"
    ).findings
    assert (finding.code, finding.message, finding.fix) == (
        "VSL001",
        "isinstance() check against TkvMLAAttentionSpec leaves out "
        "TkvSlidingWindowMLASpec, MambaSpec",
        None,
    )
