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


# vllm-ascend mirrors vLLM's pair: AscendMLAAttentionSpec(MLAAttentionSpec)
# and AscendSlidingWindowMLASpec(SlidingWindowMLASpec). Its default findings,
# written out: nine tests against the MLA stand-in, two against vLLM's anchor.
ASCEND = ("vllm-ascend", "0.23.0.post1")
ASCEND_LEFT_OUT = "leaves out AscendSlidingWindowMLASpec"
ASCEND_DEFAULT = [
    f"vllm_ascend/utils.py:1719:38: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    f"vllm_ascend/utils.py:1727:38: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    "vllm_ascend/core/single_type_kv_cache_manager.py:272:34: VSL001 isinstance() check against "
    f"AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    "vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:2168:59: VSL001 isinstance() check "
    "against MLAAttentionSpec leaves out SlidingWindowMLASpec",
    "vllm_ascend/distributed/kv_transfer/kv_pool/cpu_offload/metadata.py:141:37: VSL001 isinstance() check "
    f"against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    "vllm_ascend/worker/model_runner_v1.py:3980:38: VSL001 isinstance() check against "
    f"AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    f"vllm_ascend/worker/pcp_utils.py:1924:42: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    f"vllm_ascend/worker/v2/attn_utils.py:239:34: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    f"vllm_ascend/worker/v2/attn_utils.py:399:50: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    f"vllm_ascend/worker/v2/attn_utils.py:479:47: VSL001 isinstance() check against AscendMLAAttentionSpec {ASCEND_LEFT_OUT}",
    "vllm_ascend/worker/v2/attn_utils.py:479:71: VSL001 isinstance() check against MLAAttentionSpec "
    "leaves out SlidingWindowMLASpec",
]


def _concise(*args: str, cwd: Path) -> list[str]:
    result = run_cli(
        "check", "--no-cache", "--output-format", "concise", *args, ".", cwd=cwd
    )
    assert result.returncode == 1, result.stderr
    return [line for line in result.stdout.splitlines() if ": VSL" in line]


def test_vllm_ascends_stand_ins_are_checked():
    assert _concise(cwd=fetch_release(*ASCEND)) == ASCEND_DEFAULT


def test_vllm_ascends_stand_ins_configured_check_the_same(tmp_path):
    tree = tmp_path / "vllm-ascend"
    shutil.copytree(fetch_release(*ASCEND), tree)
    families = run_cli("families", ".", cwd=tree).stdout
    start = families.index("extend-families = [")
    block = families[start : families.index("\n]\n", start) + 3]
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\n" + block)
    assert _concise(cwd=tree) == ASCEND_DEFAULT
    # One file at a time, as pre-commit passes it, the same.
    alone = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "concise",
        "vllm_ascend/worker/pcp_utils.py",
        cwd=tree,
    )
    assert alone.stdout.splitlines()[0] == ASCEND_DEFAULT[6]


def test_turbo_attns_stand_ins_merge_asserts_are_quiet_by_default():
    tree = fetch_release("turbo-attn", "0.70.1")
    assert _concise(cwd=tree) == [
        "tkv/integrations/vllm/mla_impl.py:817:83: VSL001 isinstance() check against MLAAttentionSpec "
        "leaves out SlidingWindowMLASpec"
    ]
    strict = _concise("--strict", cwd=tree)
    assert strict[1:] == [
        "tkv/integrations/vllm/mla_spec.py:96:34: VSL001 isinstance() check against TkvMLAAttentionSpec leaves "
        "out SlidingWindowMLASpec [strict; assert: a failing assert is loud, not a silent misclassification]",
        "tkv/integrations/vllm/mla_spec.py:170:34: VSL001 isinstance() check against BypassMLAAttentionSpec leaves "
        "out SlidingWindowMLASpec [strict; assert: a failing assert is loud, not a silent misclassification]",
    ]
