"""Discovering structural twins among the spec classes (families --discover,
check --discover-families), on a tree written here in vLLM's style, and on
every vLLM release from 0.23.0 to 0.33.0."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, fetch_vllm, run_cli
from vllm_spec_lint.model.hierarchy import (
    KV_CACHE_INTERFACE,
    ClassHierarchy,
    read_class_bases,
)
from vllm_spec_lint.model.twins import class_shapes, discover_twins

# A family module where a new ChunkedMLASpec takes over MLA's layout by
# repeating MLAAttentionSpec's own fields and alignment helper.
KV_CACHE_INTERFACE_PY = textwrap.dedent(
    '''\
    from dataclasses import dataclass

    import torch

    from vllm.utils.math_utils import round_up


    @dataclass(frozen=True)
    class KVCacheSpec:
        block_size: int

        @property
        def page_size_bytes(self) -> int:
            raise NotImplementedError


    @dataclass(frozen=True, kw_only=True)
    class AttentionSpec(KVCacheSpec):
        num_kv_heads: int
        head_size: int
        dtype: torch.dtype
        head_size_v: int = None  # type: ignore[assignment]
        page_size_padded: int | None = None

        @property
        def real_page_size_bytes(self) -> int:
            return self.block_size * self.num_kv_heads * self.head_size


    @dataclass(frozen=True, kw_only=True)
    class FullAttentionSpec(AttentionSpec):
        sliding_window: int | None = None
        attention_chunk_size: int | None = None


    def _apply_alignment_padding(spec):
        if spec.alignment is None:
            return
        padded_page_size = round_up(spec.real_page_size_bytes, spec.alignment)
        object.__setattr__(spec, "page_size_padded", padded_page_size)


    @dataclass(frozen=True, kw_only=True)
    class MLAAttentionSpec(FullAttentionSpec):
        cache_dtype_str: str | None = None
        alignment: int | None = None
        model_version: str | None = None
        head_size_v: int = 0

        def __post_init__(self):
            _apply_alignment_padding(self)


    @dataclass(frozen=True, kw_only=True)
    class ChunkedLocalAttentionSpec(AttentionSpec):
        attention_chunk_size: int


    @dataclass(frozen=True, kw_only=True)
    class SlidingWindowSpec(AttentionSpec):
        sliding_window: int


    @dataclass(frozen=True, kw_only=True)
    class SlidingWindowMLASpec(SlidingWindowSpec):
        """Sliding window attention with MLA cache format."""

        cache_dtype_str: str | None = None
        alignment: int | None = None
        model_version: str | None = None
        head_size_v: int = 0

        def __post_init__(self):
            _apply_alignment_padding(self)


    @dataclass(frozen=True, kw_only=True)
    class ChunkedMLASpec(ChunkedLocalAttentionSpec):
        """Chunked local attention with MLA cache format."""

        cache_dtype_str: str | None = None
        alignment: int | None = None
        model_version: str | None = None
        head_size_v: int = 0

        def __post_init__(self):
            _apply_alignment_padding(self)


    @dataclass(frozen=True, kw_only=True)
    class MambaSpec(KVCacheSpec):
        shapes: tuple[tuple[int, ...], ...]
        page_size_padded: int | None = None
    '''
)

CONNECTOR_PY = textwrap.dedent(
    """\
    from vllm.v1.kv_cache_interface import (
        KVCacheSpec,
        MLAAttentionSpec,
        SlidingWindowMLASpec,
    )


    def uses_mla_layout(spec: KVCacheSpec) -> bool:
        return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))
    """
)

MLA = f"{KV_CACHE_INTERFACE}.MLAAttentionSpec"
SWMLA = f"{KV_CACHE_INTERFACE}.SlidingWindowMLASpec"
CHUNKED = f"{KV_CACHE_INTERFACE}.ChunkedMLASpec"
SHARED_FIELDS = "alignment, cache_dtype_str, head_size_v, model_version"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    kci = tmp_path / "vllm" / "v1" / "kv_cache_interface.py"
    kci.parent.mkdir(parents=True)
    kci.write_text(KV_CACHE_INTERFACE_PY)
    connector = tmp_path / "vllm" / "distributed" / "connector.py"
    connector.parent.mkdir(parents=True)
    connector.write_text(CONNECTOR_PY)
    return tmp_path


def twins_of(source: str):
    hierarchy = ClassHierarchy.default().with_module(
        KV_CACHE_INTERFACE, read_class_bases(source), "test", "scanned tree"
    )
    shapes = class_shapes(source, KV_CACHE_INTERFACE)
    return discover_twins(
        shapes, hierarchy.ancestors, f"{KV_CACHE_INTERFACE}.KVCacheSpec"
    )


def test_the_new_twin_is_proposed_with_its_evidence():
    pairs = [(t.anchor, t.companion, t.score) for t in twins_of(KV_CACHE_INTERFACE_PY)]
    # 4 shared fields + 2 for the helper + 1 for the same __post_init__
    # + 1 for the docstring naming "MLA" (none names SlidingWindowMLA)
    assert pairs == [
        (MLA, CHUNKED, 8.0),
        (MLA, SWMLA, 8.0),
        (SWMLA, CHUNKED, 7.0),
    ]
    [chunked] = [t for t in twins_of(KV_CACHE_INTERFACE_PY) if t.anchor == MLA][:1]
    assert chunked.evidence == (
        f"shares fields {SHARED_FIELDS}",
        "both call _apply_alignment_padding in __post_init__",
        "same body: __post_init__",
        "ChunkedMLASpec's docstring names MLA",
    )


def test_a_pair_where_one_derives_from_the_other_is_not_a_twin():
    source = KV_CACHE_INTERFACE_PY.replace(
        "class ChunkedMLASpec(ChunkedLocalAttentionSpec)",
        "class ChunkedMLASpec(MLAAttentionSpec)",
    )
    assert (MLA, CHUNKED) not in {(t.anchor, t.companion) for t in twins_of(source)}


def test_shared_fields_alone_below_the_threshold_are_not_proposed():
    # Two shared fields and nothing else (2 points): FullAttention/SlidingWindow
    # style overlap that vLLM has on purpose.
    source = textwrap.dedent(
        """\
        class KVCacheSpec:
            block_size: int
        class A(KVCacheSpec):
            head_size_v: int = 0
            sliding_window: int | None = None
        class B(KVCacheSpec):
            head_size_v: int = 0
            sliding_window: int = 0
        """
    )
    assert twins_of(source) == []


def test_the_anchor_is_the_class_with_more_subclasses():
    source = KV_CACHE_INTERFACE_PY + textwrap.dedent(
        """\

        class PagedChunkedMLASpec(ChunkedMLASpec):
            pass
        """
    )
    pairs = {(t.anchor, t.companion) for t in twins_of(source)}
    assert (CHUNKED, MLA) in pairs
    assert (MLA, CHUNKED) not in pairs


def test_families_discover_prints_a_table_and_the_entry_to_paste(tree):
    result = run_cli("families", "--discover", str(tree))
    assert result.returncode == 0, result.stderr
    kci = tree / "vllm" / "v1" / "kv_cache_interface.py"
    shared = (
        f"shares fields {SHARED_FIELDS}; "
        "both call _apply_alignment_padding in __post_init__; same body: __post_init__"
    )
    assert result.stdout == (
        "structural twins among the subclasses of "
        "vllm.v1.kv_cache_interface.KVCacheSpec (hierarchy from scanned tree: "
        f"{kci}; proposed at a score of 5 or more):\n"
        "| anchor | companion | score | configured | evidence |\n"
        "|---|---|---|---|---|\n"
        f"| MLAAttentionSpec | ChunkedMLASpec | 8 | no | {shared}; "
        "ChunkedMLASpec's docstring names MLA |\n"
        f"| MLAAttentionSpec | SlidingWindowMLASpec | 8 | yes | {shared}; "
        "SlidingWindowMLASpec's docstring names MLA |\n"
        f"| SlidingWindowMLASpec | ChunkedMLASpec | 7 | no | {shared} |\n"
        "\n"
        "To check them as families, add to [tool.vllm-spec-lint]:\n"
        "extend-families = [\n"
        '  { name = "mlaattentionspec-chunkedmlaspec", '
        'module = "vllm.v1.kv_cache_interface", '
        'members = ["MLAAttentionSpec", "ChunkedMLASpec"] },\n'
        "  # MLAAttentionSpec / SlidingWindowMLASpec: configured already\n"
        '  { name = "slidingwindowmlaspec-chunkedmlaspec", '
        'module = "vllm.v1.kv_cache_interface", '
        'members = ["SlidingWindowMLASpec", "ChunkedMLASpec"] },\n'
        "]\n"
    )


# ChunkedMLASpec in a module of its own, beside the family module.
_CHUNKED_AT = KV_CACHE_INTERFACE_PY.index(
    "@dataclass(frozen=True, kw_only=True)\nclass ChunkedMLASpec"
)
_MAMBA_AT = KV_CACHE_INTERFACE_PY.index(
    "@dataclass(frozen=True, kw_only=True)\nclass MambaSpec"
)
CHUNKED_ELSEWHERE_PY = (
    "from dataclasses import dataclass\n\n"
    "from vllm.v1.kv_cache_interface import (\n"
    "    ChunkedLocalAttentionSpec,\n"
    "    _apply_alignment_padding,\n"
    ")\n\n\n" + KV_CACHE_INTERFACE_PY[_CHUNKED_AT:_MAMBA_AT]
)
KV_CACHE_INTERFACE_WITHOUT_CHUNKED_PY = (
    KV_CACHE_INTERFACE_PY[:_CHUNKED_AT] + KV_CACHE_INTERFACE_PY[_MAMBA_AT:]
)


def test_families_discover_names_twins_in_two_modules_without_an_entry(tmp_path):
    """A family's members live in one module: twins in two get a comment
    in the proposed configuration, not an entry that could not load."""
    v1 = tmp_path / "vllm" / "v1"
    v1.mkdir(parents=True)
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (v1 / "__init__.py").write_text("")
    (v1 / "kv_cache_interface.py").write_text(KV_CACHE_INTERFACE_WITHOUT_CHUNKED_PY)
    (v1 / "chunked.py").write_text(CHUNKED_ELSEWHERE_PY)
    result = run_cli("families", "--discover", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("extend-families = [\n")[1] == (
        "  # MLAAttentionSpec / SlidingWindowMLASpec: configured already\n"
        "  # vllm.v1.kv_cache_interface.MLAAttentionSpec / "
        "vllm.v1.chunked.ChunkedMLASpec: not one module\n"
        "  # vllm.v1.kv_cache_interface.SlidingWindowMLASpec / "
        "vllm.v1.chunked.ChunkedMLASpec: not one module\n"
        "]\n"
    )


def test_families_discover_without_families_has_no_root_class(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nfamilies = []\n")
    result = run_cli("families", "--discover", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        0,
        "structural twins among the subclasses of (no root class) (hierarchy "
        "from built-in defaults; proposed at a score of 5 or more):\n"
        "  none\n",
    )


def test_families_discover_json(tree):
    result = run_cli("families", "--discover", "--format", "json", str(tree))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('[\n  {\n    "anchor": ')  # indented by two
    assert json.loads(result.stdout)[0] == {
        "anchor": MLA,
        "companion": CHUNKED,
        "score": 8.0,
        "evidence": [
            f"shares fields {SHARED_FIELDS}",
            "both call _apply_alignment_padding in __post_init__",
            "same body: __post_init__",
            "ChunkedMLASpec's docstring names MLA",
        ],
    }


def test_check_reports_the_discovered_twin_only_when_asked(tree):
    plain = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "concise",
        str(tree),
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    asked = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--discover-families",
        "--output-format",
        "concise",
        str(tree),
    )
    assert asked.returncode == 1
    assert asked.stdout.splitlines()[0] == (
        f"{tree / 'vllm/distributed/connector.py'}:9:30: VSL001 isinstance() check "
        "against MLAAttentionSpec leaves out ChunkedMLASpec (discovered twin: "
        f"same fields {SHARED_FIELDS})"
    )
    # The fix of a guess is unsafe: not offered as [*], even where the
    # project promotes VSL001's fixes.
    assert "1 unsafe fix available with `--fix --unsafe-fixes`." in asked.stdout
    promoted = run_cli("check", "--output-format", "concise", "--no-cache", "--discover-families", "--extend-safe-fixes",
        "VSL001", "--output-format", "concise", str(tree),
    )  # fmt: skip
    assert "[*]" not in promoted.stdout
    assert "1 unsafe fix available with `--fix --unsafe-fixes`." in promoted.stdout


def test_the_setting_turns_discovery_on(tree):
    (tree / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\ndiscover-families = true\n"
    )
    result = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "json",
        str(tree),
    )
    assert [f["message"][-60:] for f in json.loads(result.stdout)] == [
        f"(discovered twin: same fields {SHARED_FIELDS})"[-60:]
    ]


def test_fix_adds_the_twin_only_with_unsafe_fixes(tree):
    connector = tree / "vllm" / "distributed" / "connector.py"
    safe = run_cli("fix", "--output-format", "concise", "--no-cache", "--discover-families", "--extend-safe-fixes", "VSL001",
        str(tree),
    )  # fmt: skip
    assert safe.returncode == 1
    assert connector.read_text() == CONNECTOR_PY
    unsafe = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--no-cache",
        "--discover-families",
        "--unsafe-fixes",
        str(tree),
    )
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    assert connector.read_text() == textwrap.dedent(
        """\
        from vllm.v1.kv_cache_interface import (
            ChunkedMLASpec,
            KVCacheSpec,
            MLAAttentionSpec,
            SlidingWindowMLASpec,
        )


        def uses_mla_layout(spec: KVCacheSpec) -> bool:
            return isinstance(spec, (MLAAttentionSpec, ChunkedMLASpec, SlidingWindowMLASpec))
        """
    )


def test_families_lists_the_discovered_family_when_on(tree):
    result = run_cli("families", "--discover-families", str(tree))
    assert result.returncode == 0, result.stderr
    assert (
        "discovered discovered:MLAAttentionSpec/ChunkedMLASpec "
        "(vllm.v1.kv_cache_interface)\n"
        "  anchor: MLAAttentionSpec\n"
        "  companion: ChunkedMLASpec\n"
        f"  evidence: same fields {SHARED_FIELDS}\n"
    ) in result.stdout
    assert (
        f"hierarchy (from scanned tree: {tree / 'vllm/v1/kv_cache_interface.py'}):"
        in (result.stdout)
    )


def test_families_json_marks_the_discovered_family(tree):
    result = run_cli(
        "families", "--discover-families", "--output-format", "json", str(tree)
    )
    families = json.loads(result.stdout)["families"]
    assert [(f["name"], f["discovered"]) for f in families] == [
        ("mla", False),
        ("discovered:MLAAttentionSpec/ChunkedMLASpec", True),
    ]


def test_a_plugins_own_spec_class_takes_part(tmp_path):
    # A plugin tree: no family module, its own twin of vLLM's MLA spec.
    plugin = tmp_path / "my_plugin" / "specs.py"
    plugin.parent.mkdir()
    (plugin.parent / "__init__.py").write_text("")
    plugin.write_text(
        textwrap.dedent(
            '''\
            from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec


            def _pad(spec):
                return spec


            class PluginMLASpec(FullAttentionSpec):
                cache_dtype_str: str | None = None
                alignment: int | None = None

                def __post_init__(self):
                    _pad(self)


            class PluginWindowMLASpec(FullAttentionSpec):
                """A window over the MLA layout of PluginMLA."""

                cache_dtype_str: str | None = None
                alignment: int | None = None

                def __post_init__(self):
                    _pad(self)
            '''
        )
    )
    result = run_cli("families", "--discover", "--format", "json", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert [(t["anchor"], t["companion"]) for t in json.loads(result.stdout)] == [
        ("my_plugin.specs.PluginMLASpec", "my_plugin.specs.PluginWindowMLASpec")
    ]


RELEASES = [f"0.{minor}.0" for minor in range(23, 34)]


@pytest.mark.release
@pytest.mark.parametrize("version", RELEASES)
def test_every_release_proposes_the_pr_45831_pair_first(version):
    tree = fetch_vllm(version)
    kci = tree / "vllm" / "v1" / "kv_cache_interface.py"
    result = run_cli("families", "--discover", "--format", "json", str(kci))
    assert result.returncode == 0, result.stderr
    pairs = [(t["anchor"], t["companion"]) for t in json.loads(result.stdout)]
    # README, "Discovered families": one pair on every release.
    assert pairs == [(MLA, SWMLA)]


@pytest.mark.release
def test_discovery_adds_no_finding_on_vllm_0_33():
    tree = fetch_vllm("0.33.0")
    plain = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "json",
        str(tree),
    )
    discovering = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--discover-families",
        "--output-format",
        "json",
        str(tree),
    )
    assert plain.returncode == discovering.returncode == 1
    assert discovering.stdout == plain.stdout


TWIN_BY_ANNOTATIONS = textwrap.dedent(
    """\
    class KVCacheSpec:
        block_size: int


    def _pad(spec):
        return spec


    class LayoutSpec(KVCacheSpec):
        cache_layout: KVCacheLayout = KVCacheLayout.NHD
        scale_dtype: torch.dtype | None = None
        alignment: int | None = None
        model_version: str | None = None
        padded: bool = False

        def __post_init__(self):
            _pad(self)


    class TwinSpec(KVCacheSpec):
        layout: KVCacheLayout = KVCacheLayout.NHD
        dtype_of_scales: torch.dtype | None = None
        alignment: int | None = None
        model_version: str | None = None
        compact: bool = False

        def __post_init__(self):
            _pad(self)
            self.check()
    """
)


def test_same_annotations_under_other_names_count_half():
    # 2 shared fields + 2 for the helper + 0.5 each for KVCacheLayout and
    # torch.dtype under other names (bool is a builtin: not counted) = 5.
    [twin] = twins_of_module(TWIN_BY_ANNOTATIONS)
    assert (twin.anchor, twin.companion, twin.score) == (
        "m.LayoutSpec",
        "m.TwinSpec",
        5.0,
    )
    assert twin.evidence == (
        "shares fields alignment, model_version",
        "same annotations under other names: cache_layout/layout, "
        "scale_dtype/dtype_of_scales",
        "both call _pad in __post_init__",
    )


def test_without_the_annotations_the_pair_is_below_the_threshold():
    source = TWIN_BY_ANNOTATIONS.replace(
        "dtype_of_scales: torch.dtype | None = None", "dtype_of_scales: int = 0"
    )
    assert twins_of_module(source) == []


def twins_of_module(source: str):
    from vllm_spec_lint.model.hierarchy import read_class_bases

    hierarchy = ClassHierarchy.default().with_module(
        "m", read_class_bases(source), "m.py", "scanned tree"
    )
    return discover_twins(
        class_shapes(source, "m"), hierarchy.ancestors, "m.KVCacheSpec"
    )


def test_only_twins_of_one_module_whose_anchor_is_no_companion_join():
    from vllm_spec_lint.model.hierarchy import Family
    from vllm_spec_lint.model.twins import Twin, families_from

    configured = (Family("mla", "m", ("A", "B")),)
    twins = [
        Twin("m.A", "m.B", 8.0, ("shares fields x, y",)),  # configured already
        Twin("m.B", "m.C", 7.0, ("shares fields x, y",)),  # anchor is a companion
        Twin("m.A", "other.D", 6.0, ("shares fields x, y",)),  # two modules
        Twin("m.A", "m.C", 6.0, ("shares fields x, y", "both call f")),
    ]
    assert families_from(twins, configured) == (
        Family("discovered:A/C", "m", ("A", "C"), evidence="same fields x, y"),
    )


def test_a_twin_whose_anchor_is_a_companion_of_either_kind_does_not_join():
    """B is a companion by the settings only, Y only as another twin's."""
    from vllm_spec_lint.model.hierarchy import Family
    from vllm_spec_lint.model.twins import Twin, families_from

    configured = (Family("mla", "m", ("A", "B")),)
    evidence = ("shares fields x, y",)
    twins = [
        Twin("m.B", "m.C", 7.0, evidence),
        Twin("m.X", "m.Y", 7.0, evidence),
        Twin("m.Y", "m.Z", 6.0, evidence),
    ]
    assert families_from(twins, configured) == (
        Family("discovered:X/Y", "m", ("X", "Y"), evidence="same fields x, y"),
    )


SCORING = textwrap.dedent(
    '''\
    class KVCacheSpec:
        block_size: int


    def _pad(spec):
        return spec


    class ASpec(KVCacheSpec):
        """The A layout."""

        kind: KVCacheLayout = KVCacheLayout.NHD
        scale: torch.dtype | None = None
        extra: torch.dtype = torch.float16

        def merge(cls, specs):
            """Merge As."""
            return cls(specs[0].block_size, specs[1])

        @property
        def prefix_cacheable(self) -> bool:
            return False

        def check(self):
            _pad(1)


    class BSpec(KVCacheSpec):
        """Like the A layout, with B."""

        layout: KVCacheLayout = KVCacheLayout.NHD
        scale_dtype: torch.dtype | None = None
        other: torch.dtype = torch.float32

        def merge(cls, specs):
            """Merge Bs: a docstring of its own."""
            return cls(specs[0].block_size, specs[1])

        @property
        def prefix_cacheable(self) -> bool:
            return False

        def check(self):
            _pad(1)
    '''
)


def test_what_counts_and_what_does_not():
    from vllm_spec_lint.model.twins import THRESHOLD

    # No shared field and no shared helper: never proposed, whatever the score.
    assert twins_of_module(SCORING) == []
    shapes = {s.name: s for s in class_shapes(SCORING, "m")}
    a, b = shapes["ASpec"], shapes["BSpec"]
    # Docstrings are not part of a body; `return <constant>` bodies are None.
    assert a.methods["merge"] == b.methods["merge"]
    assert a.methods["prefix_cacheable"] is None
    # A helper called without self is not one of the class's helpers.
    assert a.helpers == {}
    assert a.defaults == {
        "kind": "KVCacheLayout.NHD",
        "scale": "None",
        "extra": "torch.float16",
    }
    assert THRESHOLD == 5.0


def test_scores_add_up_from_each_signal():
    from vllm_spec_lint.model.twins import _compare

    shapes = {s.name: s for s in class_shapes(SCORING, "m")}
    score, evidence, shared = _compare(shapes["ASpec"], shapes["BSpec"])
    # kind/layout and scale/scale_dtype (0.5 each; extra/other differ in
    # default), the bodies of check and merge (1 each; prefix_cacheable only
    # returns a constant), BSpec's docstring names A (1); check calls _pad
    # without self, so no helper.
    assert (score, shared) == (4.0, 0)
    assert evidence == [
        "same annotations under other names: kind/layout, scale/scale_dtype",
        "same body: check, merge",
        "BSpec's docstring names A",
    ]


def test_hierarchy_sources_are_described_with_their_origin():
    hierarchy = ClassHierarchy.default()
    assert hierarchy.described_sources() == "built-in defaults"
    read = hierarchy.with_module(
        KV_CACHE_INTERFACE, {"X": ()}, "/v/kv.py", "vllm-source"
    )
    assert read.described_sources() == "vllm-source: /v/kv.py"
    # A plugin's module adds to vLLM's classes; the defaults are still used.
    other = hierarchy.with_module("m", {"X": ()}, "/p/m.py", "scanned tree")
    assert other.described_sources() == "built-in defaults, scanned tree: /p/m.py"
    plugin = hierarchy.with_classes(
        {"p.Mine": (f"{KV_CACHE_INTERFACE}.MLAAttentionSpec",)},
        "1 class",
        "scanned files",
    )
    assert plugin.described_sources() == "built-in defaults, scanned files: 1 class"
    assert plugin.bases["p.Mine"] == (f"{KV_CACHE_INTERFACE}.MLAAttentionSpec",)
    assert plugin.bases[f"{KV_CACHE_INTERFACE}.MLAAttentionSpec"] == (
        f"{KV_CACHE_INTERFACE}.FullAttentionSpec",
    )
    assert plugin.origins == ("built-in defaults", "scanned files")


def with_shared_fields(count: int) -> str:
    fields = "".join(f"    shared_{i}: int = 0\n" for i in range(count))
    return SCORING.replace(
        '    """The A layout."""\n', '    """The A layout."""\n' + fields
    ).replace(
        '    """Like the A layout, with B."""\n',
        '    """Like the A layout, with B."""\n' + fields,
    )


def test_a_pair_needs_two_shared_fields_or_a_helper():
    # 4 points + 1 shared field = 5, but one field alone is not enough.
    assert twins_of_module(with_shared_fields(1)) == []
    [twin] = twins_of_module(with_shared_fields(2))
    assert (twin.anchor, twin.companion, twin.score) == ("m.ASpec", "m.BSpec", 6.0)


@pytest.mark.parametrize(
    "output_format, golden",
    [("dot", "twins-graph.dot"), ("mermaid", "twins-graph.mmd")],
)
def test_graphs_draw_families_and_discovered_twins(tree, output_format, golden):
    """Written out in tests/golden: fills for anchors and companions, a
    dashed edge per configured family and per discovered twin with its
    score."""
    (tree / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nextend-families = [{ name = 'mamba', "
        "module = 'vllm.v1.kv_cache_interface', "
        "members = ['FullAttentionSpec', 'SlidingWindowSpec'] }]\n"
    )
    result = run_cli(
        "families", "--discover", "--output-format", output_format, ".", cwd=tree
    )
    assert result.stdout == (REPO / "tests" / "golden" / golden).read_text()


GUESSED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
)


@pytest.mark.parametrize(
    "evidence, message, applicability",
    [
        (
            "same fields a, b",
            "isinstance() check against MLAAttentionSpec leaves out ChunkedMLASpec "
            "(discovered twin: same fields a, b)",
            "unsafe",
        ),
        (
            "",
            "isinstance() check against MLAAttentionSpec leaves out ChunkedMLASpec",
            "safe",
        ),
    ],
    ids=["discovered", "configured"],
)
def test_a_discovered_family_says_why_and_its_fix_is_never_promoted(
    evidence, message, applicability
):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.model.hierarchy import Family

    family = Family(
        "chunked",
        "vllm.v1.kv_cache_interface",
        ("MLAAttentionSpec", "ChunkedMLASpec"),
        evidence,
    )
    config = Config(
        families=Config().families + (family,), extend_safe_fixes=("VSL001",)
    )
    [finding] = analyze_source(GUESSED, "guess.py", config).findings
    assert (finding.code, finding.message, finding.fix.applicability) == (
        "VSL001",
        message,
        applicability,
    )


def test_stdin_discovers_families_as_the_file_does(tree):
    connector = tree / "vllm" / "distributed" / "connector.py"
    piped = run_cli(
        "check", "--output-format", "concise", "--discover-families",
        "--stdin-filename", str(connector), "-",
        input=connector.read_text(), cwd=tree,
    )  # fmt: skip
    assert piped.stdout.splitlines()[0] == (
        f"{connector}:9:30: VSL001 isinstance() check against MLAAttentionSpec "
        f"leaves out ChunkedMLASpec (discovered twin: same fields {SHARED_FIELDS})"
    )


def test_twins_outside_the_spec_hierarchy_are_not_proposed(tree):
    kci = tree / "vllm" / "v1" / "kv_cache_interface.py"
    # Two configuration classes as alike as the MLA specs, not spec classes.
    config_class = (
        "\n\n@dataclass(frozen=True, kw_only=True)\n"
        "class {}:\n"
        "    cache_dtype_str: str | None = None\n"
        "    alignment: int | None = None\n"
        "    model_version: str | None = None\n"
        "    head_size_v: int = 0\n"
        "\n"
        "    def __post_init__(self):\n"
        "        _apply_alignment_padding(self)\n"
    )
    kci.write_text(
        kci.read_text()
        + config_class.format("CacheConfigA")
        + config_class.format("CacheConfigB")
    )
    result = run_cli("families", "--discover", "--format", "json", str(tree))
    assert [(t["anchor"], t["companion"]) for t in json.loads(result.stdout)] == [
        (MLA, CHUNKED),
        (MLA, SWMLA),
        (SWMLA, CHUNKED),
    ]


def _twin_classes(a_calls: tuple[str, ...], b_calls: tuple[str, ...]) -> str:
    """Two classes sharing three fields, each calling ``_pad`` with ``self``
    from the methods named."""

    def spec_class(name: str, methods: tuple[str, ...]) -> str:
        return (
            f"class {name}(KVCacheSpec):\n"
            "    alignment: int = 0\n"
            "    cache_dtype_str: str = ''\n"
            "    model_version: str = ''\n"
            + "".join(f"    def {m}(self):\n        _pad(self)\n" for m in methods)
            + "\n"
        )

    return (
        "class KVCacheSpec:\n    block_size: int\n\n"
        "def _pad(spec):\n    return spec\n\n"
        + spec_class("A", a_calls)
        + spec_class("B", b_calls)
    )


@pytest.mark.parametrize(
    "a_calls, b_calls, evidence",
    [
        (
            ("__post_init__", "merge"),
            ("__post_init__", "merge"),
            (
                "both call _pad in __post_init__, merge",
                "same body: __post_init__, merge",
            ),
        ),
        (("__post_init__",), ("merge",), ("both call _pad",)),
        (
            ("__post_init__", "merge"),
            ("merge",),
            ("both call _pad in merge", "same body: merge"),
        ),
    ],
)
def test_a_shared_helper_is_named_with_the_methods_both_call_it_from(
    a_calls, b_calls, evidence
):
    [twin] = twins_of_module(_twin_classes(a_calls, b_calls))
    fields = "shares fields alignment, cache_dtype_str, model_version"
    assert twin.evidence[0] == fields
    assert twin.evidence[1:] == evidence
