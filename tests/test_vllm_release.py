"""The checker over a real vLLM release tree (fetched, never copied here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fetch_vllm, run_cli

# Every test here runs a real release.
pytestmark = pytest.mark.release

# Checks in vLLM 0.33.0 that name MLAAttentionSpec without SlidingWindowMLASpec
# (path, line, code), found by reading the tree: what the syntactic rule
# (--strict) must report.
KNOWN_SITES_0_33_0 = [
    # After `isinstance(spec, AttentionSpec)`: a compressed layer falls through
    # to the non-MLA mapping.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/canonical_mapping.py",
        282,
        "VSL001",
    ),
    # `isinstance(.., FullAttentionSpec) and not isinstance(.., MLAAttentionSpec)`.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/config.py",
        221,
        "VSL001",
    ),
    # `type(spec) is MLAAttentionSpec` in the certifier.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/config.py",
        241,
        "VSL002",
    ),
    # `has_mla = any(isinstance(spec, MLAAttentionSpec) for spec in ...)`.
    ("vllm/v1/core/kv_cache_planning.py", 831, "VSL001"),
]


@pytest.fixture(scope="module")
def vllm_0_33_0():
    return fetch_vllm("0.33.0")


# Verified by reading the code: a SlidingWindowMLASpec reaches these checks
# and is silently treated as non-MLA, so the default mode must keep them.
NEEDS_COMPANION_0_33_0 = [
    # After `if not isinstance(spec, AttentionSpec): return None` only.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/canonical_mapping.py",
        282,
    ),
    # `elif isinstance(layer_spec, AttentionSpec) and not isinstance(MLA)`: a
    # compressed layer gets page_size_padded as if it were a regular one.
    ("vllm/v1/core/kv_cache_planning.py", 397),
]

# Tests on a metadata builder's own spec that backend pairing shows are
# deliberate (read by hand too): the indexer builder (and its 4 subclasses)
# is returned only by the indexer backends, whose layers (the indexer
# caches) build MLAAttentionSpec or CircularBufferSpec; the QSA builder's
# layers likewise. DeepSeek-V4's SlidingWindowMLASpec comes from the sparse
# SWA and MLA attention layers, whose backends return other builders.
PAIRED_0_33_0 = [
    ("vllm/v1/attention/backends/mla/indexer.py", 1014, "DeepseekV32IndexerBackend"),
    ("vllm/v1/attention/backends/mla/indexer.py", 1111, "DeepseekV32IndexerBackend"),
    ("vllm/models/qwen4_exp/common/qsa_cache.py", 615, "QSAStateBackend"),
]


def _check_json(tree, *args):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--format",
        "json",
        *args,
        ".",
        cwd=tree,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _sites(findings, tree):
    return {
        (
            Path(f["filename"]).relative_to(tree).as_posix(),
            f["location"]["row"],
            f["code"],
        )
        for f in findings
    }


@pytest.fixture(scope="module")
def findings_0_33_0(vllm_0_33_0):
    return _check_json(vllm_0_33_0)


@pytest.fixture(scope="module")
def strict_0_33_0(vllm_0_33_0):
    return _check_json(vllm_0_33_0, "--strict")


def test_no_vsl900_on_a_real_tree(findings_0_33_0):
    errors = [f for f in findings_0_33_0 if f["code"] == "VSL900"]
    assert errors == []


def test_known_sites_are_found_in_strict_mode(strict_0_33_0, vllm_0_33_0):
    found = _sites(strict_0_33_0, vllm_0_33_0)
    for site in KNOWN_SITES_0_33_0:
        assert site in found


def test_default_reports_fewer_and_says_why_for_the_rest(
    findings_0_33_0, strict_0_33_0, vllm_0_33_0
):
    default = _sites(findings_0_33_0, vllm_0_33_0)
    strict = _sites(strict_0_33_0, vllm_0_33_0)
    assert default < strict
    for finding in strict_0_33_0:
        site = _sites([finding], vllm_0_33_0).pop()
        assert (site in default) == (finding["suppressed_by"] is None), site
    for path, row in NEEDS_COMPANION_0_33_0:
        assert (path, row, "VSL001") in default


def test_tests_on_a_builders_own_spec_are_left_out_by_pairing(
    findings_0_33_0, strict_0_33_0, vllm_0_33_0
):
    default = _sites(findings_0_33_0, vllm_0_33_0)
    reasons = {
        _sites([f], vllm_0_33_0).pop(): f["suppressed_by"] for f in strict_0_33_0
    }
    for path, row, backend in PAIRED_0_33_0:
        assert (path, row, "VSL001") not in default
        reason = reasons[(path, row, "VSL001")]
        assert reason.startswith("pairing: "), reason
        assert f"only from layers using {backend}" in reason
        assert "those layers build only CircularBufferSpec, MLAAttentionSpec" in reason


def test_fixed_checks_are_not_reported(findings_0_33_0):
    # The NIXL worker carries the PR #45831 fix in this release.
    assert not [
        f for f in findings_0_33_0 if f["filename"].endswith("nixl/base_worker.py")
    ]


def test_hierarchy_comes_from_the_tree(vllm_0_33_0):
    out = run_cli("families", ".", cwd=vllm_0_33_0)
    assert "vllm/v1/kv_cache_interface.py" in out.stdout
    assert "SlidingWindowMLASpec <- SlidingWindowSpec" in out.stdout


SLOW = bool(os.environ.get("VSL_SLOW"))


@pytest.mark.parametrize(
    "version", ["0.33.0", "0.24.0", "0.29.0"] if SLOW else ["0.33.0"]
)
def test_every_file_of_a_release_and_fixing_a_copy(version):
    """The default suite sweeps the files naming an anchor plus 300 others;
    VSL_SLOW=1 sweeps every file of three releases."""
    fetch_vllm(version)  # skips when the release cannot be downloaded
    sample = [] if SLOW else ["--sample", "300"]
    out = subprocess.run(
        [sys.executable, "scripts/release_sweep.py", *sample, version],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"vLLM {version}:" in out.stdout and "0 problems" in out.stdout


def test_slicing_changes_no_finding_on_the_release(vllm_0_33_0, monkeypatch):
    """Every file naming the anchor, analysed as sliced (screened) and whole:
    the slice may drop only what cannot hold a finding."""
    from dataclasses import replace

    from vllm_spec_lint.core import slicing
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.edges.config import load_config
    from vllm_spec_lint.edges.discovery import module_name_for
    from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy

    config = replace(load_config(vllm_0_33_0), strict=True)
    files = [
        p for p in sorted((vllm_0_33_0 / "vllm").rglob("*.py"))
        if b"MLAAttentionSpec" in p.read_bytes()
    ]  # fmt: skip
    hierarchy = load_hierarchy([vllm_0_33_0], [str(p) for p in files], config, [])

    def analyses():
        for path in files:
            yield analyze_source(
                path.read_text(), str(path), config, hierarchy,
                module_name=module_name_for(path),
            )  # fmt: skip

    sliced = list(analyses())
    monkeypatch.setattr(
        slicing, "relevant_source",
        lambda text, tree, screen: slicing.Slice(text, list(range(1, text.count("\n") + 2))),
    )  # fmt: skip
    whole = list(analyses())
    assert len(files) > 20
    assert sum(len(a.findings) for a in whole) > 20
    assert [a.findings for a in sliced] == [a.findings for a in whole]


def test_the_partial_parse_is_cpythons_tree_on_the_release(vllm_0_33_0):
    """Every file the screen passes (naming an anchor or a companion's
    parent): parsed without the statements that name no word the slicer
    looks for, it gives the same slice, its two parts join into CPython's
    tree, and less than half of its text was parsed to decide."""
    import ast

    from vllm_spec_lint.core.analysis import might_have_findings
    from vllm_spec_lint.core.partial_parse import statements_naming
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.core.slicing import Screen, relevant_source
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    config, hierarchy = Config(), ClassHierarchy.default()
    screen = Screen.build(config, hierarchy, None)
    texts = [
        p.read_text()
        for p in sorted((vllm_0_33_0 / "vllm").rglob("*.py"))
        if might_have_findings(p.read_bytes(), config, hierarchy)
    ]
    assert len(texts) > 40
    kept = parsed = 0
    for text in texts:
        partial = statements_naming(text, screen.looked_for)
        assert partial is not None
        kept += len(ast.unparse(partial.tree))
        parsed += len(ast.unparse(ast.parse(text)))
        assert relevant_source(text, partial, screen) == relevant_source(
            text, ast.parse(text), screen
        )
        assert ast.dump(partial.whole(), include_attributes=True) == ast.dump(
            ast.parse(text), include_attributes=True
        )
    assert kept < parsed / 2


REGISTRY = "vllm/v1/core/single_type_kv_cache_manager.py"
SWMLA_REGISTRATION = """\
    KVCacheSpecRegistry.register(
        SlidingWindowMLASpec,
        SlidingWindowManager,
        uniform_type_base_spec=SlidingWindowMLASpec,
    )
"""


def test_the_registry_registering_both_is_not_reported(vllm_0_33_0):
    """vLLM 0.33.0 registers MLAAttentionSpec and SlidingWindowMLASpec with
    KVCacheSpecRegistry: VSL006 has nothing to say, in either mode."""
    for mode in ([], ["--strict"]):
        out = run_cli("check", "--output-format", "concise", "--no-cache", "--exit-zero", *mode, "--select", "VSL005,VSL006",
            "--output-format", "json", REGISTRY, cwd=vllm_0_33_0,
        )  # fmt: skip
        assert json.loads(out.stdout) == []


def test_the_registry_without_the_companion_is_reported_and_fixed(
    vllm_0_33_0, tmp_path
):
    source = (vllm_0_33_0 / REGISTRY).read_text()
    assert SWMLA_REGISTRATION in source
    copy = tmp_path / "single_type_kv_cache_manager.py"
    copy.write_text(source.replace(SWMLA_REGISTRATION, ""))
    out = run_cli("check", "--output-format", "concise", "--no-cache", "--select", "VSL006", "--output-format", "json",
        copy.name, cwd=tmp_path,
    )  # fmt: skip
    found = [(f["location"]["row"], f["message"]) for f in json.loads(out.stdout)]
    assert found == [
        (
            2704,
            "registry KVCacheSpecRegistry registers MLAAttentionSpec "
            "and leaves out SlidingWindowMLASpec",
        )
    ]
    run_cli("fix", "--output-format", "concise", "--no-cache", "--unsafe-fixes", "--select", "VSL006", copy.name,
        cwd=tmp_path,
    )  # fmt: skip
    fixed = copy.read_text()
    assert (
        "    KVCacheSpecRegistry.register(\n"
        "        MLAAttentionSpec, FullAttentionManager, "
        "uniform_type_base_spec=FullAttentionSpec\n"
        "    )\n"
        "    KVCacheSpecRegistry.register(\n"
        "        SlidingWindowMLASpec,\n"
        "        FullAttentionManager,\n"
        "        uniform_type_base_spec=FullAttentionSpec,\n"
        "    )\n"
        "    KVCacheSpecRegistry.register(\n"
        "        RSWASpec, RSWAManager,"
    ) in fixed


@pytest.mark.release
def test_fixing_one_side_of_hisparses_partition_leaves_the_other_reported(tmp_path):
    """vLLM 0.34.0's hisparse/layout.py partitions the layers with two
    comprehensions, both named `spec`. Fixed at line 62 alone (as the
    editor's quick fix does), line 68 is still reported: the other
    comprehension's `spec` is another variable, and the half-fixed
    partition would put DeepSeek-V4's layers in both dicts."""
    import shutil

    tree = fetch_vllm("0.34.0")
    layout = tmp_path / "vllm" / "v1" / "hisparse" / "layout.py"
    layout.parent.mkdir(parents=True)
    shutil.copy(tree / "vllm" / "v1" / "hisparse" / "layout.py", layout)
    shutil.copy(
        tree / "vllm" / "v1" / "kv_cache_interface.py",
        tmp_path / "vllm" / "v1" / "kv_cache_interface.py",
    )
    before = run_cli(
        "check", "--output-format", "concise", "--no-cache", "-q", str(layout),
        cwd=tmp_path,
    )  # fmt: skip
    rows = [line.split(":")[1] for line in before.stdout.splitlines()]
    assert rows[:2] == ["62", "68"]
    lines = layout.read_text().split("\n")
    assert lines[61].strip() == "if isinstance(spec, MLAAttentionSpec)"
    lines[61] = lines[61].replace(
        "MLAAttentionSpec)", "(MLAAttentionSpec, SlidingWindowMLASpec))"
    )
    # The import the fix adds, on a line of its own: rows 62 and 68 move by one.
    text = "\n".join(lines).replace(
        "    MLAAttentionSpec,\n",
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec,\n",
        1,
    )
    layout.write_text(text)
    after = run_cli(
        "check", "--output-format", "concise", "--no-cache", "-q", str(layout),
        cwd=tmp_path,
    )  # fmt: skip
    assert [line.split(":")[1] for line in after.stdout.splitlines()][:1] == ["69"]


def test_the_pairing_explanation_in_the_docs_is_what_check_prints(vllm_0_33_0):
    page = (Path(__file__).parent.parent / "docs" / "precision.md").read_text()
    block = page[page.index("## Backend pairing") :].split("```")[1]
    quoted = block.strip()
    assert quoted.startswith("vllm/v1/attention/backends/mla/indexer.py:1014:43: ")
    out = run_cli("check", "--no-cache", "--explain-suppressions", ".", cwd=vllm_0_33_0)
    assert out.returncode == 1, out.stderr
    assert quoted in out.stdout.splitlines()
