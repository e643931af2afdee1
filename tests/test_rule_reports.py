"""What each class-test rule hands to its report, at the analysis core: the
reason a check is fine as written (shown only under --strict), and the
family it belongs to (a discovered one says why it was proposed)."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import Family

NARROWED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "\n"
    "\n"
    "def layout(spec):\n"
    "    if isinstance(spec, SlidingWindowMLASpec):\n"
    "        return 1\n"
    "    if {check}:\n"
    "        return 2\n"
)
REASON = (
    "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 5) already "
    "excludes SlidingWindowMLASpec"
)
CHECKS = [
    ("VSL001", "isinstance(spec, MLAAttentionSpec)", (7, 25), "isinstance() check"),
    ("VSL002", "type(spec) is MLAAttentionSpec", (7, 22), "exact type comparison"),
    (
        "VSL002",
        "spec.__class__ in (MLAAttentionSpec,)",
        (7, 27),
        "exact type comparison",
    ),
]


def _found(source: str, config: Config):
    return [
        (f.code, f.location, f.message, f.suppressed_by)
        for f in analyze_source(source, "layout.py", config).findings
    ]


@pytest.mark.parametrize("code, check, location, what", CHECKS)
def test_a_narrowed_check_is_reported_only_under_strict_with_its_reason(
    code, check, location, what
):
    source = NARROWED.format(check=check)
    assert _found(source, Config()) == []
    message = f"{what} against MLAAttentionSpec leaves out SlidingWindowMLASpec"
    if code == "VSL002":
        message = "exact type comparison with MLAAttentionSpec leaves out "
        message += "SlidingWindowMLASpec"
    assert _found(source, Config(strict=True)) == [(code, location, message, REASON)]


def test_an_exact_type_comparison_rejected_later_says_where():
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "\n"
        "\n"
        "def partition(specs):\n"
        "    if any(type(s) is MLAAttentionSpec and s.v4 for s in specs.values()):\n"
        '        raise ValueError("v4")\n'
        "    if not all(isinstance(s, MLAAttentionSpec) for s in specs.values()):\n"
        '        raise ValueError("MLA only")\n'
    )
    assert _found(source, Config()) == []
    assert _found(source, Config(strict=True))[0] == (
        "VSL002",
        (5, 23),
        "exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        "raise: line 7 rejects what the check lets through, SlidingWindowMLASpec "
        "included, loudly",
    )


@pytest.mark.parametrize(
    "code, check, column, what",
    [
        (
            "VSL001",
            "isinstance(spec, MLAAttentionSpec)",
            23,
            "isinstance() check against",
        ),
        ("VSL002", "type(spec) is MLAAttentionSpec", 20, "exact type comparison with"),
        (
            "VSL005",
            'type(spec).__name__ == "MLAAttentionSpec"',
            29,
            "class-name test against",
        ),
    ],
)
def test_a_discovered_family_says_why_it_was_proposed(code, check, column, what):
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        f"ok = {check} or isinstance(spec, SlidingWindowMLASpec)\n"
    )
    chunked = Family(
        "chunked",
        "vllm.v1.kv_cache_interface",
        ("MLAAttentionSpec", "ChunkedMLASpec"),
        "same fields a, b",
    )
    # A family the check does not name comes first: the others still count.
    sliding = Family(
        "sliding",
        "vllm.v1.kv_cache_interface",
        ("SlidingWindowSpec", "ChunkedLocalAttentionSpec"),
    )
    config = Config(families=(sliding, *Config().families, chunked))
    assert _found(source, config) == [
        (
            code,
            (2, column),
            f"{what} MLAAttentionSpec leaves out ChunkedMLASpec "
            "(discovered twin: same fields a, b)",
            None,
        )
    ]
