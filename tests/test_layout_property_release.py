"""``codemod layout-property`` over copies of real vLLM releases (issue #45):
what it declares, rewrites and keeps, and the tree it leaves."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest

from tests.conftest import fetch_vllm, run_cli

pytestmark = pytest.mark.release

KEPT = [
    "kept: {kept} tests",
    "  VSL001: 3 (assert)",
    "  VSL001: {narrowed} (narrowed)",
    "  VSL001: 3 (pairing)",
    "  VSL001: 2 (raise)",
    "  VSL002: 1 (deliberate)",
]
CONNECTOR = "vllm/distributed/kv_transfer/kv_connector/v1/"
# Per release: files checked, files changed, tests rewritten (VSL001 misses),
# kept, narrowed, the changed files, and what `check` reports afterwards.
RELEASES = {
    "0.33.0": (
        3231, 13, 15, 5, 16, 7,
        [
            CONNECTOR + "moriio/moriio_connector.py",
            CONNECTOR + "moriio/moriio_layout.py",
            CONNECTOR + "offloading/canonical_mapping.py",
            CONNECTOR + "offloading/config.py",
        ],
        [],
    ),
    "0.34.0": (
        3604, 13, 16, 7, 14, 5,
        [
            CONNECTOR + "moriio/moriio_layout.py",
            CONNECTOR + "offloading/canonical_mapping.py",
            CONNECTOR + "offloading/config.py",
        ],
        [],
    ),
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(RELEASES))
def migrated(request, tmp_path_factory):
    version = request.param
    tree = tmp_path_factory.mktemp(f"vllm-{version}")
    shutil.copytree(fetch_vllm(version) / "vllm", tree / "vllm")
    original = {p: p.read_bytes() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", "--unsafe-fixes", ".", cwd=tree)
    return version, tree, original, out


def _changed(tree, original) -> list:
    return sorted(p for p, data in original.items() if p.read_bytes() != data)


def test_the_codemod_declares_rewrites_and_keeps_as_counted(migrated):
    version, tree, original, out = migrated
    checked, changed, rewritten, misses, kept, narrowed, *_ = RELEASES[version]
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"{checked} files checked, {changed} changed",
        "declared: vllm/v1/kv_cache_interface.py: uses_mla_layout on "
        "KVCacheSpec (False), MLAAttentionSpec (True), SlidingWindowMLASpec (True)",
        f"rewritten: {rewritten} tests",
        f"  VSL001: {misses} (leaves a companion out)",
        # The exact comparison in offloading/config.py's replicated layout.
        "  VSL002: 1 (leaves a companion out)",
        # 0.33.0's MoRIIO WRITE-mode test of SlidingWindowSpec (0.34.0 fixed it).
        *(["  VSL007: 1 (excludes the companion)"] if version == "0.33.0" else []),
        "  VSL008: 8 (names the whole family)",
        *(line.format(kept=kept, narrowed=narrowed) for line in KEPT),
    ]
    assert len(_changed(tree, original)) == changed


def test_every_changed_file_parses_imports_cleanly_and_keeps_its_layout(migrated):
    version, tree, original, _ = migrated
    changed = _changed(tree, original)
    names = {p.relative_to(tree).as_posix() for p in changed}
    assert set(RELEASES[version][6]) <= names
    for path in changed:
        ast.parse(path.read_bytes())
    ruff = [sys.executable, "-m", "ruff"]
    lint = subprocess.run(
        [*ruff, "check", "--no-cache", "--isolated", "--select", "F821,F401",
         *map(str, changed)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout
    formatted = subprocess.run(
        [*ruff, "format", "--check", "--no-cache", "--isolated", *map(str, changed)],
        capture_output=True, text=True,
    )  # fmt: skip
    # Each of these files was ruff-format-clean in the release.
    assert formatted.returncode == 0, formatted.stdout


def test_a_second_run_changes_nothing(migrated):
    _, tree, _, _ = migrated
    again = run_cli(
        "codemod", "layout-property", "--unsafe-fixes", "--diff", ".", cwd=tree
    )
    assert (again.returncode, again.stdout) == (0, "")


def test_check_afterwards_reports_only_what_was_kept(migrated):
    version, tree, _, _ = migrated
    check = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tree)
    # Each finding's place and code; the last two lines are the totals.
    reported = check.stdout.splitlines()[:-2]
    assert [" ".join(r.split(" ")[:2]) for r in reported] == RELEASES[version][7]
