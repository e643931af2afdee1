"""Facts after the check: a loud rejection that follows a check, and that
the companion cannot pass, covers it (vLLM's HiSparse partition); each case
with its twin that must stay reported."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import REPO, THREE_MEMBER_MLA, findings, run_cli
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

pytestmark = pytest.mark.fast

HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    AttentionSpec,\n"
    "    KVCacheSpec,\n"
    "    MLAAttentionSpec,\n"
    ")\n"
)


def _module(body: str) -> str:
    return HEADER + "\n\n" + textwrap.dedent(body)


# The shape of vLLM 0.33.0/0.34.0 `_partition_hisparse_specs`, written here.
DSV4_GUARD = """\
    if any(
        isinstance(spec, MLAAttentionSpec) and spec.model_version == "deepseek_v4"
        for spec in specs.values()
    ):
        raise ValueError("HiSparse does not support DeepSeek V4.")
"""
MLA_ONLY = """\
    if not all(isinstance(spec, MLAAttentionSpec) for spec in specs.values()):
        raise ValueError("HiSparse requires its first cache group to contain MLA only.")
"""

# name -> (function body after `def partition(specs, other):`, reported?)
CASES = {
    "rejection-right-after": (DSV4_GUARD + MLA_ONLY, False),
    "rejection-admits-the-companion-through-a-base": (
        DSV4_GUARD
        + "    if not all(isinstance(spec, AttentionSpec) for spec in specs.values()):\n"
        "        raise ValueError('attention only')\n",
        True,
    ),
    "rejection-by-the-exact-type-of-a-base": (
        DSV4_GUARD
        + "    if not all(type(spec) is AttentionSpec for spec in specs.values()):\n"
        "        raise ValueError('plain attention only')\n",
        False,
    ),
    "return-guard-between": (
        DSV4_GUARD + "    if not specs:\n        return\n" + MLA_ONLY,
        True,
    ),
    "rejection-about-another-collection": (
        DSV4_GUARD + MLA_ONLY.replace("specs.values()", "other.values()"),
        True,
    ),
    "collection-reassigned-between": (
        DSV4_GUARD + "    specs = dict(other)\n" + MLA_ONLY,
        True,
    ),
    "collection-rebound-plainly-between": (
        DSV4_GUARD + "    specs = other\n" + MLA_ONLY,
        True,
    ),
    "assert-all": (
        DSV4_GUARD
        + "    assert all(isinstance(spec, MLAAttentionSpec) for spec in specs.values())\n",
        False,
    ),
    "assert-all-admitting-through-a-base": (
        DSV4_GUARD
        + "    assert all(isinstance(spec, AttentionSpec) for spec in specs.values())\n",
        True,
    ),
    "raising-guards-and-plain-assignments-between": (
        DSV4_GUARD
        + "    if other is None:\n        raise ValueError('other')\n"
        + "    limit = 4\n"
        + MLA_ONLY,
        False,
    ),
    "a-call-between": (
        DSV4_GUARD + "    register_all(specs)\n" + MLA_ONLY,
        True,
    ),
    # What else may stand between: pass, an assert, an annotated assignment.
    "pass-between": (DSV4_GUARD + "    pass\n" + MLA_ONLY, False),
    "an-assert-between": (DSV4_GUARD + "    assert other\n" + MLA_ONLY, False),
    "an-annotated-assignment-between": (
        DSV4_GUARD + "    limit: int = 4\n" + MLA_ONLY,
        False,
    ),
    # A yield hands control out (the caller may use the collection).
    "a-yield-in-an-assignment-between": (
        DSV4_GUARD + "    sent = yield other\n" + MLA_ONLY,
        True,
    ),
    "the-collection-as-one-of-two-targets-between": (
        DSV4_GUARD + "    limit = specs = other\n" + MLA_ONLY,
        True,
    ),
    # A guard between raises only when all its body raises.
    "a-guard-with-a-call-before-its-raise-between": (
        DSV4_GUARD
        + "    if other is None:\n        use(specs)\n        raise ValueError('o')\n"
        + MLA_ONLY,
        True,
    ),
    "a-guard-with-a-call-and-a-raise-on-one-line-between": (
        DSV4_GUARD
        + "    if other is None:\n        use(specs); raise ValueError('o')\n"
        + MLA_ONLY,
        True,
    ),
    "a-guard-with-a-nested-if-between": (
        DSV4_GUARD
        + "    if other is None:\n        if specs:\n            raise ValueError('o')\n"
        + MLA_ONLY,
        True,
    ),
    "a-guard-with-an-else-between": (
        DSV4_GUARD
        + "    if other is None:\n        raise ValueError('o')\n"
        + "    else:\n        use(specs)\n"
        + MLA_ONLY,
        True,
    ),
    # A rejection with an else is no rejection: the else takes the rest.
    "a-rejection-with-an-else": (
        DSV4_GUARD + MLA_ONLY + "    else:\n        use(specs)\n",
        True,
    ),
    # A raising check in an `or`: its failure does not skip the raise, but
    # the raise itself lets nothing through; the rejection covers the rest.
    "a-raising-check-or-another-test-then-a-rejection": (
        "    if any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()) or other:\n"
        "        raise ValueError('MLA')\n" + MLA_ONLY,
        False,
    ),
    "a-loop-between": (
        DSV4_GUARD + "    for spec in specs.values():\n        use(spec)\n" + MLA_ONLY,
        True,
    ),
    # Each small statement of a line counts: a call after a harmless one.
    "a-call-after-an-assert-on-one-line": (
        DSV4_GUARD + "    assert other; register_all(specs)\n" + MLA_ONLY,
        True,
    ),
    "a-call-after-an-assignment-on-one-line": (
        DSV4_GUARD + "    limit = 4; register_all(specs)\n" + MLA_ONLY,
        True,
    ),
    "a-call-in-an-assignment-between": (
        DSV4_GUARD + "    count = len(register_all(specs))\n" + MLA_ONLY,
        True,
    ),
    "an-else-takes-the-companion": (
        "    if any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()):\n"
        "        raise ValueError('MLA')\n"
        "    else:\n"
        "        use(specs)\n" + MLA_ONLY,
        True,
    ),
    "a-check-whose-failure-skips-a-quiet-body": (
        "    if any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()):\n"
        "        use(specs)\n" + MLA_ONLY,
        False,
    ),
    "a-negated-check-lets-the-companion-into-the-body": (
        "    if not any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()):\n"
        "        use(specs)\n" + MLA_ONLY,
        True,
    ),
    "a-doubly-negated-check-skips-a-quiet-body": (
        "    if not not any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()):\n"
        "        use(specs)\n" + MLA_ONLY,
        False,
    ),
    "a-check-or-another-test-lets-the-companion-into-the-body": (
        "    if any(isinstance(spec, MLAAttentionSpec) for spec in specs.values()) or other:\n"
        "        use(specs)\n" + MLA_ONLY,
        True,
    ),
    "one-value-then-assert": (
        "    spec = specs['a']\n"
        "    if isinstance(spec, MLAAttentionSpec) and spec.model_version == 'v4':\n"
        "        raise ValueError('v4')\n"
        "    assert isinstance(spec, MLAAttentionSpec)\n",
        False,
    ),
    "one-value-then-an-assert-on-another-value": (
        "    spec = specs['a']\n"
        "    if isinstance(spec, MLAAttentionSpec) and spec.model_version == 'v4':\n"
        "        raise ValueError('v4')\n"
        "    assert isinstance(other, MLAAttentionSpec)\n",
        True,
    ),
    "one-value-then-a-rejection-of-its-element": (
        "    spec = specs['a']\n"
        "    if isinstance(spec, MLAAttentionSpec) and spec.model_version == 'v4':\n"
        "        raise ValueError('v4')\n"
        "    assert all(isinstance(spec, MLAAttentionSpec) for spec in specs.values())\n",
        True,
    ),
}


# The row of each case's first check: the DSV4 guard's isinstance is on row
# 10 (five header rows, two blank, the def, `if any(`); a one-line `if` on row 9.
FIRST_CHECK_ROW = {
    "a-check-whose-failure-skips-a-quiet-body": 9,
    "an-else-takes-the-companion": 9,
    "a-negated-check-lets-the-companion-into-the-body": 9,
    "a-doubly-negated-check-skips-a-quiet-body": 9,
    "a-check-or-another-test-lets-the-companion-into-the-body": 9,
    "a-raising-check-or-another-test-then-a-rejection": 9,
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_later_rejection_covers_the_check_only_when_the_companion_cannot_pass(name):
    body, reported = CASES[name]
    source = _module("def partition(specs, other):\n" + body)
    row = FIRST_CHECK_ROW.get(name, 10)
    rows = [r for code, r, _ in findings(source) if code == "VSL001"]
    assert (row in rows) is reported, rows
    # --strict reports it either way.
    strict = [r for code, r, _ in findings(source, config=Config(strict=True))]
    assert row in strict


MLA_ONLY_ASSERTED = """\
    assert all(isinstance(spec, MLAAttentionSpec) for spec in specs.values())
"""


@pytest.mark.parametrize(
    "rejection, kind", [(MLA_ONLY, "raise"), (MLA_ONLY_ASSERTED, "assert")]
)
def test_strict_reports_it_with_the_rejections_line(rejection, kind):
    source = _module("def partition(specs, other):\n" + DSV4_GUARD + rejection)
    analysis = analyze_source(source, "layout.py", Config(strict=True))
    reasons = {f.location[0]: f.suppressed_by for f in analysis.findings}
    assert reasons[10] == (
        f"{kind}: line 14 rejects what the check lets through, SlidingWindowMLASpec "
        "included, loudly"
    )


def test_explain_suppressions_names_the_rejections_line(tmp_path):
    (tmp_path / "layout.py").write_text(
        _module("def partition(specs, other):\n" + DSV4_GUARD + MLA_ONLY)
    )
    out = run_cli(
        "check", "--output-format", "concise", "--explain-suppressions", ".",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0
    assert (
        "layout.py:10:26: VSL001 not reported: raise: line 14 rejects what the "
        "check lets through, SlidingWindowMLASpec included, loudly"
    ) in out.stdout.splitlines()


def test_the_pr_45831_worker_is_still_reported():
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", "examples", cwd=REPO
    )
    assert (
        "examples/vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py:"
        "19:52: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec"
    ) in out.stdout.splitlines()


def test_the_reason_names_every_companion_the_rejection_keeps_out():
    family = THREE_MEMBER_MLA
    source = _module("def partition(specs, other):\n" + DSV4_GUARD + MLA_ONLY)
    config = Config(strict=True, families=(family,))
    analysis = analyze_source(source, "layout.py", config)
    reasons = {f.location[0]: f.suppressed_by for f in analysis.findings}
    assert reasons[10] == (
        "raise: line 14 rejects what the check lets through, SlidingWindowMLASpec, "
        "ChunkedMLASpec included, loudly"
    )


def test_a_rejection_that_keeps_out_one_of_two_companions_leaves_the_check_reported():
    """Three members: the rejection admits SlidingWindowMLASpec (through
    its parent), so what the check lets through is not rejected for every
    companion it leaves out, and it stays reported."""
    family = THREE_MEMBER_MLA
    admits_windowed = (
        "    if not all(\n"
        "        isinstance(spec, (MLAAttentionSpec, SlidingWindowSpec))\n"
        "        for spec in specs.values()\n"
        "    ):\n"
        "        raise ValueError('MLA or windowed only')\n"
    )
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "\n\ndef partition(specs, other):\n" + DSV4_GUARD + admits_windowed
    )
    analysis = analyze_source(source, "layout.py", Config(families=(family,)))
    [check] = analysis.findings
    assert (check.code, check.location) == ("VSL001", (6, 26))
    assert check.message.endswith("leaves out SlidingWindowMLASpec, ChunkedMLASpec")


def test_a_later_rejection_at_module_level_covers_the_check():
    """The same partition as module code, not in a function: its
    statements stand in the module's body."""
    code = textwrap.dedent(DSV4_GUARD + MLA_ONLY)
    source = _module("specs = load()\n" + code)
    assert [r for c, r, _ in findings(source) if c == "VSL001"] == []
    # Its twin: a rejection that admits the companion (through its parent).
    admits = source.replace(
        "isinstance(spec, MLAAttentionSpec) for", "isinstance(spec, AttentionSpec) for"
    )
    assert [r for c, r, _ in findings(admits) if c == "VSL001"] == [10]
