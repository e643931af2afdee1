"""The parts that make a run fast must not change what it finds: the byte
prefilter, parallel workers, the cache, lazy imports (slicing:
tests/test_slicing.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, run_cli
from vllm_spec_lint.core import analysis
from vllm_spec_lint.core.analysis import might_have_findings
from vllm_spec_lint.core.name_search import NameSearch
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import ClassHierarchy

SNEAKY = {
    "alias": "from vllm.v1.kv_cache_interface import MLAAttentionSpec as M\nok = isinstance(s, M)\n",
    "attribute": "import vllm.v1.kv_cache_interface as kci\nok = isinstance(s, kci.MLAAttentionSpec)\n",
    "star": "from vllm.v1.kv_cache_interface import *\nok = isinstance(s, MLAAttentionSpec)\n",
    "continuation": "from vllm.v1.kv_cache_interface import MLAAttentionSpec\nok = isinstance(s, \\\n    MLAAttentionSpec)\n",
    "relative": "from ..kv_cache_interface import MLAAttentionSpec\nok = isinstance(s, MLAAttentionSpec)\n",
}


@pytest.mark.parametrize("name", SNEAKY)
def test_prefilter_lets_every_sneaky_finding_through(name, tmp_path):
    source = SNEAKY[name].encode()
    assert might_have_findings(source, Config())
    (tmp_path / "x.py").write_bytes(source)
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
    )
    assert "VSL001" in out.stdout


def test_prefilter_on_a_latin1_file(tmp_path):
    source = "# -*- coding: latin-1 -*-\n# déjà\n" + SNEAKY["alias"]
    data = source.encode("latin-1")
    assert might_have_findings(data, Config())
    (tmp_path / "l1.py").write_bytes(data)
    assert (
        "l1.py:4:20: VSL001"
        in run_cli(
            "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
        ).stdout
    )


def test_prefilter_skips_files_without_the_name():
    assert not might_have_findings(b"isinstance(s, FullAttentionSpec)\n", Config())


def test_screened_names_are_the_anchor_and_the_companions_own_parents():
    assert analysis.screened_names(Config().families, ClassHierarchy.default()) == (
        b"MLAAttentionSpec",
        b"SlidingWindowSpec",
    )


def test_screened_names_kept_for_another_hierarchy_at_the_same_id_are_not_used():
    # The cache is keyed by id(): a hierarchy freed and another made at its
    # address must not get the first one's names.
    families, hierarchy = Config().families, ClassHierarchy.default()
    analysis._SCREENED[(families, id(hierarchy))] = (object(), NameSearch([b"Stale"]))
    assert analysis.screened_names(families, hierarchy) == (
        b"MLAAttentionSpec",
        b"SlidingWindowSpec",
    )


# -- workers and cache ----------------------------------------------------------


@pytest.fixture
def tree(tmp_path):
    copy = tmp_path / "tree"
    # Without a cache a developer's own run may have left in the checkout.
    no_cache = shutil.ignore_patterns(".vllm_spec_lint_cache")
    shutil.copytree(REPO / "examples", copy, ignore=no_cache)
    shutil.copytree(REPO / "tests" / "corpus", copy / "corpus", ignore=no_cache)
    return copy


def _json(tree, *args):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--strict",
        "--format",
        "json",
        *args,
        ".",
        cwd=tree,
    )
    assert out.returncode == 1, out.stderr
    return json.loads(out.stdout)


# Every finding of the example tree and the corpus in strict mode, written
# out: the runs below compare the tool with itself, this pins what it says.
STRICT_SITES = [
    ("corpus/vllm/v1/worker/kv_dispatch.py", 18, 5, "VSL006"),
    ("corpus/vllm/v1/worker/kv_dispatch.py", 23, 5, "VSL007"),
    ("corpus/vllm/v1/worker/kv_dispatch.py", 41, 32, "VSL005"),
    ("corpus/vllm/v1/worker/kv_dispatch.py", 51, 35, "VSL005"),
    ("corpus/vllm/v1/worker/kv_dispatch.py", 66, 13, "VSL006"),
    ("corpus/vllm/v1/worker/kv_layout.py", 8, 1, "VSL004"),
    ("corpus/vllm/v1/worker/kv_layout.py", 15, 65, "VSL001"),
    ("corpus/vllm/v1/worker/kv_layout.py", 33, 25, "VSL001"),
    ("corpus/vllm/v1/worker/kv_layout.py", 40, 14, "VSL003"),
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py",
        19,
        52,
        "VSL001",
    ),
    ("vllm/v1/core/layout.py", 12, 1, "VSL004"),
    ("vllm/v1/core/layout.py", 21, 22, "VSL002"),
    ("vllm/v1/core/layout.py", 28, 14, "VSL003"),
    ("vllm/v1/core/layout.py", 42, 53, "VSL001"),
]


def _sites(findings, tree) -> list[tuple[str, int, int, str]]:
    return [
        (
            f["filename"].split(f"{tree}/")[1],
            f["location"]["row"],
            f["location"]["column"],
            f["code"],
        )
        for f in findings
    ]


def test_same_findings_in_the_same_order_for_any_number_of_jobs(tree):
    one = _json(tree, "--no-cache", "-j", "1")
    assert _sites(one, tree) == STRICT_SITES
    assert one == _json(tree, "--no-cache", "-j", "2")
    assert one == _json(tree, "--no-cache", "-j", "4")


def test_warm_cache_gives_the_cold_results(tree):
    cold = _json(tree, "--no-cache")
    assert _sites(cold, tree) == STRICT_SITES
    assert not (tree / ".vllm_spec_lint_cache").exists()
    assert _json(tree) == cold  # fills the cache
    cache = tree / ".vllm_spec_lint_cache"
    entries = [
        e
        for e in cache.rglob("*.json")
        if e.parent.name != "class-bases-imported" and "previews" not in e.parts
    ]
    assert len(entries) == 5  # the files that name an anchor
    # The report's laid-out fixes: one entry per file with a fix to show.
    previews = list(cache.rglob("previews/*/*.json"))
    assert len(previews) == 4
    assert _json(tree) == cold  # from the cache
    assert (tree / ".vllm_spec_lint_cache" / ".gitignore").read_text().endswith("*\n")


BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)


def test_identical_files_at_two_paths_keep_their_own_ignores_when_warm(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nper-file-ignores = { "a/*" = ["VSL001"] }\n'
    )
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "w.py").write_text(BAD)
    expected = (
        "b/w.py:2:40: VSL001 isinstance() check against MLAAttentionSpec "
        "leaves out SlidingWindowMLASpec\n"
    )
    for run in ("cold", "warm", "warm again"):
        out = run_cli("check", "--output-format", "concise", "-q", ".", cwd=tmp_path)
        assert (out.returncode, out.stdout) == (1, expected), run


@pytest.mark.parametrize(
    "args",
    [
        (".",),
        ("./b",),
        ("b",),
        ("./b/w.py",),
        ("--output-format", "json", "."),
        ("--output-format", "github", "."),
        ("--output-format", "github", "./b"),
        ("--output-format", "sarif", "."),
        ("--statistics", "."),
    ],
)
def test_cold_and_warm_runs_print_the_same_bytes(tmp_path, args):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "w.py").write_text(BAD)
    (tmp_path / "clean.py").write_text("x = 1\n")
    cold = run_cli("check", "--output-format", "concise", *args, cwd=tmp_path)
    assert (tmp_path / ".vllm_spec_lint_cache").is_dir()
    warm = run_cli("check", "--output-format", "concise", *args, cwd=tmp_path)
    assert cold.returncode == warm.returncode == 1
    assert warm.stdout == cold.stdout
    assert warm.stderr == cold.stderr == ""


def test_paths_are_printed_as_ruff_prints_them(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "w.py").write_text(BAD)
    for args in ((".",), ("./b",), ("b/",)):
        out = run_cli("check", "--output-format", "concise", "-q", *args, cwd=tmp_path)
        assert out.stdout.startswith("b/w.py:2:40: VSL001"), args


def test_corrupt_cache_entries_are_ignored_and_rewritten(tree):
    cold = _json(tree)
    for entry in (tree / ".vllm_spec_lint_cache").rglob("*.json"):
        entry.write_text("{not json")
    assert _json(tree) == cold
    for entry in (tree / ".vllm_spec_lint_cache").rglob("*.json"):
        json.loads(entry.read_text())


def test_cache_follows_content_and_settings(tree):
    def count(code):
        return sum(f["code"] == code for f in _json(tree))

    assert count("VSL004") == 2 and count("VSL002") == 1
    layout = tree / "vllm/v1/core/layout.py"
    layout.write_text(
        layout.read_text().replace(
            "_LATENT_SPECS = (MLAAttentionSpec,)",
            "_LATENT_SPECS = (MLAAttentionSpec, SlidingWindowMLASpec)",
        )
    )
    assert count("VSL004") == 1
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nignore = ['VSL002']\n")
    assert count("VSL002") == 0


def test_files_without_the_name_are_not_read_again_until_they_change(tree, monkeypatch):
    from vllm_spec_lint.edges import cache, runner

    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)  # see the next test
    opened = []
    real_read = runner.read_source
    monkeypatch.setattr(
        runner, "read_source", lambda name: opened.append(name) or real_read(name)
    )
    plain = tree / "plain.py"
    plain.write_text("x = 1\n")
    first = runner.run([tree], Config(root=tree, strict=True))
    assert str(plain) in opened
    opened.clear()
    again = runner.run([tree], Config(root=tree, strict=True))
    assert str(plain) not in opened
    assert again.findings == first.findings
    # Same size, same modification time: the change time still tells.
    info = plain.stat()
    plain.write_text("y = 2\n")
    os.utime(plain, ns=(info.st_atime_ns, info.st_mtime_ns))
    runner.run([tree], Config(root=tree, strict=True))
    assert str(plain) in opened
    plain.write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(s, MLAAttentionSpec)\n"
    )
    changed = runner.run([tree], Config(root=tree, strict=True))
    assert [f.path for f in changed.findings if f.path == str(plain)] == [str(plain)]


def test_files_changed_just_before_a_run_are_not_trusted_by_their_stat(tree):
    """A change within the file system's timestamp tick could leave every
    stat field as it was: such recent files are read again next time."""
    from vllm_spec_lint.edges.cache import CleanFiles
    from vllm_spec_lint.edges.runner import run

    (tree / "fresh.py").write_text("x = 1\n")
    run([tree], Config(root=tree))
    clean = CleanFiles(tree, Config(root=tree), ClassHierarchy.default())
    assert str(tree / "fresh.py") not in clean.entries


def test_a_cache_of_clean_files_alone_is_marked_as_a_cache(tmp_path, monkeypatch):
    """A tree where nothing names an anchor writes only the stat index; the
    cache folder is still ignored by git and tagged as a cache."""
    from vllm_spec_lint.edges import cache, runner

    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    (tmp_path / "plain.py").write_text("x = 1\n")
    runner.run([tmp_path], Config(root=tmp_path))
    top = tmp_path / ".vllm_spec_lint_cache"
    assert list(top.rglob("clean-*.marshal"))
    assert (top / ".gitignore").read_text().endswith("*\n")
    assert (top / "CACHEDIR.TAG").exists()


def test_concurrent_runs_share_the_cache_safely(tree):
    cold = _json(tree, "--no-cache")
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "vllm_spec_lint", "check", "--strict", "--format", "json", "."],
            cwd=tree, stdout=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]  # fmt: skip
    for run in runs:
        out, _ = run.communicate(timeout=300)
        assert json.loads(out) == cold


def test_no_libcst_import_when_no_file_needs_parsing(tmp_path):
    for i in range(20):
        (tmp_path / f"m{i}.py").write_text(f"x{i} = {i}\n")
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vllm_spec_lint", "check", "."],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0
    assert "libcst" not in out.stderr
    assert out.stdout == "All checks passed!\n"


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "disabled"])
def test_an_analysis_leaves_the_cycle_collector_as_it_found_it(enabled):
    """Parsing pauses the collector; a caller that had paused it (a
    benchmark, an embedding program) finds it paused still."""
    import gc

    was = gc.isenabled()
    gc.enable() if enabled else gc.disable()
    try:
        source = (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "ok = isinstance(spec, MLAAttentionSpec)\n"
        )
        [finding] = analysis.analyze_source(source, "x.py", Config()).findings
        assert finding.code == "VSL001"
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_a_pause_that_makes_survivors_old_leaves_them_in_the_oldest_generation(
    unfrozen_heap,
):
    """What a run made and left alive is old after the CLI's pause: the
    young generation is empty, so the next allocation walks nothing of it."""
    import gc

    assert gc.isenabled()
    with analysis.gc_paused(survivors_old=True):
        made = [[] for _ in range(1000)]
    assert gc.get_count()[0] < 50
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(m) in oldest for m in made)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_command_line_run_leaves_what_it_made_in_the_oldest_generation(
    unfrozen_heap, monkeypatch, tmp_path
):
    """The command line runs its command under that pause: what the command
    left alive is old when ``_main`` returns (the process ends next)."""
    import gc

    from vllm_spec_lint.faces import cli

    made = []

    def command(args, config):
        assert not gc.isenabled()  # paused while the command runs
        made.extend([] for _ in range(1000))
        return 0

    monkeypatch.setitem(cli.COMMANDS, "check", command)
    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    assert cli._main(["check", "--no-cache"]) == 0
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert len(made) == 1000
    assert all(id(m) in oldest for m in made)


def test_a_pause_leaves_what_a_host_froze_frozen(unfrozen_heap):
    """A host's ``gc.freeze()`` (our flake8 plugin's) stands: the pause
    makes nothing old then, and unfreezes nothing."""
    import gc

    kept = [[] for _ in range(100)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    with analysis.gc_paused(survivors_old=True):
        made = [[] for _ in range(100)]
    assert gc.get_freeze_count() == frozen and gc.isenabled()
    tracked = {id(o) for o in gc.get_objects()}
    assert id(kept[0]) not in tracked
    assert id(made[0]) in tracked
