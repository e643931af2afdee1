"""VSL007: tests against the companion's own parent (SlidingWindowSpec) that
sweep it in; each form with its quiet twins, on vLLM releases, and on
families other than vLLM's."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from tests.conftest import fetch_vllm, findings, run_cli, run_flake8
from vllm_spec_lint.core.settings import Config

HEADER = (
    "import functools\n\n"
    "from vllm.v1.kv_cache_interface import (\n"
    "    FullAttentionSpec,\n"
    "    MambaSpec,\n"
    "    SlidingWindowMLASpec,\n"
    "    SlidingWindowSpec,\n"
    ")\n\n\n"
)


def vsl007(body: str, config: Config | None = None) -> list[tuple[int, int]]:
    """(row, column) of each VSL007 finding in HEADER + body (rows of body
    start at 11)."""
    source = HEADER + textwrap.dedent(body)
    return [
        (r, c) for code, r, c in findings(source, config=config) if code == "VSL007"
    ]


def strict_vsl007(body: str) -> list[tuple[int, int]]:
    return vsl007(body, Config(strict=True))


def _vsl007_said(body: str, strict: bool = False) -> list[tuple]:
    """(row, column, message, why strict only) of each VSL007 finding."""
    from vllm_spec_lint.core.analysis import analyze_source

    source = HEADER + textwrap.dedent(body)
    return [
        (*f.location, f.message, f.suppressed_by)
        for f in analyze_source(source, "x.py", Config(strict=strict)).findings
        if f.code == "VSL007"
    ]


# A singledispatch function, and its SlidingWindowSpec implementation that
# refuses what it is given.
CAN_WRITE = (
    "@functools.singledispatch\ndef can_write(spec) -> bool:\n    return True\n\n\n"
)
CAN_WRITE_SLIDING_WINDOW = (
    "@can_write.register(SlidingWindowSpec)\ndef _(spec) -> bool:\n    return False\n"
)

# name -> (body, reported by default at)
REJECTIONS = {
    "bare-raise": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('sliding window')\n",
        [(12, 25)],
    ),
    "tuple-return-false": (
        "def supported(spec):\n"
        "    if isinstance(spec, (MambaSpec, SlidingWindowSpec)):\n"
        "        return False\n"
        "    return True\n",
        [(12, 37)],
    ),
    "union-return-none": (
        "def layout(spec):\n"
        "    if isinstance(spec, MambaSpec | SlidingWindowSpec):\n"
        "        return None\n"
        "    return 'kv'\n",
        [(12, 37)],
    ),
    "negation-else-raises": (
        "def check(spec):\n"
        "    if not isinstance(spec, SlidingWindowSpec):\n"
        "        return True\n"
        "    else:\n"
        "        raise ValueError('K/V layout only')\n",
        [(12, 29)],
    ),
    "assert-not": (
        "def check(spec):\n"
        "    assert not isinstance(spec, SlidingWindowSpec), 'K/V layout'\n",
        [(12, 33)],
    ),
    "any-in-and": (
        "def check(write, groups):\n"
        "    if write and any(isinstance(g.spec, SlidingWindowSpec) for g in groups):\n"
        "        raise NotImplementedError('WRITE')\n",
        [(12, 41)],
    ),
    "all": (
        "def check(groups):\n"
        "    if all(isinstance(g, SlidingWindowSpec) for g in groups):\n"
        "        raise NotImplementedError('all sliding')\n",
        [(12, 26)],
    ),
    "mro-scan": (
        "def check(spec):\n"
        "    if any(c.__name__ == 'SlidingWindowSpec' for c in type(spec).__mro__):\n"
        "        raise NotImplementedError('sliding window')\n",
        [(12, 26)],
    ),
    "match-case": (
        "def check(spec):\n"
        "    match spec:\n"
        "        case SlidingWindowSpec(sliding_window=w):\n"
        "            raise NotImplementedError(f'K/V layout only, window {w}')\n",
        [(13, 14)],
    ),
    "singledispatch-raises": (
        "@functools.singledispatch\n"
        "def register_region(spec) -> None:\n"
        "    pass\n\n\n"
        "@register_region.register\n"
        "def _(spec: SlidingWindowSpec) -> None:\n"
        "    raise NotImplementedError('K/V layout only')\n",
        [(17, 13)],
    ),
    "singledispatch-by-argument-returns-false": (
        CAN_WRITE + CAN_WRITE_SLIDING_WINDOW,
        [(16, 21)],
    ),
    # A registry's classes come first: the dispatcher's are still read.
    "singledispatch-after-a-registry": (
        "REGISTRY.register(FullAttentionSpec, write_full)\n\n\n"
        + CAN_WRITE
        + CAN_WRITE_SLIDING_WINDOW,
        [(19, 21)],
    ),
    # Another class registered first: the parent's implementation is still found.
    "singledispatch-after-another-class": (
        CAN_WRITE + "@can_write.register(FullAttentionSpec)\n"
        "def _(spec) -> bool:\n"
        "    return True\n\n\n" + CAN_WRITE_SLIDING_WINDOW,
        [(21, 21)],
    ),
    "mro-table-false": (
        "SUPPORTS_WRITE = {FullAttentionSpec: True, SlidingWindowSpec: False}\n\n\n"
        "def supports_write(spec) -> bool:\n"
        "    return next(\n"
        "        (SUPPORTS_WRITE[c] for c in type(spec).__mro__ if c in SUPPORTS_WRITE),\n"
        "        False,\n"
        "    )\n",
        [(11, 44)],
    ),
}

# Twins that stay quiet by default, and why (what --strict says).
SHARED = "shared: "
SHARED_WHY = (
    "does not reject the class; SlidingWindowMLASpec shares what it is about here"
)
QUIET = {
    "windowing-use": (
        "def window(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        return spec.sliding_window\n"
        "    return 0\n",
        SHARED + "the test " + SHARED_WHY,
    ),
    # Rejects every other class: the window specs, companion included, pass.
    "negated-rejection": (
        "def check(spec):\n"
        "    if not isinstance(spec, SlidingWindowSpec):\n"
        "        raise ValueError('windows only')\n",
        SHARED + "the test " + SHARED_WHY,
    ),
    # Fails for what is not a window spec: the companion passes, as it may.
    "negated-mro-rejection": (
        "def check(spec):\n"
        "    if SlidingWindowSpec not in type(spec).__mro__:\n"
        "        raise ValueError('windows only')\n",
        SHARED + "the test " + SHARED_WHY,
    ),
    # An assert's message is not its test: it rejects nothing.
    "in-an-asserts-message": (
        "def check(spec):\n"
        "    assert spec is not None, not isinstance(spec, SlidingWindowSpec)\n",
        SHARED + "the test " + SHARED_WHY,
    ),
    "explicit-exclusion": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec) and not isinstance(spec, SlidingWindowMLASpec):\n"
        "        raise NotImplementedError('sliding window')\n",
        None,
    ),
    "or-chain-takes-the-companion-first": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec) or isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('sliding window')\n",
        None,
    ),
    "explicit-exclusion-further-along-the-chain": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec) and spec.sliding_window and not isinstance(spec, SlidingWindowMLASpec):\n"
        "        raise NotImplementedError('sliding window')\n",
        None,
    ),
    "explicit-inclusion": (
        "def check(spec):\n"
        "    if isinstance(spec, (SlidingWindowSpec, SlidingWindowMLASpec)):\n"
        "        raise NotImplementedError('sliding window')\n",
        None,
    ),
    "narrowed": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return True\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('sliding window')\n"
        "    return True\n",
        "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 12) already "
        "excludes SlidingWindowMLASpec",
    ),
    "deliberate-elsewhere": (
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('sliding window')\n"
        "    mla = isinstance(spec, SlidingWindowMLASpec)\n",
        "deliberate: line 14 tests `spec` for SlidingWindowMLASpec",
    ),
    "exact-type": (
        "def check(spec):\n"
        "    if type(spec) is SlidingWindowSpec:\n"
        "        raise NotImplementedError('exactly sliding window')\n",
        None,
    ),
    "admits-the-anchor-too": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, (MLAAttentionSpec, SlidingWindowSpec)):\n"
        "        raise NotImplementedError('MLA or sliding window')\n",
        None,
    ),
    "match-case-windowing": (
        "def window(spec):\n"
        "    match spec:\n"
        "        case SlidingWindowSpec(sliding_window=w):\n"
        "            return w\n"
        "    return 0\n",
        SHARED + "the case " + SHARED_WHY,
    ),
    "match-case-after-the-companion": (
        "def check(spec):\n"
        "    match spec:\n"
        "        case SlidingWindowMLASpec():\n"
        "            return True\n"
        "        case SlidingWindowSpec():\n"
        "            raise NotImplementedError('K/V layout only')\n",
        None,
    ),
    "singledispatch-windowing": (
        "@functools.singledispatch\n"
        "def window(spec) -> int:\n"
        "    return 0\n\n\n"
        "@window.register\n"
        "def _(spec: SlidingWindowSpec) -> int:\n"
        "    return spec.sliding_window\n",
        SHARED + "the implementation " + SHARED_WHY,
    ),
    "singledispatch-companion-registered": (
        "@functools.singledispatch\n"
        "def can_write(spec) -> bool:\n"
        "    return True\n\n\n"
        "@can_write.register(SlidingWindowSpec)\n"
        "def _(spec) -> bool:\n"
        "    return False\n\n\n"
        "@can_write.register(SlidingWindowMLASpec)\n"
        "def _(spec) -> bool:\n"
        "    return True\n",
        None,
    ),
    "mro-table-windowing": (
        "WINDOW_OF = {SlidingWindowSpec: lambda s: s.sliding_window}\n\n\n"
        "def window(spec) -> int:\n"
        "    for c in type(spec).__mro__:\n"
        "        if c in WINDOW_OF:\n"
        "            return WINDOW_OF[c](spec)\n"
        "    return 0\n",
        SHARED + "the entry " + SHARED_WHY,
    ),
    "mro-table-companion-keyed": (
        "SUPPORTS_WRITE = {\n"
        "    SlidingWindowMLASpec: True,\n"
        "    SlidingWindowSpec: False,\n"
        "}\n\n\n"
        "def supports_write(spec) -> bool:\n"
        "    for c in type(spec).__mro__:\n"
        "        if c in SUPPORTS_WRITE:\n"
        "            return SUPPORTS_WRITE[c]\n"
        "    return True\n",
        None,
    ),
    "exact-table": (
        "SUPPORTS_WRITE = {FullAttentionSpec: True, SlidingWindowSpec: False}\n\n\n"
        "def supports_write(spec) -> bool:\n"
        "    return SUPPORTS_WRITE.get(type(spec), True)\n",
        None,
    ),
    "registry": (
        "class Registry:\n"
        "    def __init__(self) -> None:\n"
        "        self.managers = {}\n\n"
        "    def register(self, spec_type, manager) -> None:\n"
        "        self.managers[spec_type] = manager\n\n\n"
        "REGISTRY = Registry()\n"
        "REGISTRY.register(SlidingWindowSpec, None)\n",
        None,
    ),
    "common-ancestor": (
        "from vllm.v1.kv_cache_interface import AttentionSpec\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, AttentionSpec):\n"
        "        raise NotImplementedError('attention')\n",
        None,
    ),
}


@pytest.mark.fast
@pytest.mark.parametrize("name", list(REJECTIONS))
def test_a_rejection_that_sweeps_the_companion_in_is_reported(name):
    body, expected = REJECTIONS[name]
    assert vsl007(body) == expected


@pytest.mark.fast
@pytest.mark.parametrize("name", list(QUIET))
def test_its_twins_are_quiet_and_strict_says_why(name):
    body, strict_reason = QUIET[name]
    assert vsl007(body) == []
    strict = _vsl007_said(body, strict=True)
    if strict_reason is None:
        assert strict == []  # not a sweep at all
    else:
        [(_, _, _, why)] = strict
        assert why == strict_reason


LAYOUT = "also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout"
TABLE = (
    "table keyed by SlidingWindowSpec (MRO lookup) also serves "
    "SlidingWindowMLASpec, which has MLAAttentionSpec's layout"
)


@pytest.mark.fast
@pytest.mark.parametrize(
    "body, said",
    [
        (
            "def check(cls):\n"
            "    if issubclass(cls, SlidingWindowSpec):\n"
            "        raise NotImplementedError('x')\n",
            (12, 24, f"issubclass() check against SlidingWindowSpec {LAYOUT}"),
        ),
        (
            "def check(spec):\n"
            "    if SlidingWindowSpec in type(spec).__mro__:\n"
            "        raise NotImplementedError('x')\n",
            (12, 8, f"MRO test check against SlidingWindowSpec {LAYOUT}"),
        ),
        (
            "TABLE = {SlidingWindowSpec: lambda s: None}\n\n"
            "def f(spec):\n"
            "    for c in type(spec).__mro__:\n"
            "        if c in TABLE:\n"
            "            return TABLE[c](spec)\n",
            (11, 10, TABLE),
        ),
        (
            "TABLE = {SlidingWindowSpec: None}\n\n"
            "def f(spec):\n"
            "    for c in type(spec).__mro__:\n"
            "        if c in TABLE:\n"
            "            return TABLE[c]\n",
            (11, 10, TABLE),
        ),
    ],
    ids=["issubclass", "mro-test", "lambda-entry-none", "entry-none"],
)
def test_each_form_is_named_in_the_message(body, said):
    assert _vsl007_said(body) == [(*said, None)]


SERVES = (
    "SlidingWindowSpec implementation also serves SlidingWindowMLASpec, which "
    "has MLAAttentionSpec's layout"
)


@pytest.mark.fast
@pytest.mark.parametrize(
    "body, said",
    [
        (
            "class Registry:\n"
            "    @functools.singledispatchmethod\n"
            "    def register(self, spec):\n"
            "        pass\n\n"
            "    @register.register\n"
            "    def _(self, spec: SlidingWindowSpec):\n"
            "        raise NotImplementedError('K/V')\n",
            (17, 23, f"singledispatch function register's {SERVES}"),
        ),
        (
            "class Registry:\n"
            "    @functools.singledispatchmethod\n"
            "    @classmethod\n"
            "    def register(cls, spec):\n"
            "        pass\n\n"
            "    @register.register\n"
            "    @classmethod\n"
            "    def _(cls, spec: SlidingWindowSpec):\n"
            "        raise NotImplementedError('K/V')\n",
            (19, 22, f"singledispatch function register's {SERVES}"),
        ),
        (
            "import typing\n\n"
            "@functools.singledispatch\n"
            "def region(spec):\n"
            "    pass\n\n"
            "@region.register\n"
            "def _(spec: typing.Optional[SlidingWindowSpec]):\n"
            "    raise NotImplementedError('K/V')\n",
            (18, 29, f"singledispatch function region's {SERVES}"),
        ),
        (
            "import typing\n\n"
            "@functools.singledispatch\n"
            "def region(spec):\n"
            "    pass\n\n"
            "@region.register\n"
            "def _(spec: typing.Union[MambaSpec, SlidingWindowSpec]):\n"
            "    raise NotImplementedError('K/V')\n",
            (18, 37, f"singledispatch function region's {SERVES}"),
        ),
    ],
    ids=["method-self", "classmethod-cls", "optional", "union"],
)
def test_an_implementation_is_read_from_its_dispatched_parameter(body, said):
    assert _vsl007_said(body) == [(*said, None)]


@pytest.mark.fast
def test_outside_a_class_a_first_parameter_named_self_is_the_dispatched_one():
    body = (
        "@functools.singledispatch\n"
        "def region(self, spec):\n"
        "    pass\n\n"
        "@region.register\n"
        "def _(self, spec: SlidingWindowSpec):\n"
        "    raise NotImplementedError('K/V')\n"
    )
    assert _vsl007_said(body, strict=True) == []


ADMITS = f"isinstance() check against SlidingWindowSpec {LAYOUT}"


@pytest.mark.fast
@pytest.mark.parametrize(
    "body, reported, strict_reasons",
    [
        (
            "def check(spec):\n"
            "    if not not isinstance(spec, SlidingWindowSpec):\n"
            "        raise NotImplementedError('K/V')\n",
            [(12, 33, ADMITS, None)],
            [None],
        ),
        (
            "def check(spec, strict):\n"
            "    if strict or isinstance(spec, SlidingWindowSpec):\n"
            "        raise NotImplementedError('K/V')\n",
            [(12, 35, ADMITS, None)],
            [None],
        ),
        (
            "def check(spec, other):\n"
            "    if isinstance(spec, SlidingWindowSpec) and not isinstance(\n"
            "        other, SlidingWindowMLASpec\n"
            "    ):\n"
            "        raise NotImplementedError('K/V')\n",
            [(12, 25, ADMITS, None)],
            [None],
        ),
        (
            "def check(spec):\n"
            "    if isinstance(spec, SlidingWindowSpec) and isinstance(\n"
            "        spec, SlidingWindowMLASpec\n"
            "    ):\n"
            "        raise NotImplementedError('K/V')\n",
            [],
            ["deliberate: line 12 tests `spec` for SlidingWindowMLASpec"],
        ),
        (
            "def check(spec):\n"
            "    if isinstance(spec, SlidingWindowSpec) and not isinstance(\n"
            "        spec, SlidingWindowMLASpec\n"
            "    ):\n"
            "        raise NotImplementedError('K/V')\n",
            [],
            [],
        ),
    ],
    ids=[
        "double-negation",
        "through-or",
        "exclusion-of-another-value",
        "companion-tested-beside",
        "companion-excluded-beside",
    ],
)
def test_what_stands_beside_the_test_decides(body, reported, strict_reasons):
    assert _vsl007_said(body) == reported
    assert [said[3] for said in _vsl007_said(body, strict=True)] == strict_reasons


@pytest.mark.fast
def test_an_entry_that_rejects_nothing_is_strict_only():
    body = (
        "TABLE = {SlidingWindowSpec: lambda s: 1}\n\n"
        "def f(spec):\n"
        "    for c in type(spec).__mro__:\n"
        "        if c in TABLE:\n"
        "            return TABLE[c](spec)\n"
    )
    assert _vsl007_said(body) == []
    assert _vsl007_said(body, strict=True) == [
        (
            11,
            10,
            TABLE,
            "shared: the entry does not reject the class; SlidingWindowMLASpec "
            "shares what it is about here",
        )
    ]


@pytest.mark.fast
def test_the_message_names_the_parent_the_companion_and_the_layout(tmp_path):
    (tmp_path / "c.py").write_text(HEADER + REJECTIONS["bare-raise"][0])
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
    )
    assert out.stdout.splitlines()[0] == (
        "c.py:12:25: VSL007 isinstance() check against SlidingWindowSpec also "
        "admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout"
    )


@pytest.mark.fast
def test_dispatch_messages_name_the_dispatch_and_leave_the_fix_to_a_person(tmp_path):
    (tmp_path / "d.py").write_text(
        HEADER
        + REJECTIONS["singledispatch-raises"][0]
        + "\n\n"
        + REJECTIONS["mro-table-false"][0]
    )
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
    )
    assert out.stdout.splitlines()[:2] == [
        "d.py:17:13: VSL007 singledispatch function register_region's "
        "SlidingWindowSpec implementation also serves SlidingWindowMLASpec, "
        "which has MLAAttentionSpec's layout",
        "d.py:21:44: VSL007 table keyed by SlidingWindowSpec (MRO lookup) also "
        "serves SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
    ]
    fixed = run_cli("check", "--no-cache", "--unsafe-fixes", "--fix", ".", cwd=tmp_path)
    assert "fixable" not in fixed.stdout
    assert fixed.returncode == 1


FIXES = {
    "bare": (
        "    if isinstance(spec, SlidingWindowSpec):\n",
        "    if isinstance(spec, SlidingWindowSpec) and not isinstance(spec, SlidingWindowMLASpec):\n",
    ),
    "under-not": (
        "    if not isinstance(spec, SlidingWindowSpec):\n        return True\n    else:\n",
        "    if not (isinstance(spec, SlidingWindowSpec) and not isinstance(spec, SlidingWindowMLASpec)):\n        return True\n    else:\n",
    ),
}


@pytest.mark.fast
@pytest.mark.parametrize("name", list(FIXES))
def test_the_fix_excludes_the_companion_and_imports_it(name, tmp_path):
    before_line, after_line = FIXES[name]
    header = "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n\n"
    body = (
        "def check(spec):\n"
        + before_line
        + "        raise NotImplementedError('K/V')\n"
        if name == "bare"
        else "def check(spec):\n"
        + before_line
        + "        raise ValueError('K/V layout')\n"
    )
    (tmp_path / "c.py").write_text(header + body)
    run_cli("fix", "--no-cache", "--fix-formatter", "none", ".", cwd=tmp_path)
    assert (tmp_path / "c.py").read_text() == header + body  # unsafe: not by default
    run_cli(
        "fix",
        "--unsafe-fixes",
        "--no-cache",
        "--fix-formatter",
        "none",
        ".",
        cwd=tmp_path,
    )
    assert (tmp_path / "c.py").read_text() == (
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n\n"
        + body.replace(before_line, after_line)
    )


@pytest.mark.fast
def test_a_parenthesized_test_is_fixed_without_its_parentheses():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.fixing import fix_source

    header = "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n\n"
    body = (
        "def check(spec):\n"
        "    if (isinstance(spec, SlidingWindowSpec)):\n"
        "        raise ValueError('K/V layout')\n"
    )
    [finding] = analyze_source(header + body, "c.py", Config()).findings
    assert (finding.fix.message, finding.fix.applicability) == (
        "Exclude SlidingWindowMLASpec",
        "unsafe",
    )
    outcome = fix_source(header + body, "c.py", Config(), unsafe=True)
    assert (outcome.failure, outcome.text) == (
        None,
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n"
        "\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec) and not isinstance(spec, SlidingWindowMLASpec):\n"
        "        raise ValueError('K/V layout')\n",
    )


def _check_vsl007(tree):
    """``check --select VSL007`` on ``tree``, concise, without the cache."""
    return run_cli(
        "check", "--output-format", "concise", "--no-cache", "--select", "VSL007",
        ".", cwd=tree,
    )  # fmt: skip


def _hierarchy_module(tmp_path, text: str) -> None:
    kci = tmp_path / "vllm" / "v1" / "kv_cache_interface.py"
    kci.parent.mkdir(parents=True)
    kci.write_text(text)


@pytest.mark.fast
def test_a_companion_directly_under_the_common_ancestor_has_nothing_to_report(tmp_path):
    _hierarchy_module(
        tmp_path,
        "class KVCacheSpec: ...\nclass AttentionSpec(KVCacheSpec): ...\n"
        "class SlidingWindowSpec(AttentionSpec): ...\n"
        "class MLAAttentionSpec(AttentionSpec): ...\n"
        "class SlidingWindowMLASpec(AttentionSpec): ...\n",
    )
    (tmp_path / "c.py").write_text(HEADER + REJECTIONS["bare-raise"][0])
    out = _check_vsl007(tmp_path)
    assert (out.returncode, out.stdout) == (0, "All checks passed!\n")


@pytest.mark.fast
def test_a_configured_family_gets_the_same_rule(tmp_path):
    _hierarchy_module(
        tmp_path,
        "class KVCacheSpec: ...\nclass MambaSpec(KVCacheSpec): ...\n"
        "class ConvSpec(KVCacheSpec): ...\nclass ShortConvSpec(ConvSpec): ...\n",
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nextend-families = [\n"
        '  { name = "mamba", module = "vllm.v1.kv_cache_interface", '
        'members = ["MambaSpec", "ShortConvSpec"] },\n]\n'
    )
    (tmp_path / "c.py").write_text(
        "from vllm.v1.kv_cache_interface import ConvSpec\n\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, ConvSpec):\n"
        "        raise NotImplementedError('conv state layout')\n"
    )
    out = _check_vsl007(tmp_path)
    assert out.stdout.splitlines()[0] == (
        "c.py:5:25: VSL007 isinstance() check against ConvSpec also admits "
        "ShortConvSpec, which has MambaSpec's layout"
    )


@pytest.mark.fast
def test_an_mro_scan_is_reported_and_left_to_a_person():
    from vllm_spec_lint.core.analysis import analyze_source

    body = (
        "def check(spec):\n"
        "    if any(base is SlidingWindowSpec for base in type(spec).__mro__):\n"
        "        raise NotImplementedError('sliding window')\n"
    )
    [finding] = analyze_source(HEADER + body, "x.py", Config()).findings
    assert (finding.code, finding.message, finding.fix) == (
        "VSL007",
        f"MRO test check against SlidingWindowSpec {LAYOUT}",
        None,
    )


# A family with two companions under parents of their own: what rules out
# one companion leaves the other reported.
TWO_COMPANIONS = (
    "class KVCacheSpec: ...\nclass MambaSpec(KVCacheSpec): ...\n"
    "class ConvSpec(KVCacheSpec): ...\nclass ShortConvSpec(ConvSpec): ...\n"
    "class GatedSpec(KVCacheSpec): ...\nclass GatedMambaSpec(GatedSpec): ...\n"
)
GATED = "also admits GatedMambaSpec, which has MambaSpec's layout"


@pytest.mark.fast
@pytest.mark.parametrize(
    "test, said",
    [
        # The first companion's parent is not tested: the second's is.
        (
            "isinstance(spec, GatedSpec)",
            [f"5:25: VSL007 isinstance() check against GatedSpec {GATED}"],
        ),
        # The first companion is named with its parent.
        (
            "isinstance(spec, (ConvSpec, ShortConvSpec, GatedSpec))",
            [f"5:51: VSL007 isinstance() check against GatedSpec {GATED}"],
        ),
        # The or-chain takes the first companion before the test.
        (
            "isinstance(spec, ShortConvSpec) or isinstance(spec, (ConvSpec, GatedSpec))",
            [f"5:71: VSL007 isinstance() check against GatedSpec {GATED}"],
        ),
        # The same and-chain rules the first companion out.
        (
            "isinstance(spec, (ConvSpec, GatedSpec)) and not isinstance(spec, ShortConvSpec)",
            [f"5:36: VSL007 isinstance() check against GatedSpec {GATED}"],
        ),
    ],
    ids=["parent-of-the-second", "first-named", "first-decided", "first-excluded"],
)
def test_what_rules_out_one_companion_leaves_the_other_reported(test, said):
    source = (
        "from vllm.v1.kv_cache_interface import ConvSpec, GatedSpec, ShortConvSpec\n\n\n"
        "def check(spec):\n"
        f"    if {test}:\n"
        "        raise NotImplementedError('conv or gated state layout')\n"
    )
    assert _two_companions_said(source) == said


@pytest.mark.fast
def test_a_case_after_one_companions_case_is_reported_for_the_other():
    source = (
        "from vllm.v1.kv_cache_interface import ConvSpec, GatedSpec, ShortConvSpec\n\n\n"
        "def check(spec):\n"
        "    match spec:\n"
        "        case ShortConvSpec():\n"
        "            return True\n"
        "        case ConvSpec() | GatedSpec():\n"
        "            raise NotImplementedError('conv or gated state layout')\n"
    )
    assert _two_companions_said(source) == [
        "8:27: VSL007 case GatedSpec() also admits GatedMambaSpec, which has "
        "MambaSpec's layout"
    ]


def _two_companions_said(source: str) -> list[str]:
    """Each VSL007 finding of ``source`` as ``row:column: CODE message``,
    with TWO_COMPANIONS' family configured. At the analysis core, which
    mutation testing counts for the rule (the configuration as read from a
    project: test_a_configured_family_gets_the_same_rule)."""
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Family
    from vllm_spec_lint.model.hierarchy import ClassHierarchy, read_class_bases

    module = "vllm.v1.kv_cache_interface"
    hierarchy = ClassHierarchy.default().with_module(
        module, read_class_bases(TWO_COMPANIONS), "kv.py", "scanned tree"
    )
    members = ("MambaSpec", "ShortConvSpec", "GatedMambaSpec")
    config = Config(families=(Family("mamba", module, members),))
    analysis = analyze_source(source, "c.py", config, hierarchy)
    return [
        f"{row}:{column}: {f.code} {f.message}"
        for f in analysis.findings
        for row, column in [f.location]
    ]


@pytest.mark.fast
def test_flake8_reports_it_too(tmp_path):
    (tmp_path / "c.py").write_text(HEADER + REJECTIONS["bare-raise"][0])
    out = run_flake8("--select", "VSL", "c.py", cwd=tmp_path)
    assert out.stdout.startswith(
        "c.py:12:25: VSL007 isinstance() check against SlidingWindowSpec"
    )


# -- on vLLM releases ------------------------------------------------------------

MORIIO = "vllm/distributed/kv_transfer/kv_connector/v1/moriio/moriio_connector.py"
# (release, default-mode VSL007 sites, --strict count), read by hand: the
# only default finding is MoRIIO's WRITE-mode rejection, which 0.34.0 fixed.
RELEASES = [
    ("0.29.0", [], 19),
    ("0.33.0", [(MORIIO, 636, 45)], 28),
    ("0.34.0", [], 27),  # its MoRIIO check now excludes the companion
]


@pytest.mark.release
@pytest.mark.parametrize("version, reported, strict", RELEASES)
def test_releases(version, reported, strict):
    tree = fetch_vllm(version)
    default = run_cli(
        "check",
        "--no-cache",
        "--select",
        "VSL007",
        "--output-format",
        "json",
        ".",
        cwd=tree,
    )
    sites = [
        (
            f["filename"].split(f"{tree}/")[1],
            f["location"]["row"],
            f["location"]["column"],
        )
        for f in json.loads(default.stdout)
    ]
    assert sites == reported
    everything = run_cli(
        "check",
        "--no-cache",
        "--strict",
        "--select",
        "VSL007",
        "--output-format",
        "json",
        ".",
        cwd=tree,
    )
    assert len(json.loads(everything.stdout)) == strict


@pytest.mark.release
def test_the_fix_on_vllm_0_33_is_what_0_34_wrote(tmp_path):
    tree = fetch_vllm("0.33.0")
    copy = tmp_path / "vllm-0.33.0"
    (copy / MORIIO).parent.mkdir(parents=True)
    shutil.copy(tree / MORIIO, copy / MORIIO)
    shutil.copytree(tree / "vllm" / "v1", copy / "vllm" / "v1", dirs_exist_ok=True)
    run_cli(
        "fix", "--unsafe-fixes", "--no-cache", "--select", "VSL007", MORIIO, cwd=copy
    )
    fixed = (copy / MORIIO).read_text()
    assert (
        "                isinstance(g.kv_cache_spec, SlidingWindowSpec)\n"
        "                and not isinstance(g.kv_cache_spec, SlidingWindowMLASpec)\n"
        "                for g in kv_cache_config.transfer_groups\n"
    ) in fixed
    assert "    SlidingWindowMLASpec,\n    SlidingWindowSpec,\n" in fixed


@pytest.mark.fast
def test_a_discovered_familys_findings_say_so_in_every_form():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, Family

    guessed = Family(
        "twin",
        KV_CACHE_INTERFACE,
        ("MLAAttentionSpec", "SlidingWindowMLASpec"),
        evidence="same fields a, b",
    )
    body = (
        "TABLE = {SlidingWindowSpec: False}\n\n"
        "def f(spec):\n"
        "    for c in type(spec).__mro__:\n"
        "        if c in TABLE:\n"
        "            return TABLE[c]\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('K/V')\n"
        "    match spec:\n"
        "        case SlidingWindowSpec():\n"
        "            raise NotImplementedError('K/V')\n"
    )
    found = analyze_source(HEADER + body, "x.py", Config(families=(guessed,)))
    assert [(f.location, f.message[-35:]) for f in found.findings] == [
        ((11, 10), "(discovered twin: same fields a, b)"),
        ((17, 25), "(discovered twin: same fields a, b)"),
        ((20, 14), "(discovered twin: same fields a, b)"),
    ]


@pytest.mark.fast
@pytest.mark.parametrize(
    "cases, reported",
    [
        # The companion was taken two cases earlier.
        (
            "        case SlidingWindowMLASpec():\n"
            "            return 0\n"
            "        case FullAttentionSpec(block_size=16):\n"
            "            return 2\n"
            "        case SlidingWindowSpec():\n"
            "            raise NotImplementedError('K/V')\n",
            [],
        ),
        # An earlier case took another class only.
        (
            "        case MambaSpec():\n"
            "            return 0\n"
            "        case SlidingWindowSpec() | MambaSpec():\n"
            "            raise NotImplementedError('K/V')\n",
            [(15, 14)],
        ),
        # The parent after another class in the same case.
        (
            "        case MambaSpec() | SlidingWindowSpec():\n"
            "            raise NotImplementedError('K/V')\n",
            [(13, 28)],
        ),
        # An earlier case took only some of the companion's instances.
        (
            "        case SlidingWindowMLASpec(block_size=16):\n"
            "            return 0\n"
            "        case SlidingWindowSpec():\n"
            "            raise NotImplementedError('K/V')\n",
            [(15, 14)],
        ),
    ],
    ids=["taken-earlier", "other-class-earlier", "parent-second", "companion-in-part"],
)
def test_a_case_counts_what_every_earlier_case_took(cases, reported):
    body = "def check(spec):\n    match spec:\n" + cases
    assert [(row, column) for row, column, *_ in _vsl007_said(body, strict=True)] == (
        reported
    )


# -- a shared site carries no fix: the rule itself says excluding is wrong -------------

SHARED_SITE = """\
from vllm.v1.kv_cache_interface import SlidingWindowSpec


def window_of(spec):
    if isinstance(spec, SlidingWindowSpec):
        return spec.sliding_window
    return 0
"""


def test_strict_unsafe_fix_leaves_a_file_of_shared_sites_byte_identical(tmp_path):
    (tmp_path / "window.py").write_text(SHARED_SITE)
    out = run_cli(
        "fix", "--strict", "--unsafe-fixes", "--output-format", "concise",
        "--no-cache", ".", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1  # strict still reports it
    assert out.stdout.startswith("window.py:5:25: VSL007 isinstance() check ")
    assert "[*]" not in out.stdout
    assert (tmp_path / "window.py").read_text() == SHARED_SITE


def test_a_shared_site_has_no_fix_in_json_and_a_rejecting_one_has(tmp_path):
    rejecting = SHARED_SITE.replace("return spec.sliding_window", "raise ValueError")
    (tmp_path / "shared.py").write_text(SHARED_SITE)
    (tmp_path / "rejecting.py").write_text(rejecting)
    out = run_cli(
        "check", "--strict", "--output-format", "json", "--no-cache", ".",
        cwd=tmp_path,
    )  # fmt: skip
    by_file = {f["filename"].rpartition("/")[2]: f for f in json.loads(out.stdout)}
    assert by_file["shared.py"]["suppressed_by"].startswith("shared: ")
    assert by_file["shared.py"]["fix"] is None
    assert by_file["rejecting.py"]["suppressed_by"] is None
    assert by_file["rejecting.py"]["fix"]["message"] == ("Exclude SlidingWindowMLASpec")


def test_a_bare_return_under_the_parent_test_is_a_rejection():
    """`return` alone gives None: the path refuses sliding-window specs, the
    companion among them, and the default mode reports it."""
    assert findings(
        """\
        from vllm.v1.kv_cache_interface import SlidingWindowSpec


        def transfer_layout(spec):
            if isinstance(spec, SlidingWindowSpec):
                return
            return spec.block_size
        """
    ) == [("VSL007", 5, 25)]


def test_a_parent_in_a_module_constant_beside_an_anchor_check_adds_no_finding():
    """`WINDOWED = (SlidingWindowSpec,)` used for windowing, in a file that
    also tests MLAAttentionSpec: the constant is no sweep of its own (VSL007
    reads tests, not constants), default and strict alike; the anchor's
    check is the one finding."""
    source = """\
        from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec

        WINDOWED = (SlidingWindowSpec,)


        def window_of(spec):
            if isinstance(spec, WINDOWED):
                return spec.sliding_window
            return 0


        def is_latent(spec):
            return isinstance(spec, MLAAttentionSpec)
        """
    assert findings(source) == [("VSL001", 13, 29)]
    assert findings(source, config=Config(strict=True)) == [("VSL001", 13, 29)]


def test_a_parent_in_a_constant_in_the_anchor_checks_own_function_adds_no_finding():
    """The same, with both tests in one function (which the analysis keeps
    whole for the anchor's check): still no VSL007 at the constant, even in
    strict mode, which lists the anchor's check as narrowed."""
    source = """\
        from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec

        WINDOWED = (SlidingWindowSpec,)


        def describe(spec):
            if isinstance(spec, WINDOWED):
                return "window"
            return isinstance(spec, MLAAttentionSpec)
        """
    assert findings(source) == []
    assert findings(source, config=Config(strict=True)) == [("VSL001", 9, 29)]
