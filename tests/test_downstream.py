"""Real downstream packages (vLLM plugins and connectors), fetched from the
package index: no crash, no VSL900, and fixes in the project's own style."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fetch_release, run_cli

# Every test here runs a real release.
pytestmark = pytest.mark.release

DOWNSTREAM = [
    ("tpu-inference", "0.32.0"),
    ("lmcache", "0.5.6"),
    ("vllm-rbln", "0.12.0"),
]
TPU_FINDING = "tpu_inference/runner/kv_cache_manager.py"
# tpu-inference is formatted with yapf (pep8-based, aligned continuations).
YAPF_STYLE = "[style]\nbased_on_style = pep8\n"


@pytest.mark.parametrize("name, version", DOWNSTREAM)
def test_downstream_package_checks_without_parse_errors(name, version):
    tree = fetch_release(name, version)
    result = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--strict",
        "--output-format",
        "json",
        ".",
        cwd=tree,
    )
    assert result.returncode in (0, 1), result.stderr
    codes = [f["code"] for f in json.loads(result.stdout)]
    assert "VSL900" not in codes


def test_the_tpu_inference_finding_stays():
    tree = fetch_release("tpu-inference", "0.32.0")
    result = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "json",
        ".",
        cwd=tree,
    )
    found = [
        (
            Path(f["filename"]).relative_to(tree).as_posix(),
            f["location"]["row"],
            f["code"],
        )
        for f in json.loads(result.stdout)
    ]
    assert found == [(TPU_FINDING, 1200, "VSL001")]


@pytest.fixture
def tpu_copy(tmp_path: Path) -> Path:
    tree = fetch_release("tpu-inference", "0.32.0")
    copy = tmp_path / "tpu-inference"
    shutil.copytree(tree / "tpu_inference", copy / "tpu_inference")
    return copy


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(
            before.splitlines(), after.splitlines(), lineterm="", n=0
        )
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))
    ]


def test_fix_in_yapf_style_touches_only_the_check_and_the_import(tpu_copy):
    (tpu_copy / ".style.yapf").write_text(YAPF_STYLE)
    target = tpu_copy / TPU_FINDING
    before = target.read_text()
    result = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--no-cache",
        ".",
        cwd=tpu_copy,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    after = target.read_text()
    assert changed_lines(before, after) == [
        "-                                        MLAAttentionSpec, SlidingWindowSpec)",
        "+                                        MLAAttentionSpec, SlidingWindowMLASpec,",
        "+                                        SlidingWindowSpec)",
        "-                if isinstance(spec, MLAAttentionSpec):",
        "+                if isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec)):",
    ]
    # yapf, run on the lines the fix changed, leaves them as they are.
    import_rows = "34-37"
    check_row = "1201-1201"
    again = subprocess.run(
        [str(Path(sys.executable).parent / "yapf"), "--lines", import_rows,
         "--lines", check_row],
        input=after,
        capture_output=True,
        text=True,
        cwd=target.parent,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stdout == after


def test_fix_without_a_formatter_changes_exactly_two_lines(tpu_copy):
    target = tpu_copy / TPU_FINDING
    before = target.read_text()
    result = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--no-cache",
        "--fix-formatter",
        "none",
        ".",
        cwd=tpu_copy,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert changed_lines(before, target.read_text()) == [
        "-                                        MLAAttentionSpec, SlidingWindowSpec)",
        "+                                        MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowSpec)",
        "-                if isinstance(spec, MLAAttentionSpec):",
        "+                if isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec)):",
    ]


def test_lmcache_tests_by_name_are_read_as_mro_tests():
    """LMCache's vLLM integration tests spec classes by name through the MRO
    (so that it imports without vLLM): the model reads each as an
    isinstance-like test of the class it names."""
    import libcst as cst

    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.semantic_model import SemanticModel
    from vllm_spec_lint.model.syntax import walk

    tree = fetch_release("lmcache", "0.5.6")
    text = (tree / "lmcache/integration/vllm/kv_cache_groups.py").read_text()
    module = cst.parse_module(text)
    model = SemanticModel(
        module, text, families=Config().families, hierarchy=ClassHierarchy.default()
    )
    found = [
        (model.line(node), test.kind, test.exact, [r.qualname for r in test.refs])
        for node in walk(module)
        if isinstance(node, (cst.Call, cst.Comparison))
        and (test := model.tests.type_test(node)) is not None
        and test.kind in ("name", "mro")
    ]
    kv = "vllm.v1.kv_cache_interface"
    assert found == [
        (32, "mro", False, [f"{kv}.AttentionSpec"]),
        (80, "mro", False, [f"{kv}.SlidingWindowSpec"]),
        # MambaSpec is not among the default hierarchy's classes.
        (92, "mro", False, [None]),
    ]
