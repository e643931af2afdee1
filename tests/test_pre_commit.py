"""The pre-commit hooks, run for real by ``pre-commit run`` with this checkout
as the hook repository (as ``pre-commit try-repo`` makes it)."""

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


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[str, str]:
    """This checkout as a hook repository: (where, commit). As pre-commit's
    try-repo makes it: a clone with the checkout's uncommitted changes to
    tracked files committed. (try-repo itself installs the hook environment
    afresh at every call, in a store of its own; ``pre-commit run`` with
    one home installs it once for the module.)"""
    if not _git("status", "--porcelain", "--untracked-files=no", cwd=REPO):
        return str(REPO), _git("rev-parse", "HEAD", cwd=REPO)
    shadow = tmp_path_factory.mktemp("hook-repo") / "repo"
    _git("clone", "-q", str(REPO), str(shadow), cwd=REPO)
    # The checkout's changes, added into the clone's index and objects.
    env = {
        variable: str(shadow / _git("rev-parse", "--git-path", name, cwd=shadow))
        for variable, name in (
            ("GIT_INDEX_FILE", "index"),
            ("GIT_OBJECT_DIRECTORY", "objects"),
        )
    }
    _git("add", "-u", cwd=REPO, env=env)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "checkout",
         cwd=shadow)  # fmt: skip
    return str(shadow), _git("rev-parse", "HEAD", cwd=shadow)


def _git(*args, cwd, env=None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def user_repo(tmp_path):
    repo = tmp_path / "user"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "worker.py").write_text(BAD)
    (repo / "pkg" / "plain.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


def run_hook(hook: str, repo, home, hook_repo) -> subprocess.CompletedProcess:
    """``pre-commit run --all-files`` in ``repo`` with only ``hook`` of this
    repository configured (the configuration lies outside ``repo``)."""
    where, commit = hook_repo
    config = repo.parent / f"{hook}.yaml"
    config.write_text(
        f"repos:\n- repo: {where}\n  rev: {commit}\n  hooks:\n  - id: {hook}\n"
    )
    env = dict(os.environ, PRE_COMMIT_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--config", str(config),
         "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip


def test_check_hook_fails_on_a_finding(user_repo, pre_commit_home, hook_repo):
    out = run_hook("vllm-spec-lint", user_repo, pre_commit_home, hook_repo)
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
    out = run_hook("vllm-spec-lint", user_repo, pre_commit_home, hook_repo)
    assert out.returncode == 0, out.stdout + out.stderr


def test_fix_hook_fixes_and_fails_because_it_changed_files(
    user_repo, pre_commit_home, hook_repo
):
    out = run_hook("vllm-spec-lint-fix", user_repo, pre_commit_home, hook_repo)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "files were modified by this hook" in out.stdout
    text = (user_repo / "pkg" / "worker.py").read_text()
    assert "isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))" in text
    assert (user_repo / "pkg" / "plain.py").read_text() == "x = 1\n"
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    again = run_hook("vllm-spec-lint-fix", user_repo, pre_commit_home, hook_repo)
    assert again.returncode == 0, again.stdout + again.stderr


def test_excluded_files_are_skipped_even_when_pre_commit_names_them(
    user_repo, pre_commit_home, hook_repo
):
    (user_repo / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["pkg/worker.py"]\n'
    )
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    out = run_hook("vllm-spec-lint", user_repo, pre_commit_home, hook_repo)
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


def test_fix_hook_lays_out_fixes_in_its_own_environment(
    user_repo, pre_commit_home, hook_repo
):
    """pre-commit's environment for the hook has only what the manifest
    brings: the fix is laid out by ruff from there, with no warning."""
    (user_repo / "pkg" / "worker.py").write_text(LONG)
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    out = run_hook("vllm-spec-lint-fix", user_repo, pre_commit_home, hook_repo)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "is not installed" not in out.stdout + out.stderr
    assert (user_repo / "pkg" / "worker.py").read_text() == LONG_FIXED


def _readme_snippet() -> str:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    [snippet] = [b for b in blocks if b.startswith("repos:")]
    return snippet


def test_the_readmes_snippet_works_as_written(user_repo, pre_commit_home, hook_repo):
    """The README's snippet with only `repo:` and `rev:` pointed at this
    checkout as a hook repository and its commit; everything else as a user
    copies it."""
    where, commit = hook_repo
    snippet = _readme_snippet()
    config = re.sub(r"(?m)^(\s*- repo: ).*$", rf"\g<1>{where}", snippet)
    config = re.sub(r"(?m)^(\s*rev: )\S+", rf"\g<1>{commit}", config)
    assert config.count(where) == 1 and config.count(commit) == 1
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
