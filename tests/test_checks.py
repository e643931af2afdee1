"""VSL001-VSL004: every form of check and every precision rule, both sides.

These are the syntactic rules, so they run in strict mode; what the default
mode suppresses on top is tested in test_narrowing.py.
"""

from __future__ import annotations

import functools

import pytest

from tests import conftest
from vllm_spec_lint.core.settings import Config

pytestmark = pytest.mark.fast

STRICT = Config(strict=True)
codes = functools.partial(conftest.codes, config=STRICT)
findings = functools.partial(conftest.findings, config=STRICT)

IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
BOTH = "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
KCI = "from vllm.v1.kv_cache_interface import "


@pytest.mark.parametrize(
    "check, expected",
    [
        ("isinstance(spec, MLAAttentionSpec)", ["VSL001"]),
        ("not isinstance(spec, MLAAttentionSpec)", ["VSL001"]),
        ("issubclass(type(spec), MLAAttentionSpec)", ["VSL001"]),
        ("isinstance(spec, (MLAAttentionSpec,))", ["VSL001"]),
        (
            "isinstance(spec, (FullAttentionSpec, (MambaSpec, MLAAttentionSpec)))",
            ["VSL001"],
        ),
        ("isinstance(spec, (*OTHER_SPECS, MLAAttentionSpec))", ["VSL001"]),
        ("isinstance(spec, FullAttentionSpec | MLAAttentionSpec)", ["VSL001"]),
        ("any(isinstance(s, MLAAttentionSpec) for s in specs)", ["VSL001"]),
        ("[s for s in specs if isinstance(s, MLAAttentionSpec)]", ["VSL001"]),
        # A subscript is not a class: nothing is known about what it yields.
        ("isinstance(spec, [MLAAttentionSpec][0])", []),
    ],
)
def test_vsl001_forms(check, expected):
    source = KCI + "FullAttentionSpec, MambaSpec, MLAAttentionSpec\n"
    source += f"value = {check}\n"
    assert codes(source) == expected


def test_vsl001_in_assert_if_while_and_lambda():
    source = IMPORT + (
        "assert isinstance(spec, MLAAttentionSpec)\n"
        "if isinstance(spec, MLAAttentionSpec):\n    pass\n"
        "while not isinstance(spec, MLAAttentionSpec):\n    pass\n"
        "pick = lambda s: isinstance(s, MLAAttentionSpec)\n"
    )
    assert findings(source) == [
        ("VSL001", 2, 25),
        ("VSL001", 3, 21),
        ("VSL001", 5, 28),
        ("VSL001", 7, 32),
    ]


def test_vsl001_tuple_split_over_lines_with_comments():
    source = (
        KCI
        + "FullAttentionSpec, MLAAttentionSpec\n"
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,  # full attention\n"
            "        # MLA layers\n"
            "        MLAAttentionSpec,\n"
            "    ),\n"
            ")\n"
        )
    )
    assert findings(source) == [("VSL001", 7, 9)]


def test_vsl001_tuple_split_over_lines_covering_companion_is_fine():
    source = (
        KCI
        + "MLAAttentionSpec, SlidingWindowMLASpec\n"
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        MLAAttentionSpec,  # MLA\n"
            "        # DeepSeek-V4 compressed layers\n"
            "        SlidingWindowMLASpec,\n"
            "    ),\n"
            ")\n"
        )
    )
    assert findings(source) == []


@pytest.mark.parametrize(
    "header, reference",
    [
        ("import vllm.v1.kv_cache_interface as kci\n", "kci.MLAAttentionSpec"),
        (
            "import vllm.v1.kv_cache_interface\n",
            "vllm.v1.kv_cache_interface.MLAAttentionSpec",
        ),
        ("import vllm\n", "vllm.v1.kv_cache_interface.MLAAttentionSpec"),
        (
            "from vllm.v1 import kv_cache_interface\n",
            "kv_cache_interface.MLAAttentionSpec",
        ),
        (KCI + "MLAAttentionSpec as MLASpec\n", "MLASpec"),
        (KCI + "*\n", "MLAAttentionSpec"),
    ],
)
def test_vsl001_reference_forms(header, reference):
    source = header + f"ok = isinstance(spec, {reference})\n"
    assert findings(source) == [("VSL001", 2, 23)]


@pytest.mark.parametrize(
    "header, covering",
    [
        ("import vllm.v1.kv_cache_interface as kci\n", "kci.SlidingWindowMLASpec"),
        (KCI + "SlidingWindowMLASpec as SWMLA\n", "SWMLA"),
        (KCI + "SlidingWindowSpec\n", "SlidingWindowSpec"),
        (KCI + "AttentionSpec\n", "AttentionSpec"),
        (KCI + "KVCacheSpec\n", "KVCacheSpec"),
        (KCI + "*\n", "SlidingWindowMLASpec"),
    ],
)
def test_vsl001_covered_by_companion_or_its_base(header, covering):
    source = (
        IMPORT + header + f"ok = isinstance(spec, (MLAAttentionSpec, {covering}))\n"
    )
    assert findings(source) == []


def test_vsl001_base_of_anchor_that_is_not_base_of_companion_does_not_cover():
    source = KCI + "FullAttentionSpec, MLAAttentionSpec\n"
    source += "ok = isinstance(spec, (MLAAttentionSpec, FullAttentionSpec))\n"
    assert codes(source) == ["VSL001"]


def test_vsl001_subclass_of_anchor_is_not_a_finding():
    source = KCI + "HiddenStateCacheSpec\nok = isinstance(spec, HiddenStateCacheSpec)\n"
    assert findings(source) == []


def test_relative_import_resolved_against_the_module():
    source = "from ..kv_cache_interface import MLAAttentionSpec\n"
    source += "ok = isinstance(spec, MLAAttentionSpec)\n"
    assert codes(source, module="vllm.v1.core.sched") == ["VSL001"]
    assert codes(source, module="other.pkg.mod") == []
    # Without a module name a relative import is matched by its suffix.
    assert codes(source) == ["VSL001"]


def test_class_defined_in_the_family_module_itself():
    source = (
        "class FullAttentionSpec:\n    pass\n\n"
        "class MLAAttentionSpec(FullAttentionSpec):\n"
        "    def merge(self, other):\n"
        "        return isinstance(other, MLAAttentionSpec)\n"
    )
    assert codes(source, module="vllm.v1.kv_cache_interface") == ["VSL001"]
    assert codes(source, module="tests.fakes") == []


def test_local_test_double_and_unrelated_module_are_not_vllms_class():
    assert (
        codes(
            "from tests.fakes import MLAAttentionSpec\nisinstance(s, MLAAttentionSpec)\n"
        )
        == []
    )
    assert (
        codes(
            IMPORT
            + "def f(MLAAttentionSpec):\n    return isinstance(s, MLAAttentionSpec)\n"
        )
        == []
    )


def test_shadowed_isinstance_is_not_the_builtin():
    source = (
        IMPORT + "from mylib import isinstance\nok = isinstance(s, MLAAttentionSpec)\n"
    )
    assert codes(source) == []
    source = IMPORT + "import builtins\nok = builtins.isinstance(s, MLAAttentionSpec)\n"
    assert codes(source) == ["VSL001"]


def test_or_chain_on_same_target_covers():
    assert (
        codes(
            BOTH
            + "ok = isinstance(s, MLAAttentionSpec) or isinstance(s, SlidingWindowMLASpec)\n"
        )
        == []
    )
    assert (
        codes(
            BOTH
            + "ok = (\n    isinstance(s.spec, MLAAttentionSpec)\n"
            + "    or flag\n    or isinstance(s.spec, SlidingWindowMLASpec)\n)\n"
        )
        == []
    )
    # The companion first in a longer chain (Python nests it leftmost).
    assert (
        codes(
            BOTH
            + "ok = isinstance(s, SlidingWindowMLASpec) or flag or isinstance(s, MLAAttentionSpec)\n"
        )
        == []
    )
    # De Morgan: the negated form chains with `and`.
    assert (
        codes(
            BOTH
            + "other = not isinstance(s, MLAAttentionSpec) and not isinstance(s, SlidingWindowMLASpec)\n"
        )
        == []
    )


def test_annotated_module_constants_are_constants():
    header = KCI + "MLAAttentionSpec, SlidingWindowMLASpec\n"
    covered = "_COMPRESSED: tuple[type, ...] = (SlidingWindowMLASpec,)\n"
    assert (
        codes(
            header + covered + "ok = isinstance(s, (_COMPRESSED, MLAAttentionSpec))\n"
        )
        == []
    )
    # Only annotated, never assigned: nothing is known about it.
    unknown = "_COMPRESSED: tuple[type, ...]\n"
    assert codes(
        header + unknown + "ok = isinstance(s, (_COMPRESSED, MLAAttentionSpec))\n"
    ) == ["VSL001"]


@pytest.mark.parametrize(
    "guard, quoted",
    [
        # White space folded to one space.
        (
            "isinstance(  layer.spec,\n     FullAttentionSpec  )",
            "isinstance( layer.spec, FullAttentionSpec )",
        ),
        # Cut at 60 characters.
        (
            "isinstance(layer.kv_cache_spec_of_the_attention_layer, FullAttentionSpec)",
            "isinstance(layer.kv_cache_spec_of_the_attention_layer, Fu...",
        ),
    ],
)
def test_narrowing_reason_quotes_the_guard_short(guard, quoted):
    from tests.test_narrowing import analyse

    value = guard.split("(", 1)[1].split(",")[0].strip()
    [suppressed] = analyse(
        f"def f(layer):\n    if {guard}:\n"
        f"        return isinstance({value}, MLAAttentionSpec)\n"
    ).suppressed
    assert suppressed.suppressed_by == (
        f"narrowed: `{quoted}` (line 12) already excludes SlidingWindowMLASpec"
    )


def test_or_chain_on_another_target_or_with_and_does_not_cover():
    assert codes(
        BOTH
        + "ok = isinstance(a, MLAAttentionSpec) or isinstance(b, SlidingWindowMLASpec)\n"
    ) == ["VSL001"]
    assert codes(
        BOTH
        + "ok = isinstance(s, MLAAttentionSpec) and isinstance(s, SlidingWindowMLASpec)\n"
    ) == ["VSL001"]
    assert codes(
        BOTH
        + "ok = isinstance(s, MLAAttentionSpec) or not isinstance(s, SlidingWindowMLASpec)\n"
    ) == ["VSL001"]


def test_earlier_elif_branch_took_the_companion():
    source = BOTH + (
        "if isinstance(spec, SlidingWindowMLASpec):\n    kind = 'swa'\n"
        "elif x:\n    kind = 'x'\n"
        "elif isinstance(spec, MLAAttentionSpec):\n    kind = 'mla'\n"
    )
    assert codes(source) == []


def test_earlier_branch_on_another_target_or_later_branch_does_not_help():
    source = BOTH + (
        "if isinstance(other, SlidingWindowMLASpec):\n    kind = 'swa'\n"
        "elif isinstance(spec, MLAAttentionSpec):\n    kind = 'mla'\n"
    )
    assert codes(source) == ["VSL001"]
    source = BOTH + (
        "if isinstance(spec, MLAAttentionSpec):\n    kind = 'mla'\n"
        "elif isinstance(spec, SlidingWindowMLASpec):\n    kind = 'swa'\n"
    )
    assert codes(source) == ["VSL001"]
    source = BOTH + (  # `and` in the earlier test: a companion can still get here
        "if isinstance(spec, SlidingWindowMLASpec) and x:\n    kind = 'swa'\n"
        "elif isinstance(spec, MLAAttentionSpec):\n    kind = 'mla'\n"
    )
    assert codes(source) == ["VSL001"]


def test_strings_and_comments_are_never_findings():
    source = IMPORT + (
        "# isinstance(spec, MLAAttentionSpec)\n"
        "doc = 'isinstance(spec, MLAAttentionSpec)'\n"
        'more = f"{isinstance}(spec, MLAAttentionSpec)"\n'
        "def f():\n    '''type(spec) is MLAAttentionSpec'''\n"
    )
    assert codes(source) == []


@pytest.mark.parametrize(
    "comment, reported",
    [
        ("  # noqa", False),
        ("  # noqa: VSL001", False),
        ("  # noqa:VSL001,VSL002", False),
        # Codes are prefixes, as flake8 reads them.
        ("  # noqa: VSL0", False),
        ("  # NOQA: VSL00", False),
        ("  # noqa: E501, VSL0", False),
        ("  # noqa: VSL1", True),
        ("  # noqa: VSL0010", True),
        # A code needs a digit: "VSL" alone makes the comment a bare noqa.
        ("  # NOQA: VSL", False),
        ("  # noqa: VSL002", True),
        ("  # noqa: E501", True),
        ("", True),
    ],
)
def test_noqa(comment, reported):
    source = IMPORT + f"ok = isinstance(s, MLAAttentionSpec){comment}\n"
    assert codes(source) == (["VSL001"] if reported else [])


def test_noqa_applies_to_the_reported_line_only():
    source = IMPORT + "ok = isinstance(  # noqa: VSL001\n    s, MLAAttentionSpec\n)\n"
    assert codes(source) == ["VSL001"]


# -- VSL002 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "comparison, reported",
    [
        ("type(spec) is MLAAttentionSpec", True),
        ("type(spec) is not MLAAttentionSpec", True),
        ("type(spec) == MLAAttentionSpec", True),
        ("type(spec) != MLAAttentionSpec", True),
        ("MLAAttentionSpec is type(spec)", True),
        ("type(spec) in (FullAttentionSpec, MLAAttentionSpec)", True),
        ("type(spec) not in [MLAAttentionSpec]", True),
        ("spec.__class__ is MLAAttentionSpec", True),
        # Exact comparisons are not covered by a base class.
        ("type(spec) in (MLAAttentionSpec, SlidingWindowSpec)", True),
        ("type(spec) in (MLAAttentionSpec, SlidingWindowMLASpec)", False),
        ("type(spec) is FullAttentionSpec", False),
        ("spec is MLAAttentionSpec", False),
        ("type(spec) is MLAAttentionSpec or type(spec) is SlidingWindowMLASpec", False),
        (
            "type(spec) is MLAAttentionSpec or isinstance(spec, SlidingWindowMLASpec)",
            False,
        ),
        # Negated, the companion must be taken by the and-chain, not an or.
        (
            "type(spec) is not MLAAttentionSpec "
            "and type(spec) is not SlidingWindowMLASpec",
            False,
        ),
        (
            "type(spec) != MLAAttentionSpec or isinstance(spec, SlidingWindowMLASpec)",
            True,
        ),
    ],
)
def test_vsl002(comparison, reported):
    source = KCI + (
        "FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowSpec\n"
    )
    source += f"ok = {comparison}\n"
    assert codes(source) == (["VSL002"] if reported else [])


# -- VSL003 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "cases, expected",
    [
        ("case MLAAttentionSpec():", ["VSL003"]),
        ("case MLAAttentionSpec(block_size=16) as spec:", ["VSL003"]),
        ("case FullAttentionSpec() | MLAAttentionSpec():", ["VSL003"]),
        ("case MLAAttentionSpec() | SlidingWindowMLASpec():", []),
        ("case MLAAttentionSpec() | SlidingWindowSpec():", []),
        (
            "case SlidingWindowMLASpec():\n        pass\n    case MLAAttentionSpec():",
            [],
        ),
        # An earlier case with a guard or sub-patterns lets companions through.
        (
            "case SlidingWindowMLASpec() if flag:\n        pass\n    case MLAAttentionSpec():",
            ["VSL003"],
        ),
        # Nested patterns test elements, not the subject: out of scope.
        ("case [MLAAttentionSpec()]:", []),
        ("case {'k': MLAAttentionSpec()}:", []),
    ],
)
def test_vsl003(cases, expected):
    source = KCI + (
        "FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowSpec\n"
    )
    source += f"match spec:\n    {cases}\n        pass\n"
    assert codes(source) == expected


# -- VSL004 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "statement, expected",
    [
        ("_MLA_SPECS = (MLAAttentionSpec,)", ["VSL004"]),
        ("_MLA_SPECS = MLAAttentionSpec, FullAttentionSpec", ["VSL004"]),
        ("_MLA_SPECS: tuple = (FullAttentionSpec, MLAAttentionSpec)", ["VSL004"]),
        ("_MLA_SPECS = frozenset((MLAAttentionSpec,))", ["VSL004"]),
        ("_MLA_SPECS = frozenset([MLAAttentionSpec, FullAttentionSpec])", ["VSL004"]),
        ("_MLA_SPECS = MLAAttentionSpec | FullAttentionSpec", ["VSL004"]),
        ("_MLA_SPECS = (MLAAttentionSpec, SlidingWindowMLASpec)", []),
        ("_MLA_SPECS = (MLAAttentionSpec, SlidingWindowSpec)", []),
        ("_MLA_SPECS = (FullAttentionSpec,)", []),
        ("_MLA_SPECS = [MLAAttentionSpec]", []),  # a list is mutable, not a constant
        ("_MLA_SPECS: TypeAlias = MLAAttentionSpec | FullAttentionSpec", []),
        ("_DEFAULT = (MLAAttentionSpec, 'mla')", []),
    ],
)
def test_vsl004(statement, expected):
    source = (
        "from typing import TypeAlias\n"
        + KCI
        + (
            "FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowSpec\n"
        )
    )
    source += statement + "\n"
    assert codes(source) == expected


def test_vsl004_class_level_but_not_function_level():
    source = IMPORT + (
        "class Connector:\n    SPECS = (MLAAttentionSpec,)\n\n"
        "    def f(self):\n        specs = (MLAAttentionSpec,)\n"
    )
    assert findings(source) == [("VSL004", 3, 5)]


def test_check_through_a_constant_reports_the_constant_not_the_check():
    source = (
        IMPORT + "_MLA_SPECS = (MLAAttentionSpec,)\nok = isinstance(s, _MLA_SPECS)\n"
    )
    assert findings(source) == [("VSL004", 2, 1)]


def test_check_through_a_covering_constant_is_fine():
    source = BOTH + "_MLA = (MLAAttentionSpec, SlidingWindowMLASpec)\n"
    source += "ok = isinstance(s, (*_MLA, FullAttentionSpec))\n"
    source += "ok2 = isinstance(s, (MLAAttentionSpec, *_MLA))\n"
    assert findings(source) == []


MATCH_HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    FullAttentionSpec,\n"
    "    MLAAttentionSpec,\n"
    "    SlidingWindowMLASpec,\n"
    ")\n\n\n"
)


def _match_findings(body: str, strict: bool) -> list[tuple]:
    from vllm_spec_lint.core.analysis import analyze_source

    found = analyze_source(MATCH_HEADER + body, "m.py", Config(strict=strict))
    return [(f.code, f.location, f.suppressed_by) for f in found.findings]


GUARDED = (
    "def f(spec):\n    if isinstance(spec, SlidingWindowMLASpec):\n        return 0\n"
)


@pytest.mark.parametrize(
    "rest, code, position",
    [
        (
            "    match spec:\n        case MLAAttentionSpec():\n            return 1\n",
            "VSL003",
            (12, 14),
        ),
        ("    return type(spec).__name__ == 'MLAAttentionSpec'\n", "VSL005", (11, 35)),
    ],
    ids=["VSL003", "VSL005"],
)
def test_a_site_after_a_guard_is_strict_only_and_says_why(rest, code, position):
    body = GUARDED + rest
    assert _match_findings(body, strict=False) == []
    assert _match_findings(body, strict=True) == [
        (
            code,
            position,
            "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 9) "
            "already excludes SlidingWindowMLASpec",
        )
    ]


def test_vsl003_a_case_that_took_the_companion_counts_past_later_cases():
    body = (
        "def f(spec):\n"
        "    match spec:\n"
        "        case SlidingWindowMLASpec():\n"
        "            return 0\n"
        "        case FullAttentionSpec(block_size=16):\n"
        "            return 2\n"
        "        case MLAAttentionSpec():\n"
        "            return 1\n"
    )
    assert _match_findings(body, strict=True) == []


def test_vsl005_membership_in_an_mro_is_reported_without_a_fix():
    from vllm_spec_lint.core.analysis import analyze_source

    source = (
        MATCH_HEADER
        + "def f(spec):\n    return MLAAttentionSpec in type(spec).__mro__\n"
    )
    [finding] = analyze_source(source, "m.py", Config()).findings
    assert (finding.code, finding.location, finding.fix) == ("VSL005", (9, 12), None)


def test_every_companion_left_out_is_named_in_order():
    from vllm_spec_lint.core.analysis import analyze_source

    family = conftest.THREE_MEMBER_MLA
    source = IMPORT + "ok = isinstance(spec, MLAAttentionSpec)\n"
    [finding] = analyze_source(source, "x.py", Config(families=(family,))).findings
    assert finding.message == (
        "isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec, ChunkedMLASpec"
    )


THREE = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
# The import gains both, in vLLM's (case-insensitive) order.
THREE_FIXED = (
    "from vllm.v1.kv_cache_interface import ChunkedMLASpec, MLAAttentionSpec, "
    "SlidingWindowMLASpec\n"
)


@pytest.mark.parametrize(
    "source, said, fixed",
    [
        (
            THREE + "ok = isinstance(spec, MLAAttentionSpec)\n",
            (
                "isinstance() check against MLAAttentionSpec leaves out "
                "SlidingWindowMLASpec, ChunkedMLASpec",
                "Add SlidingWindowMLASpec, ChunkedMLASpec",
            ),
            THREE_FIXED + "ok = isinstance(spec, (MLAAttentionSpec, "
            "SlidingWindowMLASpec, ChunkedMLASpec))\n",
        ),
        (
            THREE + "match spec:\n    case MLAAttentionSpec():\n        pass\n",
            (
                "case MLAAttentionSpec() has no SlidingWindowMLASpec() or "
                "ChunkedMLASpec() alternative",
                "Add SlidingWindowMLASpec() | ChunkedMLASpec()",
            ),
            THREE_FIXED + "match spec:\n"
            "    case MLAAttentionSpec() | SlidingWindowMLASpec() | ChunkedMLASpec():\n"
            "        pass\n",
        ),
        (
            "ok = type(spec).__name__ == 'MLAAttentionSpec'\n",
            (
                "class-name test against MLAAttentionSpec leaves out "
                "SlidingWindowMLASpec, ChunkedMLASpec",
                "Compare with ('MLAAttentionSpec', 'SlidingWindowMLASpec', "
                "'ChunkedMLASpec')",
            ),
            "ok = type(spec).__name__ in ('MLAAttentionSpec', 'SlidingWindowMLASpec', "
            "'ChunkedMLASpec')\n",
        ),
        (
            "ok = type(spec).__name__ in ('MLAAttentionSpec', 'FullAttentionSpec')\n",
            (
                "class-name test against MLAAttentionSpec leaves out "
                "SlidingWindowMLASpec, ChunkedMLASpec",
                "Add 'SlidingWindowMLASpec', 'ChunkedMLASpec'",
            ),
            "ok = type(spec).__name__ in ('MLAAttentionSpec', 'SlidingWindowMLASpec', "
            "'ChunkedMLASpec', 'FullAttentionSpec')\n",
        ),
    ],
    ids=["isinstance", "match", "class-name", "class-name-in"],
)
def test_two_companions_are_named_and_added_in_order(source, said, fixed):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.fixing import fix_source

    family = conftest.THREE_MEMBER_MLA
    config = Config(families=(family,))
    [finding] = analyze_source(source, "x.py", config).findings
    assert (finding.message, finding.fix.message) == said
    assert fix_source(source, "x.py", config, unsafe=True).text == fixed
