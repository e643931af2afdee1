"""The three reasons (model/narrowing.py) asked directly, for the last check
against MLAAttentionSpec in a function: the exact text, or None."""

from __future__ import annotations

import pytest

from tests.conftest import THREE_MEMBER_MLA, last_check
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    FullAttentionSpec,\n"
    "    MLAAttentionSpec,\n"
    "    SlidingWindowMLASpec,\n"
    ")\n"
)
COMPANION = "vllm.v1.kv_cache_interface.SlidingWindowMLASpec"


def reason(body: str) -> str | None:
    model, check = last_check(HEADER + body, exclude="SlidingWindowMLASpec")
    [family] = model.families
    return model.narrowing.reason(
        check.node, check.target, family, [COMPANION], check.positive
    )


CASES = {
    # -- loud failures ---------------------------------------------------------
    "assert": (
        "assert isinstance(s, MLAAttentionSpec)\n",
        "assert: a failing assert is loud, not a silent misclassification",
    ),
    "assert not": ("assert not isinstance(s, MLAAttentionSpec)\n", None),
    "assert not not": (
        "assert not not isinstance(s, MLAAttentionSpec)\n",
        "assert: a failing assert is loud, not a silent misclassification",
    ),
    "assert with and": (
        "assert s and isinstance(s, MLAAttentionSpec)\n",
        "assert: a failing assert is loud, not a silent misclassification",
    ),
    "assert with or": ("assert s or isinstance(s, MLAAttentionSpec)\n", None),
    "assert all()": (
        "assert all(isinstance(s, MLAAttentionSpec) for s in specs)\n",
        "assert: a failing assert is loud, not a silent misclassification",
    ),
    "assert any()": (
        "assert any(isinstance(s, MLAAttentionSpec) for s in specs)\n",
        None,
    ),
    "if not ...: raise": (
        "if not isinstance(s, MLAAttentionSpec):\n    raise TypeError(s)\n",
        "raise: the code raises when the check fails, loudly",
    ),
    "if not not ...: raise": (
        "if not not isinstance(s, MLAAttentionSpec):\n    raise TypeError(s)\n",
        None,
    ),
    "if not ...: return": (
        "if not isinstance(s, MLAAttentionSpec):\n    return None\n",
        None,
    ),
    "if ...: raise": (
        "if isinstance(s, MLAAttentionSpec):\n    raise TypeError(s)\n",
        None,
    ),
    "a negative check is never loud": (
        "assert type(s) is not MLAAttentionSpec\n",
        None,
    ),
    # -- deliberate ----------------------------------------------------------
    "tested for the companion elsewhere": (
        "def f(s):\n"
        "    if isinstance(s, SlidingWindowMLASpec):\n        log(s)\n"
        "    x = 1\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        "deliberate: line 7 tests `s` for SlidingWindowMLASpec",
    ),
    "tested after, on the same collection's values": (
        "def f(d):\n"
        "    a = any(isinstance(v, MLAAttentionSpec) for v in d.values())\n"
        "    b = any(isinstance(w, SlidingWindowMLASpec) for w in d.values())\n",
        "deliberate: line 8 tests `w` for SlidingWindowMLASpec",
    ),
    "the collection rebound in between": (
        "def f(d, e):\n"
        "    a = any(isinstance(v, MLAAttentionSpec) for v in d.values())\n"
        "    d = e\n"
        "    b = any(isinstance(w, SlidingWindowMLASpec) for w in d.values())\n",
        None,
    ),
    "rebound on the line of the other test": (
        "def f(s, t):\n"
        "    if isinstance(s, SlidingWindowMLASpec): s = t\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        None,
    ),
    "tested in another loop over the same collection": (
        "def f(specs):\n"
        "    for t in specs:\n"
        "        if isinstance(t, SlidingWindowMLASpec):\n            log(t)\n"
        "    for s in specs:\n"
        "        if isinstance(s, MLAAttentionSpec):\n            use(s)\n",
        "deliberate: line 8 tests `t` for SlidingWindowMLASpec",
    ),
    "a loop over another collection: not deliberate": (
        "def f(specs, others):\n"
        "    for t in others:\n"
        "        if isinstance(t, SlidingWindowMLASpec):\n            log(t)\n"
        "    for s in specs:\n"
        "        if isinstance(s, MLAAttentionSpec):\n            use(s)\n",
        None,
    ),
    "the companion ruled out after it in an and: deliberate": (
        "def f(s):\n"
        "    return isinstance(s, MLAAttentionSpec) and not isinstance(s, SlidingWindowMLASpec)\n",
        "deliberate: line 7 tests `s` for SlidingWindowMLASpec",
    ),
    "rebound before both tests": (
        "def f(s, t):\n"
        "    s = t\n"
        "    if isinstance(s, SlidingWindowMLASpec):\n        log(s)\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        "deliberate: line 8 tests `s` for SlidingWindowMLASpec",
    ),
    "rebound after both tests": (
        "def f(s, t):\n"
        "    if isinstance(s, SlidingWindowMLASpec):\n        log(s)\n"
        "    ok = isinstance(s, MLAAttentionSpec)\n"
        "    s = t\n",
        "deliberate: line 7 tests `s` for SlidingWindowMLASpec",
    ),
    "a test in a nested function does not count": (
        "def f(s):\n"
        "    def g(s):\n        return isinstance(s, SlidingWindowMLASpec)\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        None,
    ),
    "a nested class does not count at module level": (
        "class C:\n    ok = isinstance(s, SlidingWindowMLASpec)\n"
        "ok = isinstance(s, MLAAttentionSpec)\n",
        None,
    ),
    "module level": (
        "if isinstance(s, SlidingWindowMLASpec):\n    pass\n"
        "ok = isinstance(s, MLAAttentionSpec)\n",
        "deliberate: line 6 tests `s` for SlidingWindowMLASpec",
    ),
    "a call's result is not the same value": (
        "def f():\n"
        "    if isinstance(g(), SlidingWindowMLASpec):\n        return 1\n"
        "    return isinstance(g(), MLAAttentionSpec)\n",
        None,
    ),
    # -- narrowed --------------------------------------------------------------
    "narrowed, the guard's text shortened": (
        "def f(spec_with_a_long_name_for_the_test):\n"
        "    if isinstance(spec_with_a_long_name_for_the_test, (FullAttentionSpec,)):\n"
        "        return isinstance(spec_with_a_long_name_for_the_test, MLAAttentionSpec)\n",
        "narrowed: `isinstance(spec_with_a_long_name_for_the_test, (FullAtten...` "
        "(line 7) already excludes SlidingWindowMLASpec",
    ),
    "narrowed, a guard of exactly 60 characters kept whole": (
        "def f(spec_of_twenty_nine_chars_abc):\n"
        "    if isinstance(spec_of_twenty_nine_chars_abc, FullAttentionSpec):\n"
        "        return isinstance(spec_of_twenty_nine_chars_abc, MLAAttentionSpec)\n",
        "narrowed: `isinstance(spec_of_twenty_nine_chars_abc, FullAttentionSpec)` "
        "(line 7) already excludes SlidingWindowMLASpec",
    ),
    # -- one name, two variables: Python's scopes ---------------------------------
    "two comprehensions partitioning one collection, one fixed": (
        "def f(kv_cache_spec):\n"
        "    mla = {\n"
        "        n: spec for n, spec in kv_cache_spec.items()\n"
        "        if isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "    }\n"
        "    other = {\n"
        "        n: spec for n, spec in kv_cache_spec.items()\n"
        "        if not isinstance(spec, MLAAttentionSpec)\n"
        "    }\n",
        None,
    ),
    "a comprehension's variable shadowing a parameter": (
        "def f(spec, specs):\n"
        "    windows = [spec for spec in specs if isinstance(spec, SlidingWindowMLASpec)]\n"
        "    return isinstance(spec, MLAAttentionSpec)\n",
        None,
    ),
    "a lambda's parameter": (
        "def f(spec):\n"
        "    windowed = lambda spec: isinstance(spec, SlidingWindowMLASpec)\n"
        "    return isinstance(spec, MLAAttentionSpec)\n",
        None,
    ),
    "a class body's name": (
        "def f(spec):\n"
        "    class Local:\n"
        "        spec = None\n"
        "        ok = isinstance(spec, SlidingWindowMLASpec)\n"
        "    return isinstance(spec, MLAAttentionSpec)\n",
        None,
    ),
    "a global declared in the function is the module's": (
        "def f():\n"
        "    global spec\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        log(spec)\n"
        "    return isinstance(spec, MLAAttentionSpec)\n",
        "deliberate: line 8 tests `spec` for SlidingWindowMLASpec",
    ),
    "two any() over one collection stay deliberate": (
        "def f(specs):\n"
        "    a = any(isinstance(s, MLAAttentionSpec) for s in specs)\n"
        "    b = any(isinstance(s, SlidingWindowMLASpec) for s in specs)\n",
        "deliberate: line 8 tests `s` for SlidingWindowMLASpec",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_reason_for_the_check(name):
    body, expected = CASES[name]
    assert reason(body) == expected


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "def kind(spec):\n"
            "    mla = isinstance(spec, MLAAttentionSpec)\n"
            "    other = isinstance(spec, (SlidingWindowMLASpec, ChunkedMLASpec))\n"
            "    return mla, other\n",
            "deliberate: line 7 tests `spec` for SlidingWindowMLASpec, ChunkedMLASpec",
        ),
        (
            "def kind(spec):\n"
            "    if isinstance(spec, (SlidingWindowMLASpec, ChunkedMLASpec)):\n"
            "        return 1\n"
            "    return isinstance(spec, MLAAttentionSpec)\n",
            "narrowed: `isinstance(spec, (SlidingWindowMLASpec, ChunkedMLASpec))` "
            "(line 6) already excludes SlidingWindowMLASpec, ChunkedMLASpec",
        ),
    ],
    ids=["deliberate", "narrowed"],
)
def test_a_reason_names_every_companion_left_out(body, expected):
    header = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    ChunkedMLASpec, MLAAttentionSpec, SlidingWindowMLASpec\n"
        ")\n\n"
    )
    analysis = analyze_source(
        header + body, "x.py", Config(families=(THREE_MEMBER_MLA,))
    )
    assert analysis.findings == []
    assert [f.suppressed_by for f in analysis.suppressed] == [expected]


def test_a_guard_that_rules_out_one_of_two_companions_narrows_only_that_one():
    """Three members: `SlidingWindowSpec` rules out SlidingWindowMLASpec
    (its parent) and says nothing of ChunkedMLASpec, so the check is still
    reported, for the one it leaves out."""
    source = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    ChunkedMLASpec, MLAAttentionSpec, SlidingWindowSpec\n"
        ")\n\n"
        "def latent(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        return False\n"
        "    return isinstance(spec, MLAAttentionSpec)\n"
    )
    analysis = analyze_source(source, "x.py", Config(families=(THREE_MEMBER_MLA,)))
    [check] = [f for f in analysis.findings if f.code == "VSL001"]
    assert check.location == (8, 29)
    assert check.message.endswith("ChunkedMLASpec")
    assert check.suppressed_by is None
