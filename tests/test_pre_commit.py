"""The pre-commit hooks, run for real by pre-commit's try-repo."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    # One hook environment for the module: building it installs this repo.
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def user_repo(tmp_path):
    repo = tmp_path / "user"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "worker.py").write_text(BAD)
    (repo / "pkg" / "plain.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


def try_repo(hook: str, repo, home) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip


def test_check_hook_fails_on_a_finding(user_repo, pre_commit_home):
    out = try_repo("vllm-spec-lint", user_repo, pre_commit_home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert " --> pkg/worker.py:3:40" in out.stdout
    # The check hook changes nothing.
    assert (user_repo / "pkg" / "worker.py").read_text() == BAD
    fixed = BAD.replace(
        "import MLAAttentionSpec", "import MLAAttentionSpec, SlidingWindowMLASpec"
    )
    fixed = fixed.replace(
        "MLAAttentionSpec)", "(MLAAttentionSpec, SlidingWindowMLASpec))"
    )
    (user_repo / "pkg" / "worker.py").write_text(fixed)
    out = try_repo("vllm-spec-lint", user_repo, pre_commit_home)
    assert out.returncode == 0, out.stdout + out.stderr


def test_fix_hook_fixes_and_fails_because_it_changed_files(user_repo, pre_commit_home):
    out = try_repo("vllm-spec-lint-fix", user_repo, pre_commit_home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "files were modified by this hook" in out.stdout
    text = (user_repo / "pkg" / "worker.py").read_text()
    assert "isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))" in text
    assert (user_repo / "pkg" / "plain.py").read_text() == "x = 1\n"
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    again = try_repo("vllm-spec-lint-fix", user_repo, pre_commit_home)
    assert again.returncode == 0, again.stdout + again.stderr


def test_excluded_files_are_skipped_even_when_pre_commit_names_them(
    user_repo, pre_commit_home
):
    (user_repo / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["pkg/worker.py"]\n'
    )
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    out = try_repo("vllm-spec-lint", user_repo, pre_commit_home)
    assert out.returncode == 0, out.stdout + out.stderr


def test_hooks_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    hooks = load_manifest(str(REPO / ".pre-commit-hooks.yaml"))
    assert [(h["id"], h["entry"], h["types"]) for h in hooks] == [
        ("vllm-spec-lint", "vllm-spec-lint check --force-exclude", ["python"]),
        (
            "vllm-spec-lint-fix",
            "vllm-spec-lint fix --unsafe-fixes --force-exclude",
            ["python"],
        ),
    ]
    # Both hooks' environments hold ruff as the package's own dependency.
    assert [h["additional_dependencies"] for h in hooks] == [[], []]


LONG = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
    "def register(layer_specs):\n"
    "    for layer_spec in layer_specs:\n"
    "        is_mla_region_for_layer = isinstance(layer_spec, MLAAttentionSpec)\n"
)
LONG_FIXED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n\n"
    "def register(layer_specs):\n"
    "    for layer_spec in layer_specs:\n"
    "        is_mla_region_for_layer = isinstance(\n"
    "            layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
    "        )\n"
)


def test_fix_hook_lays_out_fixes_in_its_own_environment(user_repo, pre_commit_home):
    """pre-commit's environment for the hook has only what the manifest
    brings: the fix is laid out by ruff from there, with no warning."""
    (user_repo / "pkg" / "worker.py").write_text(LONG)
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    out = try_repo("vllm-spec-lint-fix", user_repo, pre_commit_home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "is not installed" not in out.stdout + out.stderr
    assert (user_repo / "pkg" / "worker.py").read_text() == LONG_FIXED


def _readme_snippet() -> str:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    [snippet] = [b for b in blocks if b.startswith("repos:")]
    return snippet


def test_the_readmes_snippet_works_as_written(user_repo, pre_commit_home, tmp_path):
    """The README's snippet with only `repo:` and `rev:` pointed at a clone of
    this repository and its commit; everything else as a user copies it."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    snippet = _readme_snippet()
    config = re.sub(r"(?m)^(\s*- repo: ).*$", rf"\g<1>{clone}", snippet)
    config = re.sub(r"(?m)^(\s*rev: )\S+", rf"\g<1>{commit}", config)
    assert config.count(str(clone)) == 1 and config.count(commit) == 1
    (user_repo / ".pre-commit-config.yaml").write_text(config)
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home))
    out = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=user_repo, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "pkg/worker.py:3:40" in out.stdout or "pkg/worker.py:3:40" in out.stderr
    assert (user_repo / "pkg" / "worker.py").read_text() == BAD
