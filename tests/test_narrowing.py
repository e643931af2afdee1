"""Default-mode precision: narrowing, deliberate handling and loud failures,
each case with the twin that must still be reported. Sources are written
for these tests in vLLM's style."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import run_cli
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy

HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    AttentionSpec,\n"
    "    FullAttentionSpec,\n"
    "    KVCacheSpec,\n"
    "    MLAAttentionSpec,\n"
    "    SlidingWindowMLASpec,\n"
    "    SlidingWindowSpec,\n"
    ")\n\n\n"
)


def analyse(body: str, config: Config | None = None, hierarchy=None):
    return analyze_source(
        HEADER + textwrap.dedent(body), "layers.py", config or Config(), hierarchy
    )


def reported(body: str) -> list[int]:
    """Rows of the findings the default mode reports (0 = the header's end)."""
    offset = HEADER.count("\n")
    return [f.location[0] - offset for f in analyse(body).findings]


def reason(body: str) -> str:
    """The reason of the one forward site the default mode leaves out."""
    [suppressed] = [f for f in analyse(body).suppressed if f.code != "VSL007"]
    return suppressed.suppressed_by


CASES = {
    # name: (suppressed source, its twin that must be reported, reason prefix)
    "and-conjunct": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            return isinstance(spec, FullAttentionSpec) and not isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            return isinstance(spec, AttentionSpec) and not isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "or-operand": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            return not isinstance(spec, FullAttentionSpec) or isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            return not isinstance(spec, AttentionSpec) or isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "enclosing-if": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, FullAttentionSpec):
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, AttentionSpec):
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
        "narrowed",
    ),
    "else-branch": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, SlidingWindowMLASpec):
                return 2
            else:
                return 1 if isinstance(spec, MLAAttentionSpec) else 0
        """,
        """\
        def f(spec: KVCacheSpec) -> int:
            if isinstance(spec, FullAttentionSpec):
                return 2
            else:
                return 1 if isinstance(spec, MLAAttentionSpec) else 0
        """,
        "narrowed",
    ),
    "earlier-elif": (
        """\
        def f(spec: KVCacheSpec) -> int:
            if not isinstance(spec, FullAttentionSpec):
                return 0
            elif isinstance(spec, MLAAttentionSpec):
                return 1
            return 2
        """,
        """\
        def f(spec: KVCacheSpec) -> int:
            if not isinstance(spec, AttentionSpec):
                return 0
            elif isinstance(spec, MLAAttentionSpec):
                return 1
            return 2
        """,
        "narrowed",
    ),
    "early-return": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowMLASpec):
                return False
            log(spec)
            return isinstance(spec, MLAAttentionSpec)
        """,
        # An assignment to the target between guard and check.
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowMLASpec):
                return False
            spec = resolve(spec)
            return isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "early-raise-in-loop-continue": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            n = 0
            for spec in specs:
                if isinstance(spec, SlidingWindowMLASpec):
                    continue
                n += isinstance(spec, MLAAttentionSpec)
            return n
        """,
        # A different target.
        """\
        def f(specs: list[KVCacheSpec], other: KVCacheSpec) -> int:
            n = 0
            for spec in specs:
                if isinstance(other, SlidingWindowMLASpec):
                    continue
                n += isinstance(spec, MLAAttentionSpec)
            return n
        """,
        "narrowed",
    ),
    "assert-on-target": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            assert not isinstance(spec, SlidingWindowMLASpec)
            return isinstance(spec, MLAAttentionSpec)
        """,
        # The guard sits in another function.
        """\
        def check(spec: KVCacheSpec) -> None:
            assert not isinstance(spec, SlidingWindowMLASpec)


        def f(spec: KVCacheSpec) -> bool:
            check(spec)
            return isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "exit-without-exit": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowMLASpec):
                raise ValueError("compressed layers are not supported here")
            return isinstance(spec, MLAAttentionSpec)
        """,
        # The branch does not leave: a companion still gets to the check.
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowSpec):
                log("sliding window layer")
            return isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "elements-assert-all": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return any(isinstance(spec, MLAAttentionSpec) for spec in specs)
        """,
        """\
        def f(specs: list[KVCacheSpec], others: list[KVCacheSpec]) -> bool:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return any(isinstance(spec, MLAAttentionSpec) for spec in others)
        """,
        "narrowed",
    ),
    "elements-early-exit-any": (
        """\
        def f(kv_cache_spec: dict[str, KVCacheSpec]) -> dict[str, KVCacheSpec] | None:
            if any(isinstance(s, SlidingWindowMLASpec) for s in kv_cache_spec.values()):
                return None
            return {
                name: spec
                for name, spec in kv_cache_spec.items()
                if isinstance(spec, MLAAttentionSpec)
            }
        """,
        """\
        def f(kv_cache_spec: dict[str, KVCacheSpec]) -> dict[str, KVCacheSpec] | None:
            if any(isinstance(s, SlidingWindowMLASpec) for s in kv_cache_spec.values()):
                return None
            kv_cache_spec = load_more(kv_cache_spec)
            return {
                name: spec
                for name, spec in kv_cache_spec.items()
                if isinstance(spec, MLAAttentionSpec)
            }
        """,
        "narrowed",
    ),
    "elements-for-loop": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            n = 0
            for spec in specs:
                if isinstance(spec, MLAAttentionSpec):
                    n += 1
            return n
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert all(isinstance(s, AttentionSpec) for s in specs)
            n = 0
            for spec in specs:
                if isinstance(spec, MLAAttentionSpec):
                    n += 1
            return n
        """,
        "narrowed",
    ),
    # The check in a comprehension's own `if`, after one that excludes.
    "comprehension-earlier-if": (
        """\
        def mla_specs(specs: list[KVCacheSpec]) -> list[KVCacheSpec]:
            return [
                s
                for s in specs
                if not isinstance(s, SlidingWindowMLASpec)
                if isinstance(s, MLAAttentionSpec)
            ]
        """,
        """\
        def mla_specs(specs: list[KVCacheSpec]) -> list[KVCacheSpec]:
            return [
                s
                for s in specs
                if s.block_size
                if isinstance(s, MLAAttentionSpec)
            ]
        """,
        "narrowed",
    ),
    "deliberate-same-target": (
        """\
        def kind(spec: KVCacheSpec) -> str:
            if isinstance(spec, MLAAttentionSpec):
                return "mla"
            if isinstance(spec, SlidingWindowMLASpec):
                return "swa-mla"
            return "other"
        """,
        """\
        def kind(spec: KVCacheSpec, other: KVCacheSpec) -> str:
            if isinstance(spec, MLAAttentionSpec):
                return "mla"
            if isinstance(other, SlidingWindowMLASpec):
                return "swa-mla"
            return "other"
        """,
        "deliberate",
    ),
    "deliberate-reassigned-between": (
        """\
        def kind(spec: KVCacheSpec) -> str:
            mla = isinstance(spec, MLAAttentionSpec)
            swa = isinstance(spec, SlidingWindowMLASpec)
            return f"{mla}-{swa}"
        """,
        """\
        def kind(spec: KVCacheSpec) -> str:
            mla = isinstance(spec, MLAAttentionSpec)
            spec = spec.inner
            swa = isinstance(spec, SlidingWindowMLASpec)
            return f"{mla}-{swa}"
        """,
        "deliberate",
    ),
    "deliberate-same-collection": (
        """\
        def kinds(specs: list[KVCacheSpec]) -> tuple[bool, bool]:
            has_mla = any(isinstance(s, MLAAttentionSpec) for s in specs)
            has_swa_mla = any(isinstance(t, SlidingWindowMLASpec) for t in specs)
            return has_mla, has_swa_mla
        """,
        """\
        def kinds(specs: list[KVCacheSpec], more: list[KVCacheSpec]) -> tuple[bool, bool]:
            has_mla = any(isinstance(s, MLAAttentionSpec) for s in specs)
            has_swa_mla = any(isinstance(t, SlidingWindowMLASpec) for t in more)
            return has_mla, has_swa_mla
        """,
        "deliberate",
    ),
    "positive-assert": (
        """\
        def f(spec: KVCacheSpec) -> int:
            assert isinstance(spec, MLAAttentionSpec), "MLA only"
            return spec.block_size
        """,
        """\
        def f(spec: KVCacheSpec) -> int:
            assert not isinstance(spec, MLAAttentionSpec), "no MLA here"
            return spec.block_size
        """,
        "assert",
    ),
    "assert-all": (
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            assert all(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            assert any(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        "assert",
    ),
    "raise-unless-all": (
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            if not all(isinstance(s, MLAAttentionSpec) for s in specs):
                raise ValueError("MLA only")
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            if not all(isinstance(s, MLAAttentionSpec) for s in specs):
                log("not all MLA")
        """,
        "raise",
    ),
    # Negated guards: under `!=`, `is not`, `not in` the value is anything
    # but that class, so a SlidingWindowMLASpec reaches the check (the twin);
    # an early exit on the negation leaves exactly that class behind.
    "exit-on-not-equal": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) != FullAttentionSpec:
                return False
            return isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) != FullAttentionSpec:
                return isinstance(spec, MLAAttentionSpec)
            return False
        """,
        "narrowed",
    ),
    "exit-on-is-not": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) is not FullAttentionSpec:
                return False
            return isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) is not FullAttentionSpec:
                return isinstance(spec, MLAAttentionSpec)
            return False
        """,
        "narrowed",
    ),
    "exit-on-not-in": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) not in (FullAttentionSpec, SlidingWindowSpec):
                return False
            return isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) not in (FullAttentionSpec, SlidingWindowSpec):
                return isinstance(spec, MLAAttentionSpec)
            return False
        """,
        "narrowed",
    ),
    "else-of-not-equal": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) != FullAttentionSpec:
                return False
            else:
                return isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            if type(spec) == FullAttentionSpec:
                return False
            else:
                return isinstance(spec, MLAAttentionSpec)
        """,
        "narrowed",
    ),
    "comprehension-condition": (
        """\
        def f(specs: list[KVCacheSpec]) -> list[bool]:
            return [isinstance(s, MLAAttentionSpec) for s in specs if isinstance(s, FullAttentionSpec)]
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> list[bool]:
            return [isinstance(s, MLAAttentionSpec) for s in specs if isinstance(s, AttentionSpec)]
        """,
        "narrowed",
    ),
    "inner-comprehension-condition": (
        """\
        def f(groups: list[list[KVCacheSpec]]) -> list[bool]:
            return [isinstance(s, MLAAttentionSpec) for g in groups for s in g if isinstance(s, FullAttentionSpec)]
        """,
        """\
        def f(groups: list[list[KVCacheSpec]]) -> list[bool]:
            return [isinstance(s, MLAAttentionSpec) for g in groups for s in g if isinstance(s, AttentionSpec)]
        """,
        "narrowed",
    ),
    # all() says it of every element; any() of one.
    "all-not-any": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert any(isinstance(s, FullAttentionSpec) for s in specs)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        "narrowed",
    ),
    # A filtered generator says nothing of the elements it filtered out.
    "all-unfiltered": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            assert all(isinstance(s, FullAttentionSpec) for s in specs if s is not None)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        "narrowed",
    ),
    # all() about another value than the generator's element.
    "all-about-the-element": (
        """\
        def f(specs: list[KVCacheSpec], first: KVCacheSpec) -> int:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        """\
        def f(specs: list[KVCacheSpec], first: KVCacheSpec) -> int:
            assert all(isinstance(first, FullAttentionSpec) for s in specs)
            return sum(isinstance(s, MLAAttentionSpec) for s in specs)
        """,
        "narrowed",
    ),
    "items-pairs": (
        """\
        def f(specs: dict[str, KVCacheSpec]) -> None:
            assert all(isinstance(v, FullAttentionSpec) for _, v in specs.items())
            for name, spec in specs.items():
                if isinstance(spec, MLAAttentionSpec):
                    log(name)
        """,
        """\
        def f(specs: dict[str, KVCacheSpec]) -> None:
            assert all(isinstance(v, FullAttentionSpec) for v in specs.items())
            for name, spec in specs.items():
                if isinstance(spec, MLAAttentionSpec):
                    log(name)
        """,
        "narrowed",
    ),
    # sorted(specs) is not a known collection: its elements are not narrowed.
    "collection-by-name": (
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            for s in specs:
                if isinstance(s, MLAAttentionSpec):
                    log(s)
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> None:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            for s in sorted(specs):
                if isinstance(s, MLAAttentionSpec):
                    log(s)
        """,
        "narrowed",
    ),
    "inner-comprehension-loop": (
        """\
        def f(specs: list[KVCacheSpec]) -> list[bool]:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return [isinstance(s, MLAAttentionSpec) for _ in range(2) for s in specs]
        """,
        """\
        def f(specs: list[KVCacheSpec], others: list[KVCacheSpec]) -> list[bool]:
            assert all(isinstance(s, FullAttentionSpec) for s in specs)
            return [isinstance(s, MLAAttentionSpec) for _ in range(2) for s in others]
        """,
        "narrowed",
    ),
    # Another name assigned in between does not change the value tested.
    "deliberate-across-other-assignments": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            compressed = isinstance(spec, SlidingWindowMLASpec)
            ratio = 4
            return compressed or isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec, other: KVCacheSpec) -> bool:
            compressed = isinstance(spec, SlidingWindowMLASpec)
            spec = other
            return compressed or isinstance(spec, MLAAttentionSpec)
        """,
        "deliberate",
    ),
    # Reassigned after the companion's test on the same line.
    "deliberate-same-line": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowMLASpec): log(spec)
            return isinstance(spec, MLAAttentionSpec)
        """,
        """\
        def f(spec: KVCacheSpec) -> bool:
            if isinstance(spec, SlidingWindowMLASpec): spec = spec.base
            return isinstance(spec, MLAAttentionSpec)
        """,
        "deliberate",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_suppressed_case_and_its_reported_twin(name):
    suppressed, twin, prefix = CASES[name]
    assert reported(suppressed) == []
    assert reason(suppressed).startswith(prefix + ":")
    assert len(reported(twin)) == 1, "the twin must still be reported"


@pytest.mark.parametrize(
    "rebinding",
    [
        "spec = spec.inner",
        "spec: KVCacheSpec = spec.inner",
        "spec |= EXTRA",
        "for spec in spec.parts: pass",
        "if (spec := spec.inner): pass",
        "with spec.inner as spec: pass",
        "from .inner import spec",
        "import spec.inner",
        "spec, count = spec.inner, 1",
        "first, *spec = spec.parts",
    ],
)
def test_every_kind_of_rebinding_between_two_tests_keeps_the_first_reported(
    rebinding,
):
    """The second test is of another value: the first is not deliberate."""
    body = (
        "def kind(spec: KVCacheSpec) -> str:\n"
        "    mla = isinstance(spec, MLAAttentionSpec)\n"
        f"    {rebinding}\n"
        "    swa = isinstance(spec, SlidingWindowMLASpec)\n"
        '    return f"{mla}-{swa}"\n'
    )
    assert reported(body) == [2]


@pytest.mark.parametrize("tested", ["spec.inner", "spec[0]", "spec.inner[0]"])
def test_rebinding_what_the_tested_value_hangs_off_keeps_the_first_reported(tested):
    def body(rebinding: str) -> str:
        return (
            "def kind(spec: KVCacheSpec) -> str:\n"
            f"    mla = isinstance({tested}, MLAAttentionSpec)\n"
            f"    {rebinding}\n"
            f"    swa = isinstance({tested}, SlidingWindowMLASpec)\n"
            '    return f"{mla}-{swa}"\n'
        )

    assert reported(body("spec = spec.outer")) == [2]
    assert reported(body("specs = spec.outer")) == []  # another name


def test_a_nested_functions_test_is_not_the_enclosing_functions():
    """A function defined inside tests the companion: its own test, which
    runs only if it is called, not one of the enclosing function's."""
    body = (
        "def kind(spec: KVCacheSpec) -> str:\n"
        "    def swa():\n"
        "        return isinstance(spec, SlidingWindowMLASpec)\n"
        "    mla = isinstance(spec, MLAAttentionSpec)\n"
        '    return f"{mla}-{swa()}"\n'
    )
    assert reported(body) == [4]


def test_a_later_comprehension_if_does_not_narrow_an_earlier_one():
    """It runs after the check: the site is deliberate (both tests of the
    element are there), not narrowed."""
    body = """\
        def mla_specs(specs: list[KVCacheSpec]) -> list[KVCacheSpec]:
            return [
                s
                for s in specs
                if isinstance(s, MLAAttentionSpec)
                if not isinstance(s, SlidingWindowMLASpec)
            ]
        """
    assert reason(body) == "deliberate: line 16 tests `s` for SlidingWindowMLASpec"


def test_strict_reports_everything_with_the_reason():
    suppressed, _, _ = CASES["and-conjunct"]
    [finding] = analyse(suppressed, Config(strict=True)).findings
    assert finding.suppressed_by.startswith(
        "narrowed: `isinstance(spec, FullAttentionSpec)`"
    )
    assert finding.fix is not None and finding.fix.applicability == "unsafe"


def test_default_reported_findings_carry_unsafe_fixes_and_no_reason():
    _, twin, _ = CASES["and-conjunct"]
    [finding] = analyse(twin).findings
    assert finding.suppressed_by is None and finding.fix.applicability == "unsafe"
    # A project may promote the rule's fixes; a reported site's fix follows.
    promoted = Config(extend_safe_fixes=("VSL001",))
    [finding] = analyse(twin, promoted).findings
    assert finding.fix.applicability == "safe"


def test_a_suppressed_sites_fix_is_never_promoted():
    suppressed, _, _ = CASES["and-conjunct"]
    promoted = Config(strict=True, extend_safe_fixes=("VSL",))
    [finding] = analyse(suppressed, promoted).findings
    assert finding.fix.applicability == "unsafe"


def test_narrowing_follows_the_trees_hierarchy():
    # In a tree where the companion derives from FullAttentionSpec, a
    # FullAttentionSpec conjunct no longer keeps it out.
    bases = {
        "KVCacheSpec": (),
        "AttentionSpec": ("KVCacheSpec",),
        "FullAttentionSpec": ("AttentionSpec",),
        "MLAAttentionSpec": ("FullAttentionSpec",),
        "SlidingWindowMLASpec": ("FullAttentionSpec",),
    }
    hierarchy = ClassHierarchy.default().with_module(
        KV_CACHE_INTERFACE, bases, "test", "scanned tree"
    )
    suppressed, _, _ = CASES["and-conjunct"]
    assert len(analyse(suppressed, hierarchy=hierarchy).findings) == 1


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "layers.py").write_text(
        HEADER + textwrap.dedent(CASES["and-conjunct"][0])
    )
    (tmp_path / "twin.py").write_text(
        HEADER + textwrap.dedent(CASES["and-conjunct"][1])
    )
    return tmp_path


def test_cli_strict_json_and_explain_suppressions(tree):
    default = json.loads(
        run_cli(
            "check", "--output-format", "concise", "--format", "json", ".", cwd=tree
        ).stdout
    )
    assert [(f["filename"].rsplit("/", 1)[1], f["suppressed_by"]) for f in default] == [
        ("twin.py", None)
    ]
    strict = json.loads(
        run_cli(
            "check",
            "--output-format",
            "concise",
            "--strict",
            "--format",
            "json",
            ".",
            cwd=tree,
        ).stdout
    )
    assert len(strict) == 2
    assert [
        f["suppressed_by"][:9] for f in strict if f["filename"].endswith("layers.py")
    ] == ["narrowed:"]
    out = run_cli(
        "check", "--output-format", "concise", "--explain-suppressions", ".", cwd=tree
    )
    assert "layers.py:12:73: VSL001 not reported: narrowed:" in out.stdout
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nstrict = true\n")
    assert (
        len(
            json.loads(
                run_cli(
                    "check",
                    "--output-format",
                    "concise",
                    "--format",
                    "json",
                    ".",
                    cwd=tree,
                ).stdout
            )
        )
        == 2
    )


def test_fix_leaves_suppressed_sites_alone(tree):
    before = (tree / "layers.py").read_text()
    run_cli("fix", "--output-format", "concise", "--unsafe-fixes", ".", cwd=tree)
    assert (tree / "layers.py").read_text() == before
    assert "SlidingWindowMLASpec)" in (tree / "twin.py").read_text()
    # Strict mode offers their fix as unsafe only, whatever the project promotes.
    run_cli(
        "fix",
        "--output-format",
        "concise",
        "--strict",
        "--extend-safe-fixes",
        "VSL001",
        ".",
        cwd=tree,
    )
    assert (tree / "layers.py").read_text() == before
    run_cli(
        "fix", "--output-format", "concise", "--strict", "--unsafe-fixes", ".", cwd=tree
    )
    assert (
        "(MLAAttentionSpec, SlidingWindowMLASpec)" in (tree / "layers.py").read_text()
    )


GUARDED = """\
def f(spec: KVCacheSpec, other: KVCacheSpec, others: list[KVCacheSpec]) -> bool:
    if not isinstance(spec, FullAttentionSpec):
        return False
    {between}
    return isinstance(spec, MLAAttentionSpec)
"""


@pytest.mark.parametrize(
    "between, row",
    [
        ("spec = other", 5),
        ("spec: KVCacheSpec = other", 5),
        ("spec |= other", 5),
        ("for spec in others: pass", 5),
        ("print(spec := other)", 5),
        ("del spec", 5),
        ("with open(path) as spec: pass", 5),
        ("spec, n = other, 1", 5),
        ("[n, spec] = 1, other", 5),
        ("n, *spec = others", 5),
        ("import spec", 5),
        ("import spec.sub", 5),
        ("try:\n        pass\n    except Exception as spec:\n        pass", 8),
    ],
)
def test_every_way_of_binding_the_value_ends_what_is_known(between, row):
    assert reported(GUARDED.format(between=between)) == [row]


@pytest.mark.parametrize(
    "between",
    [
        "n = 1",
        "spec: KVCacheSpec",  # an annotation binds nothing
        "g = lambda spec: spec",
        "names = [spec for spec in others]",
        "def g(spec): spec = other",
        "other.spec = other",
        "import os.path as spec_module",
    ],
)
def test_bindings_elsewhere_keep_what_is_known(between):
    assert reported(GUARDED.format(between=between)) == []


@pytest.mark.parametrize(
    "body, rows",
    [
        # After `if A or B: return`, neither A nor B holds.
        (
            "if not isinstance(spec, FullAttentionSpec) or flag:\n"
            "        return False\n"
            "    return isinstance(spec, MLAAttentionSpec)",
            [],
        ),
        (
            "if flag or not isinstance(spec, FullAttentionSpec):\n"
            "        return False\n"
            "    return isinstance(spec, MLAAttentionSpec)",
            [],
        ),
        # After `if A and B: return`, nothing is known of either.
        (
            "if not isinstance(spec, FullAttentionSpec) and flag:\n"
            "        return False\n"
            "    return isinstance(spec, MLAAttentionSpec)",
            [4],
        ),
        # Inside `if A and B:` both hold; inside `if A or B:` neither is known.
        (
            "if flag and isinstance(spec, FullAttentionSpec):\n"
            "        return isinstance(spec, MLAAttentionSpec)\n"
            "    return False",
            [],
        ),
        (
            "if isinstance(spec, FullAttentionSpec) and flag:\n"
            "        return isinstance(spec, MLAAttentionSpec)\n"
            "    return False",
            [],
        ),
        (
            "if flag or isinstance(spec, FullAttentionSpec):\n"
            "        return isinstance(spec, MLAAttentionSpec)\n"
            "    return False",
            [3],
        ),
        # A loop whose body ends in `continue` is no early exit for the value.
        (
            "for n in range(3):\n"
            "        continue\n"
            "    return isinstance(spec, MLAAttentionSpec)",
            [4],
        ),
        # A class the tree does not know says nothing about the companion.
        (
            "if isinstance(spec, PluginSpec):\n"
            "        return isinstance(spec, MLAAttentionSpec)\n"
            "    return False",
            [3],
        ),
    ],
)
def test_what_boolean_guards_and_exits_establish(body, rows):
    source = (
        "from plugin import PluginSpec\n\n\n"
        "def f(spec: KVCacheSpec, flag: bool) -> bool:\n    " + body + "\n"
    )
    # Rows counted from the def line (row 1).
    assert [r - 3 for r in reported(source)] == rows


@pytest.mark.parametrize(
    "loop",
    [
        "for self.spec in specs:\n        ok = isinstance(self.spec, MLAAttentionSpec)",
        "for name, (spec, n) in pairs.items():\n        ok = isinstance(spec, MLAAttentionSpec)",
        "for spec[0] in specs:\n        ok = isinstance(spec[0], MLAAttentionSpec)",
    ],
)
def test_unusual_loop_targets_are_reported_not_crashed_on(loop):
    source = "def f(self, specs, pairs, spec):\n    " + loop + "\n"
    assert reported(source) == [3]


def test_assigning_a_collection_ends_what_is_known_of_its_items():
    body = """\
    def f(specs: list[KVCacheSpec], other: list[KVCacheSpec]) -> bool:
        if not isinstance(specs[0], FullAttentionSpec):
            return False
        {between}
        return isinstance(specs[0], MLAAttentionSpec)
    """
    assert reported(body.format(between="specs = other")) == [5]
    assert reported(body.format(between="spec = other")) == []


# Facts through collections built by filtering, and through local aliases
# (each case with its twin that must still be reported).
COLLECTION_CASES = {
    "list comprehension, then a loop": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            full = [s for s in specs if isinstance(s, FullAttentionSpec)]
            for spec in full:
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
        # the collection rebuilt
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            full = [s for s in specs if isinstance(s, FullAttentionSpec)]
            full = list(specs)
            for spec in full:
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
    ),
    "set comprehension, then next(iter(...))": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = {s for s in specs if isinstance(s, FullAttentionSpec)}
            return isinstance(next(iter(full)), MLAAttentionSpec)
        """,
        # filtered on another class, one that covers the companion
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = {s for s in specs if isinstance(s, AttentionSpec)}
            return isinstance(next(iter(full)), MLAAttentionSpec)
        """,
    ),
    "dict comprehension, then its values": (
        """\
        def f(layers: dict[str, KVCacheSpec]) -> bool:
            full = {n: s for n, s in layers.items() if isinstance(s, FullAttentionSpec)}
            return any(isinstance(s, MLAAttentionSpec) for s in full.values())
        """,
        # its keys are not what was filtered
        """\
        def f(layers: dict[KVCacheSpec, str]) -> bool:
            full = {s: n for s, n in layers.items() if isinstance(n, FullAttentionSpec)}
            return any(isinstance(s, MLAAttentionSpec) for s in full)
        """,
    ),
    "dict comprehension, then a subscript": (
        """\
        def f(layers: dict[str, KVCacheSpec], name: str) -> bool:
            full = {n: s for n, s in layers.items() if isinstance(s, FullAttentionSpec)}
            return isinstance(full[name], MLAAttentionSpec)
        """,
        """\
        def f(layers: dict[str, KVCacheSpec], name: str) -> bool:
            full = {n: s for n, s in layers.items() if isinstance(s, FullAttentionSpec)}
            full = dict(layers)
            return isinstance(full[name], MLAAttentionSpec)
        """,
    ),
    "filter(lambda ...), then a subscript": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = list(filter(lambda s: isinstance(s, FullAttentionSpec), specs))
            return isinstance(full[0], MLAAttentionSpec)
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = list(filter(lambda s: isinstance(s, SlidingWindowSpec), specs))
            return isinstance(full[0], MLAAttentionSpec)
        """,
    ),
    "a generator, then a loop": (
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            full = (s for s in specs if not isinstance(s, SlidingWindowSpec))
            for spec in full:
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
        """\
        def f(specs: list[KVCacheSpec]) -> int:
            full = (s for s in specs if not isinstance(s, FullAttentionSpec))
            for spec in full:
                if isinstance(spec, MLAAttentionSpec):
                    return 1
            return 0
        """,
    ),
    "a loop that appends only under a test": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = []
            for spec in specs:
                if isinstance(spec, FullAttentionSpec):
                    full.append(spec)
            return any(isinstance(s, MLAAttentionSpec) for s in full)
        """,
        # appended to under another test
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = []
            for spec in specs:
                if isinstance(spec, FullAttentionSpec):
                    full.append(spec)
                elif isinstance(spec, SlidingWindowSpec):
                    full.append(spec)
            return any(isinstance(s, MLAAttentionSpec) for s in full)
        """,
    ),
    "appends after an early exit, to a set": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = set()
            for spec in specs:
                if not isinstance(spec, FullAttentionSpec):
                    continue
                full.add(spec)
            return any(isinstance(s, MLAAttentionSpec) for s in full)
        """,
        # extended as well: what extend adds is not known
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = set()
            for spec in specs:
                if not isinstance(spec, FullAttentionSpec):
                    continue
                full.add(spec)
            full.update(specs)
            return any(isinstance(s, MLAAttentionSpec) for s in full)
        """,
    ),
    "an alias of the tested value": (
        """\
        def f(spec: KVCacheSpec) -> bool:
            if not isinstance(spec, FullAttentionSpec):
                return False
            layer_spec = spec
            return isinstance(layer_spec, MLAAttentionSpec)
        """,
        # aliased, then rebound
        """\
        def f(spec: KVCacheSpec, other: KVCacheSpec) -> bool:
            if not isinstance(spec, FullAttentionSpec):
                return False
            layer_spec = spec
            layer_spec = other
            return isinstance(layer_spec, MLAAttentionSpec)
        """,
    ),
    "an alias of the collection": (
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = [s for s in specs if isinstance(s, FullAttentionSpec)]
            chosen = full
            return any(isinstance(s, MLAAttentionSpec) for s in chosen)
        """,
        # the source rebound before the alias was taken
        """\
        def f(specs: list[KVCacheSpec]) -> bool:
            full = [s for s in specs if isinstance(s, FullAttentionSpec)]
            full = specs
            chosen = full
            return any(isinstance(s, MLAAttentionSpec) for s in chosen)
        """,
    ),
}


@pytest.mark.parametrize("name", COLLECTION_CASES)
def test_collection_and_alias_case_and_its_reported_twin(name):
    suppressed, twin = COLLECTION_CASES[name]
    assert reported(suppressed) == []
    assert reason(suppressed).startswith("narrowed: `")
    assert len(reported(twin)) == 1, "the twin must still be reported"


def test_a_collection_fact_names_the_filtering_test():
    body = """\
    def f(specs: list[KVCacheSpec]) -> bool:
        full = [s for s in specs if isinstance(s, FullAttentionSpec)]
        return isinstance(full[0], MLAAttentionSpec)
    """
    assert reason(body) == (
        "narrowed: `isinstance(s, FullAttentionSpec)` (line 12) already "
        "excludes SlidingWindowMLASpec"
    )


def test_an_append_outside_any_test_keeps_nothing_known():
    body = """\
    def f(specs: list[KVCacheSpec], extra: KVCacheSpec) -> bool:
        full = []
        for spec in specs:
            if isinstance(spec, FullAttentionSpec):
                full.append(spec)
        full.append(extra)
        return any(isinstance(s, MLAAttentionSpec) for s in full)
    """
    assert reported(body) == [7]


def test_a_shadowed_filter_says_nothing_of_the_elements():
    body = """\
    def f(specs: list[KVCacheSpec], filter) -> bool:
        full = list(filter(lambda s: isinstance(s, FullAttentionSpec), specs))
        return isinstance(full[0], MLAAttentionSpec)
    """
    assert reported(body) == [3]


def test_a_loop_variable_reassigned_between_two_tests_is_another_value():
    """Two tests of the loop's own variable: they test the same value only
    while it is not reassigned between them, although both iterate the same
    collection (which is not reassigned)."""
    body = """\
def f(specs: list[KVCacheSpec], other: KVCacheSpec) -> None:
    for spec in specs:
        if isinstance(spec, MLAAttentionSpec):
            use(spec)
        spec = other
        if isinstance(spec, SlidingWindowMLASpec):
            use(spec)
"""
    assert reported(body) == [3]
    assert reported(body.replace("        spec = other\n", "")) == []


def test_a_check_in_an_asserts_message_is_not_a_loud_failure():
    """Only the assert's test fails loudly; a check in its message decides
    nothing and is reported like any other."""
    body = """\
def f(spec: KVCacheSpec) -> None:
    assert spec is not None, isinstance(spec, MLAAttentionSpec)
"""
    assert reported(body) == [2]
    assert reported(body.replace("spec is not None, ", "")) == []


def test_a_test_of_the_exact_type_of_the_companion_is_deliberate_handling():
    body = """\
def kind(spec: KVCacheSpec) -> str:
    if isinstance(spec, MLAAttentionSpec):
        return "mla"
    if type(spec) is SlidingWindowMLASpec:
        return "swa-mla"
    return "other"
"""
    assert reported(body) == []
    assert reported(body.replace("type(spec) is SlidingWindowMLASpec", "spec")) == [2]
