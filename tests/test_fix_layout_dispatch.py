"""VSL005 and VSL006 fixes as made, with no formatter (``fix-formatter =
"none"``): names added beside a quoted anchor, table entries, repeated
registrations. Each case is written out, before and after, with the fix's
message and whether it is safe."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config

IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
FIXED_IMPORT = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
)
DISPATCH = (
    "from functools import singledispatch\n\n" + IMPORT + "\n\n"
    "@singledispatch\ndef size(spec):\n    return 0\n\n\n"
)
FIXED_DISPATCH = (
    "from functools import singledispatch\n\n" + FIXED_IMPORT + "\n\n"
    "@singledispatch\ndef size(spec):\n    return 0\n\n\n"
)

# name: (before, after, fix message, applicability)
CASES = {
    "name equal, single quotes kept": (
        "ok = type(spec).__name__ == 'MLAAttentionSpec'\n",
        "ok = type(spec).__name__ in ('MLAAttentionSpec', 'SlidingWindowMLASpec')\n",
        "Compare with ('MLAAttentionSpec', 'SlidingWindowMLASpec')",
        "unsafe",
    ),
    "name on the left, not equal": (
        'ok = "MLAAttentionSpec" != spec.__class__.__name__\n',
        'ok = spec.__class__.__name__ not in ("MLAAttentionSpec", "SlidingWindowMLASpec")\n',
        'Compare with ("MLAAttentionSpec", "SlidingWindowMLASpec")',
        "unsafe",
    ),
    "name in a tuple": (
        'ok = type(spec).__qualname__ in ("MLAAttentionSpec", "Other")\n',
        'ok = type(spec).__qualname__ in ("MLAAttentionSpec", "SlidingWindowMLASpec", "Other")\n',
        'Add "SlidingWindowMLASpec"',
        "unsafe",
    ),
    "mro scan by name": (
        'ok = any(c.__name__ == "MLAAttentionSpec" for c in type(spec).__mro__)\n',
        'ok = any(c.__name__ in ("MLAAttentionSpec", "SlidingWindowMLASpec") '
        "for c in type(spec).__mro__)\n",
        'Compare with ("MLAAttentionSpec", "SlidingWindowMLASpec")',
        "unsafe",
    ),
    "mro scan by name, a list of names": (
        'ok = any(c.__name__ in ["MLAAttentionSpec"] for c in type(spec).__mro__)\n',
        'ok = any(c.__name__ in ["MLAAttentionSpec", "SlidingWindowMLASpec"] '
        "for c in type(spec).__mro__)\n",
        'Add "SlidingWindowMLASpec"',
        "unsafe",
    ),
    "mro scan by class": (
        IMPORT + "ok = any(c == MLAAttentionSpec for c in type(spec).mro())\n",
        FIXED_IMPORT + "ok = any(c in (MLAAttentionSpec, SlidingWindowMLASpec) "
        "for c in type(spec).mro())\n",
        "Compare with (MLAAttentionSpec, SlidingWindowMLASpec)",
        "unsafe",
    ),
    "mro scan by classes in a tuple": (
        IMPORT + "ok = any(c in (MLAAttentionSpec, X) for c in type(spec).mro())\n",
        FIXED_IMPORT + "ok = any(c in (MLAAttentionSpec, SlidingWindowMLASpec, X) "
        "for c in type(spec).mro())\n",
        "Add SlidingWindowMLASpec",
        "unsafe",
    ),
    "table, one line": (
        IMPORT + "T = {MLAAttentionSpec: mla, Other: other}\n",
        FIXED_IMPORT + "T = {MLAAttentionSpec: mla, SlidingWindowMLASpec: mla, "
        "Other: other}\n",
        "Add SlidingWindowMLASpec with MLAAttentionSpec's value",
        "unsafe",
    ),
    "table, one per line, anchor last": (
        IMPORT + "T = {\n    Other: other,\n    MLAAttentionSpec: make(1),\n}\n",
        FIXED_IMPORT + "T = {\n    Other: other,\n    MLAAttentionSpec: make(1),\n"
        "    SlidingWindowMLASpec: make(1),\n}\n",
        "Add SlidingWindowMLASpec with MLAAttentionSpec's value",
        "unsafe",
    ),
    "table through dict()": (
        IMPORT + "T = dict([(MLAAttentionSpec, mla)])\n",
        FIXED_IMPORT
        + "T = dict([(MLAAttentionSpec, mla), (SlidingWindowMLASpec, mla)])\n",
        "Add SlidingWindowMLASpec with MLAAttentionSpec's value",
        "unsafe",
    ),
    "table keyed through the module": (
        "from vllm.v1 import kv_cache_interface as kv\n"
        "T = {kv.MLAAttentionSpec: mla}\n",
        "from vllm.v1 import kv_cache_interface as kv\n"
        "T = {kv.MLAAttentionSpec: mla, kv.SlidingWindowMLASpec: mla}\n",
        "Add SlidingWindowMLASpec with kv.MLAAttentionSpec's value",
        "unsafe",
    ),
    "singledispatch by annotation": (
        DISPATCH + "@size.register\ndef _(spec: MLAAttentionSpec):\n    return 1\n",
        FIXED_DISPATCH + "@size.register\n@size.register(SlidingWindowMLASpec)\n"
        "def _(spec: MLAAttentionSpec):\n    return 1\n",
        "Register SlidingWindowMLASpec as MLAAttentionSpec",
        "unsafe",
    ),
    "singledispatch by argument, among other decorators": (
        DISPATCH + "@cache\n@size.register(MLAAttentionSpec)\n@traced\n"
        "def _(spec):\n    return 1\n",
        FIXED_DISPATCH + "@cache\n@size.register(MLAAttentionSpec)\n"
        "@size.register(SlidingWindowMLASpec)\n@traced\ndef _(spec):\n    return 1\n",
        "Register SlidingWindowMLASpec as MLAAttentionSpec",
        "unsafe",
    ),
    "singledispatch by call": (
        DISPATCH + "size.register(MLAAttentionSpec, lambda spec: 1)\n",
        FIXED_DISPATCH + "size.register(MLAAttentionSpec, lambda spec: 1)\n"
        "size.register(SlidingWindowMLASpec, lambda spec: 1)\n",
        "Register SlidingWindowMLASpec as MLAAttentionSpec",
        "unsafe",
    ),
    "registry, indented, with a comment": (
        IMPORT + "\n\ndef setup():\n"
        "    # MLA layers share the full-attention manager.\n"
        "    Registry.register(MLAAttentionSpec, Full)  # built in\n"
        "    done()\n",
        FIXED_IMPORT + "\n\ndef setup():\n"
        "    # MLA layers share the full-attention manager.\n"
        "    Registry.register(MLAAttentionSpec, Full)  # built in\n"
        "    Registry.register(SlidingWindowMLASpec, Full)\n"
        "    done()\n",
        "Register SlidingWindowMLASpec as MLAAttentionSpec",
        "unsafe",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_fix_as_made(name):
    before, after, _, _ = CASES[name]
    outcome = fix_source(before, "x.py", Config(), formatter=None, unsafe=True)
    assert outcome.failure is None
    assert outcome.text == after


@pytest.mark.parametrize("name", CASES)
def test_the_fix_says_what_it_does_and_whether_it_is_safe(name):
    before, _, message, applicability = CASES[name]
    [finding] = analyze_source(before, "x.py", Config()).findings
    assert (finding.fix.message, finding.fix.applicability) == (message, applicability)


@pytest.mark.parametrize(
    "source",
    [
        # No place for another name.
        'ok = "MLAAttentionSpec" in {c.__name__ for c in type(spec).__mro__}\n',
        IMPORT + "ok = MLAAttentionSpec in type(spec).__mro__\n",
        # A registration that is not a statement of its own.
        IMPORT + "ok = Registry.register(MLAAttentionSpec, Full)\n",
        # The companion's name is taken by something else here.
        IMPORT + "SlidingWindowMLASpec = None\nT = {MLAAttentionSpec: mla}\n",
    ],
)
def test_findings_without_a_fix(source):
    [finding] = analyze_source(source, "x.py", Config()).findings
    assert finding.fix is None
