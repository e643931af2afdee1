"""Codemods through our CLI and through libcst's own runner, and the NIXL fix
of vLLM PR #45831 replayed on a real release."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import (
    BAD,
    FIXED,
    REPO,
    failing_disk,
    fake_black,
    fetch_vllm,
    run_cli,
    write_covering_hierarchy,
    write_family_module,
)
from vllm_spec_lint.faces.codemods import NIXL_WORKER

LIBCST_CONFIG = "modules:\n- 'vllm_spec_lint.faces'\nrepo_root: '.'\nformatter: []\n"


@pytest.fixture
def example_tree(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "examples", tree)
    return tree


def run_libcst(codemod: str, tree, *paths: str):
    (tree / ".libcst.codemod.yaml").write_text(LIBCST_CONFIG)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "--no-format",
            codemod,
            *paths,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_add_sliding_window_mla_codemod_summary(example_tree):
    out = run_cli("codemod", "add-sliding-window-mla", ".", cwd=example_tree)
    assert out.returncode == 0, out.stderr
    assert out.stderr.endswith(
        "11 files checked, 2 changed, 5 findings fixed, 0 failures "
        "(VSL001: 2, VSL002: 1, VSL003: 1, VSL004: 1)\n"
    )
    # A codemod is asked for: every fix, the unsafe VSL002 one too.
    remaining = run_cli("check", "--output-format", "concise", ".", cwd=example_tree)
    assert (remaining.returncode, remaining.stdout) == (0, "All checks passed!\n")


def test_add_sliding_window_mla_codemod_diff_writes_nothing(example_tree):
    before = {p: p.read_bytes() for p in example_tree.rglob("*.py")}
    out = run_cli("codemod", "add-sliding-window-mla", "--diff", ".", cwd=example_tree)
    assert out.returncode == 1  # something would change, as `check --diff`
    assert "+    SlidingWindowMLASpec," in out.stdout
    assert "2 would change" in out.stderr
    assert {p: p.read_bytes() for p in example_tree.rglob("*.py")} == before


def test_same_result_through_libcsts_runner(example_tree, tmp_path):
    ours = tmp_path / "ours"
    shutil.copytree(example_tree, ours)
    assert run_cli("codemod", "add-sliding-window-mla", ".", cwd=ours).returncode == 0
    out = run_libcst("codemods.AddSlidingWindowMLA", example_tree, ".")
    assert out.returncode == 0, out.stderr
    assert "Transformed 2 files successfully." in out.stderr
    for path in ours.rglob("*.py"):
        assert (example_tree / path.relative_to(ours)).read_bytes() == path.read_bytes()


def test_nixl_codemod_applies_already_applied_and_not_found(example_tree):
    worker = example_tree / NIXL_WORKER
    out = run_cli("codemod", "nixl-mla-region", ".", cwd=example_tree)
    assert out.returncode == 0 and "applied" in out.stderr
    text = worker.read_text()
    assert "    SlidingWindowMLASpec,\n)" in text
    assert (
        "isinstance(\n                layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n            )"
        in text
    )
    # Nothing else in the tree changed: the layout module still has findings.
    assert (
        "VSL004"
        in run_cli("check", "--output-format", "concise", ".", cwd=example_tree).stdout
    )
    again = run_cli("codemod", "nixl-mla-region", str(worker), cwd=example_tree)
    assert again.returncode == 0 and "already applied" in again.stderr
    assert worker.read_text() == text
    worker.write_text(text.replace("def register_kv_caches", "def register_caches"))
    moved = run_cli("codemod", "nixl-mla-region", ".", cwd=example_tree)
    assert moved.returncode == 2 and "vLLM may have moved this code" in moved.stderr


# Besides the PR's site, two more MLA-only checks the codemod must leave alone:
# one in another method, one with another target in the same method.
WORKER_WITH_MORE_CHECKS = """\
import torch

from vllm.v1.kv_cache_interface import (
    AttentionSpec,
    MLAAttentionSpec,
)


class NixlWorker:
    def __init__(self, layer_specs: dict[str, AttentionSpec]):
        self.layer_specs = layer_specs
        self.region_is_mla: list[bool] = []

    def get_block_len(self, layer_spec: AttentionSpec) -> int:
        is_mla_region = isinstance(layer_spec, MLAAttentionSpec)
        if is_mla_region:
            return layer_spec.page_size_bytes
        return 2 * layer_spec.page_size_bytes

    def register_kv_caches(self, kv_caches: dict[str, torch.Tensor]):
        for layer_name in kv_caches:
            layer_spec = self.layer_specs[layer_name]
            use_mla = isinstance(layer_spec, MLAAttentionSpec)
            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)
            self.region_is_mla.append(is_mla_region and use_mla)
"""


def test_nixl_codemod_changes_the_prs_site_and_nothing_else(tmp_path):
    worker = tmp_path / "base_worker.py"
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    out = run_cli("codemod", "nixl-mla-region", str(worker))
    assert out.returncode == 0, out.stderr
    assert worker.read_text() == WORKER_WITH_MORE_CHECKS.replace(
        "    MLAAttentionSpec,\n)",
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec,\n)",
    ).replace(
        # Indented as in register_kv_caches' loop only.
        "            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n",
        "            is_mla_region = isinstance(\n"
        "                layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "            )\n",
    )
    # The two other checks are still there, at their rows (strict: the fixed
    # region now covers the companion, so `use_mla` reads as deliberate).
    left = run_cli(
        "check",
        "--output-format",
        "concise",
        "--strict",
        "--output-format",
        "json",
        str(worker),
    )
    assert [(f["code"], f["location"]["row"]) for f in json.loads(left.stdout)] == [
        ("VSL001", 16),
        ("VSL001", 24),
    ]


def test_nixl_codemod_through_libcsts_runner(example_tree):
    out = run_libcst("codemods.NixlMlaRegion", example_tree, ".")
    assert out.returncode == 0, out.stderr
    assert "Transformed 1 files successfully." in out.stderr
    assert (
        "(MLAAttentionSpec, SlidingWindowMLASpec)"
        in (example_tree / NIXL_WORKER).read_text()
    )
    # The layout module is not the NIXL worker: skipped, unchanged.
    assert (example_tree / "vllm/v1/core/layout.py").read_bytes() == (
        REPO / "examples/vllm/v1/core/layout.py"
    ).read_bytes()


# -- vLLM PR #45831 on a real release ------------------------------------------


def _undo_pr_45831(text: str) -> str:
    assert text.count("    SlidingWindowMLASpec,\n") >= 1
    fixed_check = (
        "                is_mla_region = isinstance(\n"
        "                    layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "                )\n"
    )
    assert fixed_check in text
    text = text.replace("    SlidingWindowMLASpec,\n", "", 1)
    return text.replace(
        fixed_check,
        "                is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n",
    )


@pytest.fixture(scope="module")
def pre_fix_tree(tmp_path_factory):
    release = fetch_vllm("0.24.0")
    tree = tmp_path_factory.mktemp("vllm-0.24.0") / "checkout"
    shutil.copytree(release, tree)
    worker = tree / NIXL_WORKER
    worker.write_text(_undo_pr_45831(worker.read_text()))
    return release, tree


@pytest.mark.release
def test_check_flags_the_pre_fix_line(pre_fix_tree):
    _, tree = pre_fix_tree
    out = run_cli("check", "--output-format", "concise", NIXL_WORKER, cwd=tree)
    assert out.returncode == 1
    assert f"{NIXL_WORKER}:1063:" in out.stdout and "VSL001" in out.stdout


@pytest.mark.release
def test_nixl_codemod_reproduces_the_release_file(pre_fix_tree, tmp_path):
    release, tree = pre_fix_tree
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    out = run_cli("codemod", "nixl-mla-region", str(copy))
    assert out.returncode == 0, out.stderr
    assert (copy / NIXL_WORKER).read_bytes() == (release / NIXL_WORKER).read_bytes()


@pytest.mark.release
def test_fix_alone_reproduces_the_release_file(pre_fix_tree, tmp_path):
    release, tree = pre_fix_tree
    worker = tmp_path / "base_worker.py"
    shutil.copy(tree / NIXL_WORKER, worker)
    out = run_cli("fix", "--output-format", "concise", "--unsafe-fixes", str(worker))
    assert out.returncode == 0, out.stderr
    assert worker.read_bytes() == (release / NIXL_WORKER).read_bytes()


# -- the codemod classes through libcst's own API, in this process -------------


def _transform(command_class, text: str, filename: str | None):
    from libcst.codemod import CodemodContext, transform_module

    context = CodemodContext(filename=filename)
    return transform_module(command_class(context), text)


def test_add_sliding_window_mla_transforms_skips_and_fails(tmp_path, monkeypatch):
    from libcst.codemod import TransformFailure, TransformSkip, TransformSuccess

    from vllm_spec_lint.faces.codemods import AddSlidingWindowMLA

    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    path = tmp_path / "w.py"
    result = _transform(AddSlidingWindowMLA, source, str(path))
    assert isinstance(result, TransformSuccess)
    assert result.code == (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    skipped = _transform(AddSlidingWindowMLA, result.code, str(path))
    assert isinstance(skipped, TransformSkip)
    assert skipped.skip_description == "nothing to fix"
    # No file name (code from elsewhere): the same fix.
    assert _transform(AddSlidingWindowMLA, source, None).code == result.code
    # A formatter that breaks the code: the file fails, with the reason.
    fake_black(monkeypatch, tmp_path, 'cat > /dev/null\necho "def (:"\n')
    # Black named in the settings, or found as the project's formatter.
    for name, settings in [
        ("named", '[tool.vllm-spec-lint]\nfix-formatter = "black"\n'),
        ("found", "[tool.black]\nline-length = 88\n"),
    ]:
        project = tmp_path / name  # settings are read once per folder
        project.mkdir()
        (project / "pyproject.toml").write_text(settings)
        failed = _transform(AddSlidingWindowMLA, source, str(project / "w.py"))
        assert isinstance(failed, TransformFailure), name
        assert str(failed.error) == "the fixed code does not parse; not written"


def test_nixl_codemod_class_skips_other_files_and_reports_moved_code(tmp_path):
    from libcst.codemod import TransformFailure, TransformSkip, TransformSuccess

    from vllm_spec_lint.faces.codemods import NixlMlaRegion

    worker = tmp_path / NIXL_WORKER
    text = WORKER_WITH_MORE_CHECKS
    other = _transform(NixlMlaRegion, text, str(tmp_path / "other.py"))
    assert isinstance(other, TransformSkip)
    assert other.skip_description == f"not the NIXL worker ({NIXL_WORKER})"
    # Another connector's worker of the same name, and a package whose name
    # only ends in "vllm": skipped too.
    for elsewhere in (
        NIXL_WORKER.replace("/nixl/", "/mooncake/"),
        "myvllm/" + NIXL_WORKER.removeprefix("vllm/"),
    ):
        skipped = _transform(NixlMlaRegion, text, str(tmp_path / elsewhere))
        assert isinstance(skipped, TransformSkip), elsewhere
    assert isinstance(_transform(NixlMlaRegion, text, NIXL_WORKER), TransformSuccess)
    applied = _transform(NixlMlaRegion, text, str(worker))
    assert isinstance(applied, TransformSuccess)
    assert "layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n" in applied.code
    again = _transform(NixlMlaRegion, applied.code, str(worker))
    assert isinstance(again, TransformSkip)
    assert again.skip_description == "already applied"
    moved = _transform(
        NixlMlaRegion,
        text.replace("register_kv_caches", "register_caches"),
        str(worker),
    )
    assert isinstance(moved, TransformFailure)
    assert "vLLM may have moved this code" in str(moved.error)


def test_nixl_codemod_class_reads_the_settings_of_the_workers_project(tmp_path):
    """Through libcst's face too: the worker's project (line length 120)
    keeps the fixed check on one line."""
    from libcst.codemod import TransformSuccess

    from vllm_spec_lint.faces.codemods import NixlMlaRegion

    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nline-length = 120\n"
    )
    worker = tmp_path / NIXL_WORKER
    applied = _transform(NixlMlaRegion, WORKER_WITH_MORE_CHECKS, str(worker))
    assert isinstance(applied, TransformSuccess)
    assert (
        "            is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, "
        "SlidingWindowMLASpec))\n" in applied.code
    )


def test_nixl_codemod_cli_reports_unreadable_and_unwritable_workers_and_goes_on(
    tmp_path,
):
    missing = tmp_path / "missing"
    missing.mkdir()
    readonly = tmp_path / "readonly" / "base_worker.py"
    readonly.parent.mkdir()
    readonly.write_text(WORKER_WITH_MORE_CHECKS)
    readonly.chmod(0o444)
    good = tmp_path / "good" / "base_worker.py"
    good.parent.mkdir()
    good.write_text(WORKER_WITH_MORE_CHECKS)
    absent = tmp_path / "absent.py"
    undecodable = tmp_path / "undecodable" / "base_worker.py"
    undecodable.parent.mkdir()
    undecodable.write_bytes(b"# MLAAttentionSpec \xff\xfe\n")
    out = run_cli(
        "codemod", "nixl-mla-region",
        str(missing), str(absent), str(undecodable), str(readonly), str(good),
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"error: {missing}: no NIXL worker there (looked for {missing / NIXL_WORKER})",
        f"error: {absent}: cannot read the NIXL worker: No such file or directory",
        f"error: {undecodable}: cannot read the NIXL worker: 'utf-8' codec can't "
        "decode byte 0xff in position 19: invalid start byte",
        f"error: {readonly}: not written: the file is read-only",
        f"{good}: applied",
    ]
    assert readonly.read_text() == WORKER_WITH_MORE_CHECKS
    assert "(MLAAttentionSpec, SlidingWindowMLASpec)" in good.read_text()


def test_a_nixl_worker_on_a_failing_disk_is_an_error_and_left_whole(
    tmp_path, monkeypatch, capsys
):
    from vllm_spec_lint.faces import cli

    worker = tmp_path / "base_worker.py"
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    failing_disk(monkeypatch)
    assert cli.main(["codemod", "nixl-mla-region", str(worker)]) == 2
    assert capsys.readouterr().err == (
        f"error: {worker}: not written: [Errno 5] Input/output error\n"
    )
    assert worker.read_text() == WORKER_WITH_MORE_CHECKS
    assert [p.name for p in tmp_path.iterdir()] == ["base_worker.py"]


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("absent", "No such file or directory"),
        ("pipe", "not a regular file: {path}"),
        (
            "undecodable",
            "'utf-8' codec can't decode byte 0xff in position 19: invalid start byte",
        ),
    ],
)
def test_a_nixl_worker_that_cannot_be_read_alone_exits_2(tmp_path, kind, reason):
    path = tmp_path / "base_worker.py"
    if kind == "pipe":
        os.mkfifo(path)
    elif kind == "undecodable":
        path.write_bytes(b"# MLAAttentionSpec \xff\xfe\n")
    out = run_cli("codemod", "nixl-mla-region", str(path))
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: {path}: cannot read the NIXL worker: {reason.format(path=path)}\n"
    )


def test_nixl_codemod_diff(tmp_path):
    worker = tmp_path / "base_worker.py"
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    out = run_cli("codemod", "nixl-mla-region", "--diff", str(worker))
    assert out.returncode == 1
    assert out.stdout == (
        f"--- {worker}\n+++ {worker}\n"
        "@@ -3,6 +3,7 @@\n"
        " from vllm.v1.kv_cache_interface import (\n"
        "     AttentionSpec,\n"
        "     MLAAttentionSpec,\n"
        "+    SlidingWindowMLASpec,\n"
        " )\n \n \n"
        "@@ -21,5 +22,7 @@\n"
        "         for layer_name in kv_caches:\n"
        "             layer_spec = self.layer_specs[layer_name]\n"
        "             use_mla = isinstance(layer_spec, MLAAttentionSpec)\n"
        "-            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
        "+            is_mla_region = isinstance(\n"
        "+                layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "+            )\n"
        "             self.region_is_mla.append(is_mla_region and use_mla)\n"
    )
    assert worker.read_text() == WORKER_WITH_MORE_CHECKS


def test_nixl_codemod_lays_out_by_the_settings_of_the_workers_project(tmp_path):
    """Run from outside the project: its line length, not the working
    folder's default, decides that the fixed check stays on one line."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nline-length = 120\n"
    )
    worker = project / "base_worker.py"
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    out = run_cli(
        "codemod", "nixl-mla-region", "--diff", "project/base_worker.py", cwd=tmp_path
    )
    assert out.returncode == 1, out.stderr
    assert out.stdout.endswith(
        "-            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
        "+            is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, "
        "SlidingWindowMLASpec))\n"
        "             self.region_is_mla.append(is_mla_region and use_mla)\n"
    )


def test_codemod_leaves_gitignored_files_and_narrowed_sites(tmp_path):
    """The codemod has no --no-respect-gitignore and no --strict: it takes
    check's defaults, and changes neither a file git ignores nor a check
    narrowing shows deliberate (here the first operand already leaves the
    companion out)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    (tmp_path / "ignored.py").write_text(BAD)
    (tmp_path / "narrowed.py").write_text(
        "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
        "\n\n"
        "def f(spec):\n"
        "    return isinstance(spec, FullAttentionSpec) and not isinstance(\n"
        "        spec, MLAAttentionSpec\n"
        "    )\n"
    )
    out = run_cli("codemod", "add-sliding-window-mla", "--diff", ".", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "")
    assert out.stderr == (
        "1 file checked, 0 would change, 0 findings would fix, 0 failures\n"
    )


def test_codemod_keeps_configured_exclusions_and_discovers_no_families(tmp_path):
    """The codemod has no --exclude and no --discover-families: the
    configured exclusions hold, and a discovered twin (ChunkedMLASpec, which
    check --discover-families reports here) is not added."""
    from tests.test_twins import KV_CACHE_INTERFACE_PY

    write_family_module(tmp_path, KV_CACHE_INTERFACE_PY)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["skipped.py"]\n'
    )
    (tmp_path / "skipped.py").write_text(BAD)
    (tmp_path / "layers.py").write_text(BAD)
    out = run_cli("codemod", "add-sliding-window-mla", "--diff", ".", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert out.stdout == (
        "--- layers.py\n+++ layers.py\n@@ -1,2 +1,2 @@\n"
        + "".join(f"-{line}\n" for line in BAD.splitlines())
        + "".join(f"+{line}\n" for line in FIXED.splitlines())
    )


def test_nixl_site_after_a_nested_function_is_found():
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    text = WORKER_WITH_MORE_CHECKS.replace(
        "        for layer_name in kv_caches:\n",
        "        def size(t: torch.Tensor) -> int:\n"
        "            return t.numel()\n\n"
        "        for layer_name in kv_caches:\n",
    )
    assert nixl_mla_region(text, None).status == "applied"


def test_nixl_site_only_inside_register_kv_caches():
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    # register_kv_caches has no such check; a method after it does.
    text = WORKER_WITH_MORE_CHECKS.replace(
        "            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n",
        "            is_mla_region = use_mla\n",
    ) + (
        "\n    def register_cross_layers(self, layer_spec: AttentionSpec):\n"
        "        is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
        "        return is_mla_region\n"
    )
    outcome = nixl_mla_region(text, None)
    assert (outcome.status, outcome.text) == ("not found", text)
    assert outcome.detail == (
        "no `is_mla_region = isinstance(layer_spec, ...)` in "
        "register_kv_caches: vLLM may have moved this code"
    )


def test_nixl_site_the_tree_already_covers(tmp_path):
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    write_covering_hierarchy(tmp_path)
    worker = tmp_path / NIXL_WORKER
    worker.parent.mkdir(parents=True)
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    outcome = nixl_mla_region(WORKER_WITH_MORE_CHECKS, str(worker))
    assert (outcome.status, outcome.text, outcome.detail) == (
        "not found",
        WORKER_WITH_MORE_CHECKS,
        "the check is not reported as fixable",
    )
    already = WORKER_WITH_MORE_CHECKS.replace(
        "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)",
        "is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))",
    )
    assert nixl_mla_region(already, None) == type(outcome)("already applied", already)


def test_codemod_reads_the_package_and_hierarchy_of_the_file(tmp_path):
    from libcst.codemod import TransformSkip, TransformSuccess

    from vllm_spec_lint.faces.codemods import AddSlidingWindowMLA

    # A relative import resolves through the package the file is in.
    package = tmp_path / "vllm" / "v1" / "worker"
    package.mkdir(parents=True)
    for folder in (tmp_path / "vllm", tmp_path / "vllm" / "v1", package):
        (folder / "__init__.py").write_text("")
    source = (
        "from ..kv_cache_interface import MLAAttentionSpec\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    result = _transform(AddSlidingWindowMLA, source, str(package / "w.py"))
    assert isinstance(result, TransformSuccess)
    assert result.code == (
        "from ..kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    # The tree's own hierarchy: there nothing leaves the companion out.
    write_covering_hierarchy(tmp_path)
    other = tmp_path / "vllm" / "v1" / "core"
    other.mkdir()
    (other / "__init__.py").write_text("")
    covered = _transform(AddSlidingWindowMLA, source, str(other / "w.py"))
    assert isinstance(covered, TransformSkip)


def _codemod_stderr(tree, monkeypatch, *, terminal: bool) -> str:
    """What `codemod add-sliding-window-mla --diff .` writes to a stderr that
    is (or is not) a terminal, run in this process."""
    import io

    from vllm_spec_lint.faces import cli

    class Stderr(io.StringIO):
        def isatty(self):
            return terminal

    (tree / "w.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    monkeypatch.chdir(tree)
    err = Stderr()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["codemod", "add-sliding-window-mla", "--diff", "."]) == 1
    return err.getvalue()


def test_codemod_shows_progress_on_a_terminal_and_warnings(tmp_path, monkeypatch):
    kci = write_family_module(tmp_path, "class (:\n")
    assert _codemod_stderr(tmp_path, monkeypatch, terminal=True) == (
        "\r[###############...............] 1/2 files"
        "\r[##############################] 2/2 files\n"
        f"warning: {kci}: cannot read class hierarchy: invalid syntax (<unknown>, line 1)\n"
        "2 files checked, 1 would change, 1 finding would fix, 0 failures "
        "(VSL001: 1)\n"
    )


@pytest.mark.parametrize("terminal", [True, False])
def test_codemod_shows_progress_on_a_terminal_only(tmp_path, monkeypatch, terminal):
    summary = "1 file checked, 1 would change, 1 finding would fix, 0 failures"
    progress = "\r[##############################] 1/1 files\n" if terminal else ""
    assert _codemod_stderr(tmp_path, monkeypatch, terminal=terminal) == (
        progress + summary + " (VSL001: 1)\n"
    )


@pytest.mark.parametrize(
    ("command", "closing"),
    [
        (["codemod", "add-sliding-window-mla", "--diff"], ""),
        # The fix run closes with its summary, on stdout as ruff's.
        (["fix", "--diff", "--unsafe-fixes", "--no-cache"], "\nWould fix 2 errors.\n"),
    ],
)
def test_a_diff_shows_each_changed_files_diff_in_turn(tmp_path, command, closing):
    bad = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    )
    (tmp_path / "a.py").write_text(bad)
    (tmp_path / "b.py").write_text(bad)
    out = run_cli(*command, ".", cwd=tmp_path)
    assert out.returncode == 1
    diffs = "".join(
        f"--- {name}\n+++ {name}\n@@ -1,2 +1,2 @@\n"
        "-from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "-is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
        "+from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "+is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        for name in ("a.py", "b.py")
    )
    assert out.stdout == diffs + closing
    assert (tmp_path / "a.py").read_text() == bad


WORKER_WITH_A_BRANCH = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec


class NixlWorker:
    def register_kv_caches(self, kv_caches):
        for layer_name in kv_caches:
            layer_spec = self.layer_specs[layer_name]
            if self.use_host_buffer:
                is_mla_region = False
            else:
                is_mla_region = isinstance(layer_spec, MLAAttentionSpec)
            self.region_is_mla.append(is_mla_region)
"""


def test_nixl_codemod_finds_the_check_in_the_second_of_two_assignments(tmp_path):
    worker = tmp_path / "base_worker.py"
    worker.write_text(WORKER_WITH_A_BRANCH)
    out = run_cli("codemod", "nixl-mla-region", str(worker))
    assert (out.returncode, out.stderr) == (0, f"{worker}: applied\n")
    assert worker.read_text() == WORKER_WITH_A_BRANCH.replace(
        "import MLAAttentionSpec\n", "import MLAAttentionSpec, SlidingWindowMLASpec\n"
    ).replace(
        "                is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n",
        "                is_mla_region = isinstance(\n"
        "                    layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "                )\n",
    )


def test_nixl_site_is_the_is_mla_region_assignment_and_no_other_name():
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    # An earlier `is_mla_model = isinstance(layer_spec, ...)` in the same
    # function is another variable: only `is_mla_region` is PR #45831's.
    site = "            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    other = "            is_mla_model = isinstance(layer_spec, MLAAttentionSpec)\n"
    text = WORKER_WITH_MORE_CHECKS.replace(site, other + site)
    outcome = nixl_mla_region(text, None)
    assert outcome.status == "applied"
    assert other in outcome.text
    assert site not in outcome.text


WORKER_WITH_TWO_CHECKS = """\
from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec


class NixlWorker:
    def register_kv_caches(self, kv_caches):
        for layer_name in kv_caches:
            layer_spec = self.layer_specs[layer_name]
            if self.use_host_buffer:
                is_mla_region = FIRST
            else:
                is_mla_region = SECOND
            self.region_is_mla.append(is_mla_region)
"""
IMPORTS = (
    "import FullAttentionSpec, MLAAttentionSpec\n",
    "import (\n    FullAttentionSpec,\n    MLAAttentionSpec,\n"
    "    SlidingWindowMLASpec,\n)\n",
)
FULL = "isinstance(layer_spec, FullAttentionSpec)"
MLA = "isinstance(layer_spec, MLAAttentionSpec)"
BY_HAND = "isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))"
# The fix, laid out by ruff at vLLM's 88 columns.
FIXED_CHECK = (
    "isinstance(\n"
    "                    layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
    "                )"
)


@pytest.mark.parametrize(
    "first, second, fixed_first, fixed_second",
    [
        # The check is in the second branch: found there.
        (FULL, MLA, FULL, FIXED_CHECK),
        # In both branches: both fixed, or one branch keeps the bug.
        (MLA, MLA, FIXED_CHECK, FIXED_CHECK),
    ],
)
def test_nixl_codemod_fixes_every_branchs_check_that_leaves_the_companion_out(
    first, second, fixed_first, fixed_second
):
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    text = WORKER_WITH_TWO_CHECKS.replace("FIRST", first).replace("SECOND", second)
    outcome = nixl_mla_region(text, None)
    assert outcome.status == "applied"
    expected = (
        WORKER_WITH_TWO_CHECKS.replace(*IMPORTS)
        .replace("FIRST", fixed_first)
        .replace("SECOND", fixed_second)
    )
    assert outcome.text == expected


def test_nixl_codemod_fixes_the_branch_left_when_the_other_was_fixed_by_hand():
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    imported = WORKER_WITH_TWO_CHECKS.replace(*IMPORTS)
    text = imported.replace("FIRST", BY_HAND).replace("SECOND", MLA)
    outcome = nixl_mla_region(text, None)
    assert outcome.status == "applied"
    assert outcome.text == text.replace(MLA, FIXED_CHECK)


def test_nixl_codemod_is_already_applied_only_when_every_branch_is():
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    text = (
        WORKER_WITH_TWO_CHECKS.replace(*IMPORTS)
        .replace("FIRST", BY_HAND)
        .replace("SECOND", BY_HAND)
    )
    assert nixl_mla_region(text, None).status == "already applied"
    other = WORKER_WITH_TWO_CHECKS.replace("FIRST", FULL).replace("SECOND", FULL)
    outcome = nixl_mla_region(other, None)
    assert (outcome.status, outcome.text, outcome.detail) == (
        "not found",
        other,
        "the check is not reported as fixable",
    )


@pytest.mark.parametrize(
    "look_alike",
    [
        "is_mla_region = isinstance(other_spec, MLAAttentionSpec)",
        "is_mla_region = isinstance(self.layer_spec, MLAAttentionSpec)",
        "is_mla_region = issubclass(layer_spec, MLAAttentionSpec)",
        "is_mla_region = self.isinstance(layer_spec, MLAAttentionSpec)",
        "is_mla_region = isinstance(layer_spec, MLAAttentionSpec, strict)",
        "is_mla_region = use_mla",
        "is_mla_region = checked = isinstance(layer_spec, MLAAttentionSpec)",
        "self.is_mla_region = isinstance(layer_spec, MLAAttentionSpec)",
        "is_sliding_region = isinstance(layer_spec, MLAAttentionSpec)",
        "is_mla_region, seen = isinstance(layer_spec, MLAAttentionSpec), True",
        "is_mla_region = checker()(layer_spec, MLAAttentionSpec)",
        "is_mla_region = isinstance(spec_of(layer_spec), MLAAttentionSpec)",
    ],
    ids=[
        "another-variable",
        "an-attribute-tested",
        "issubclass",
        "a-method-named-isinstance",
        "three-arguments",
        "not-a-call",
        "two-targets",
        "an-attribute-assigned",
        "another-name-assigned",
        "a-tuple-assigned",
        "a-called-call",
        "a-call-tested",
    ],
)
def test_nixl_site_is_exactly_is_mla_region_equals_isinstance_of_layer_spec(look_alike):
    """Only `is_mla_region = isinstance(layer_spec, ...)` is PR #45831's
    site: an assignment that only looks like it is left as it is, and the
    codemod says vLLM may have moved the code."""
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    site = "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)"
    text = WORKER_WITH_MORE_CHECKS.replace(site, look_alike)
    outcome = nixl_mla_region(text, None)
    assert outcome == type(outcome)(
        "not found",
        text,
        "no `is_mla_region = isinstance(layer_spec, ...)` in "
        "register_kv_caches: vLLM may have moved this code",
    )


def test_nixl_codemod_class_without_a_file_name_transforms_the_text(tmp_path):
    """A module handed over without a file name (libcst's API used
    directly): nothing tells it is not the worker, so it is transformed."""
    from libcst.codemod import TransformSuccess

    from vllm_spec_lint.faces.codemods import NixlMlaRegion

    applied = _transform(NixlMlaRegion, WORKER_WITH_MORE_CHECKS, None)
    assert isinstance(applied, TransformSuccess)
    assert "layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n" in applied.code


def test_nixl_codemod_says_why_the_fix_was_not_made(tmp_path, monkeypatch):
    """A fix that fails (here the project's formatter breaks the code) is
    not written, and the codemod says why, not just that nothing was fixed."""
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    fake_black(monkeypatch, tmp_path, "echo 'def ('\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nfix-formatter = "black"\n'
    )
    worker = tmp_path / "base_worker.py"
    worker.write_text(WORKER_WITH_MORE_CHECKS)
    outcome = nixl_mla_region(WORKER_WITH_MORE_CHECKS, str(worker))
    assert outcome == type(outcome)(
        "not found",
        WORKER_WITH_MORE_CHECKS,
        "the fixed code does not parse; not written",
    )


def test_a_file_the_codemod_cannot_write_or_read_is_an_error(tmp_path):
    from tests.conftest import run_cli

    target = tmp_path / "m.py"
    target.write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    target.chmod(0o444)
    out = run_cli("codemod", "add-sliding-window-mla", "m.py", cwd=tmp_path)
    assert out.returncode == 2
    assert "error: m.py: not written: the file is read-only\n" in out.stderr
    worker = tmp_path / "base_worker.py"
    worker.write_text("# -*- coding: no-such-codec -*-\nx = 1\n")
    out = run_cli("codemod", "nixl-mla-region", "base_worker.py", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (
        2,
        "error: base_worker.py: cannot read the NIXL worker: "
        "unknown encoding: no-such-codec\n",
    )
