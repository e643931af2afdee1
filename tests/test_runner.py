"""The runner (edges/runner.py) called as a library, as the faces call it:
what each keyword means when left out, what it reads and keeps, and when it
starts worker processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import (
    BAD,
    COMPRESSED_PARENT,
    FIXED,
    SPEC_CLASSES,
    count_slice_analyses,
    failing_disk,
    fake_black,
    write_family_module,
)
from vllm_spec_lint.core.findings import parse_error
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges import cache, runner, workers
from vllm_spec_lint.edges.runner import CheckRun, Mode, run
from vllm_spec_lint.faces import cli
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.repair import formatting

FAMILY_MODULE = "vllm/v1/kv_cache_interface.py"


def _sites(check_run) -> list[tuple[str, str, tuple[int, int]]]:
    return [(Path(f.path).name, f.code, f.location) for f in check_run.findings]


def test_fix_alone_applies_no_unsafe_fix(tmp_path):
    bad = tmp_path / "w.py"
    bad.write_text(BAD)
    config = Config(root=tmp_path, fix_formatter="none")
    left_out = run([bad], config, fix=True, use_cache=False, jobs=1)
    spelled = run([bad], config, fix=True, unsafe=False, use_cache=False, jobs=1)
    for check_run in (left_out, spelled):
        assert _sites(check_run) == [("w.py", "VSL001", (2, 40))]
        assert check_run.results[0].fixed_source is None
    unsafe = run([bad], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    assert unsafe.findings == []
    assert unsafe.results[0].fixed_source == FIXED.encode()


def test_fixes_are_not_written_unless_asked(tmp_path):
    bad = tmp_path / "w.py"
    bad.write_text(BAD)
    config = Config(root=tmp_path, fix_formatter="none")
    kept = run([bad], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    assert kept.results[0].fixed_source == FIXED.encode()
    assert bad.read_text() == BAD
    run([bad], config, fix=True, unsafe=True, write=False, use_cache=False, jobs=1)
    assert bad.read_text() == BAD
    run([bad], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1)
    assert bad.read_text() == FIXED


def test_an_excluded_file_named_is_checked_unless_exclusion_is_forced(tmp_path):
    bad = tmp_path / "w.py"
    bad.write_text(BAD)
    config = Config(root=tmp_path, exclude=("w.py",))
    for check_run in (
        run([bad], config, use_cache=False, jobs=1),
        run([bad], config, force_exclude=False, use_cache=False, jobs=1),
    ):
        assert _sites(check_run) == [("w.py", "VSL001", (2, 40))]
    forced = run([bad], config, force_exclude=True, use_cache=False, jobs=1)
    assert forced.results == []


def test_links_leading_out_of_the_tree_are_followed_only_when_asked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.py").write_text(BAD)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "linked").symlink_to(outside, target_is_directory=True)
    config = Config(root=tree)
    for check_run in (
        run([tree], config, use_cache=False, jobs=1),
        run([tree], config, follow_links=False, use_cache=False, jobs=1),
    ):
        assert check_run.results == []
    followed = run([tree], config, follow_links=True, use_cache=False, jobs=1)
    assert _sites(followed) == [("w.py", "VSL001", (2, 40))]


def test_no_cache_leaves_no_cache_folder(tmp_path, monkeypatch):
    """Not for results, nor for the family module's classes, nor for the
    files known clean (none too recent to be recorded here)."""
    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "w.py").write_text(BAD)
    write_family_module(tmp_path, SPEC_CLASSES)
    run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=1)
    assert not (tmp_path / cache.CACHE_DIR).exists()


def test_the_family_modules_classes_are_cached_with_the_results(tmp_path):
    write_family_module(
        tmp_path,
        "class AttentionSpec: ...\nclass MLAAttentionSpec(AttentionSpec): ...\n",
    )
    run([tmp_path], Config(root=tmp_path), jobs=1)
    entries = list(cache.ClassBasesCache(tmp_path).folder.glob("*.json"))
    assert [e.read_text() for e in entries] == [
        '{"AttentionSpec": [], "MLAAttentionSpec": ["AttentionSpec"]}'
    ]


def test_files_known_clean_keep_their_names_in_the_results(tmp_path, monkeypatch):
    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    write_family_module(tmp_path, SPEC_CLASSES)  # vLLM itself: no plugin
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text(BAD)
    config = Config(root=tmp_path)
    cold = run([tmp_path], config, jobs=1)
    real_read = runner.read_source

    def read(name):
        assert not name.endswith("a.py"), "a clean file read again"
        return real_read(name)

    monkeypatch.setattr(runner, "read_source", read)
    warm = run([tmp_path], config, jobs=1)
    expected = [str(tmp_path / n) for n in ("a.py", "b.py", FAMILY_MODULE)]
    assert [r.path for r in cold.results] == expected
    assert [r.path for r in warm.results] == expected


def test_a_file_that_comes_to_name_an_anchor_leaves_the_clean_list(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    plain = tmp_path / "a.py"
    plain.write_text("x = 1\n")
    config = Config(root=tmp_path)
    run([tmp_path], config, jobs=1)
    clean = cache.CleanFiles(tmp_path, config, ClassHierarchy.default())
    assert list(clean.entries) == [str(plain)]
    plain.write_text(BAD)
    run([tmp_path], config, jobs=1)
    clean = cache.CleanFiles(tmp_path, config, ClassHierarchy.default())
    assert clean.entries == {}


def test_each_file_is_read_once_when_the_spec_classes_read_it_first(
    tmp_path, monkeypatch
):
    """A plugin's tree: its spec classes are read from every file before the
    analysis, which takes the bytes read then."""
    (tmp_path / "w.py").write_text(BAD)
    (tmp_path / "plain.py").write_text("x = 1\n")
    opened = []
    real_open = os.open

    def open_and_count(path, *args, **kwargs):
        if str(path).endswith(".py"):
            opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_and_count)
    check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=1)
    assert _sites(check_run) == [("w.py", "VSL001", (2, 40))]
    assert sorted(opened) == [str(tmp_path / "plain.py"), str(tmp_path / "w.py")]


def _record_pool_starts(monkeypatch) -> list[tuple[int, bool]]:
    """Each start of the worker pool: how many workers, and whether this
    process imported the analysis before forking them."""
    import concurrent.futures

    starts, imported = [], []
    real_load = workers._load_analysis
    real_pool = concurrent.futures.ProcessPoolExecutor

    def load():
        imported.append(True)  # a worker's own call appends to its own copy
        real_load()

    def pool(workers, **kwargs):
        starts.append((workers, bool(imported)))
        imported.clear()
        return real_pool(workers, **kwargs)

    monkeypatch.setattr(workers, "_load_analysis", load)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    return starts


def test_one_file_is_analysed_without_worker_processes(tmp_path, monkeypatch):
    starts = _record_pool_starts(monkeypatch)
    (tmp_path / "w.py").write_text(BAD)
    config = Config(root=tmp_path, discover_families=True)
    check_run = run([tmp_path], config, use_cache=False, jobs=2)
    assert _sites(check_run) == [("w.py", "VSL001", (2, 40))]
    assert starts == []


def _two_bad_files(folder: Path) -> list[tuple[str, str, tuple[int, int]]]:
    for name in ("a.py", "b.py"):
        (folder / name).write_text(BAD)
    return [("a.py", "VSL001", (2, 40)), ("b.py", "VSL001", (2, 40))]


def test_a_whole_tree_leaves_one_of_the_jobs_to_backend_pairing(tmp_path, monkeypatch):
    """This process runs the tree's backend pairing while the workers
    analyse: one worker fewer. A lone worker imports the analysis itself
    (this process goes on reading); two or more share this process's."""
    starts = _record_pool_starts(monkeypatch)
    before = _starts_before_the_hierarchy(monkeypatch, starts)
    expected = _two_bad_files(tmp_path)
    for jobs in (2, 3):
        check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=jobs)
        assert _sites(check_run) == expected
    assert starts == [(1, False), (2, True)]
    assert before == [0, 1]  # each run's pool starts after its hierarchy


def test_files_given_get_every_job(tmp_path, monkeypatch):
    """Files named (pre-commit's) get no backend pairing: every job analyses,
    in workers forked after this process imported the analysis."""
    starts = _record_pool_starts(monkeypatch)
    expected = _two_bad_files(tmp_path)
    files = [tmp_path / "a.py", tmp_path / "b.py"]
    check_run = run(files, Config(root=tmp_path), use_cache=False, jobs=2)
    assert _sites(check_run) == expected
    assert starts == [(2, True)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_analysed_files_result_is_given_as_it_comes_in(tmp_path, jobs):
    """``on_result`` sees the results of the files analysed, in order,
    whether workers analysed them or this process; a file that names no
    anchor is no analysis's."""
    (tmp_path / "plain.py").write_text("x = 1\n")
    _two_bad_files(tmp_path)
    given = []
    check_run = run(
        [tmp_path],
        Config(root=tmp_path),
        use_cache=False,
        jobs=jobs,
        on_result=given.append,
    )
    assert [(Path(r.path).name, len(r.findings)) for r in given] == [
        ("a.py", 1),
        ("b.py", 1),
    ]
    assert all(any(r is g for r in check_run.results) for g in given)


def test_workers_start_early_and_import_when_families_are_discovered(
    tmp_path, monkeypatch
):
    """Discovery reads every file first, so the workers start then and import
    the analysis meanwhile, each its own."""
    starts = _record_pool_starts(monkeypatch)
    before = _starts_before_the_hierarchy(monkeypatch, starts)
    expected = _two_bad_files(tmp_path)
    config = Config(root=tmp_path, discover_families=True)
    discovering = run([tmp_path], config, use_cache=False, jobs=3)
    assert _sites(discovering) == expected
    assert starts == [(2, False)]
    assert before == [1]


def _starts_before_the_hierarchy(monkeypatch, starts) -> list[int]:
    """How many pool starts each run had made when it read the hierarchy."""
    before = []
    real_load = runner.load_hierarchy

    def load(*args, **kwargs):
        before.append(len(starts))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(runner, "load_hierarchy", load)
    return before


def _a_checkout(folder: Path) -> list[tuple[str, str, tuple[int, int]]]:
    """A tree holding the family's own module (vLLM's layout) and two files
    with a finding each; those findings."""
    write_family_module(folder, SPEC_CLASSES)
    return _two_bad_files(folder)


@pytest.mark.parametrize("jobs", [2, 3])
def test_a_cold_run_over_a_checkout_starts_its_workers_before_the_hierarchy(
    tmp_path, monkeypatch, jobs
):
    """A tree holding the family's own module (vLLM's checkout) has files to
    analyse, the module among them: with nothing cached, the workers start
    before the hierarchy is read and import the analysis meanwhile, each
    its own, whatever their number."""
    starts = _record_pool_starts(monkeypatch)
    before = _starts_before_the_hierarchy(monkeypatch, starts)
    expected = _a_checkout(tmp_path)
    check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=jobs)
    assert _sites(check_run) == expected
    assert starts == [(jobs - 1, False)]
    assert before == [1]


def test_a_first_run_with_the_cache_starts_early_and_a_warm_one_not_at_all(
    tmp_path, monkeypatch
):
    """Nothing cached yet is as cold as ``--no-cache``; once the results are
    cached the next run may analyse nothing, and starts no worker for it."""
    starts = _record_pool_starts(monkeypatch)
    before = _starts_before_the_hierarchy(monkeypatch, starts)
    expected = _a_checkout(tmp_path)
    config = Config(root=tmp_path)
    assert _sites(run([tmp_path], config, jobs=2)) == expected
    assert _sites(run([tmp_path], config, jobs=2)) == expected
    assert starts == [(1, False)]
    assert before == [1, 1]


def test_a_checkout_run_on_some_of_its_files_starts_its_workers_as_before(
    tmp_path, monkeypatch
):
    """Files given (pre-commit's) are no whole tree: the pool starts at the
    second file to analyse, after this process imported the analysis."""
    starts = _record_pool_starts(monkeypatch)
    before = _starts_before_the_hierarchy(monkeypatch, starts)
    expected = _a_checkout(tmp_path)
    files = [tmp_path / "a.py", tmp_path / "b.py", tmp_path / FAMILY_MODULE]
    check_run = run(files, Config(root=tmp_path), use_cache=False, jobs=3)
    assert _sites(check_run) == expected
    assert starts == [(3, True)]
    assert before == [0]


def _record_pool_sizes(monkeypatch) -> list[int]:
    """The number of worker processes each run is given."""
    sizes = []
    real_init = workers.Analyses.__init__

    def init(self, jobs):
        sizes.append(jobs)
        real_init(self, jobs)

    monkeypatch.setattr(workers.Analyses, "__init__", init)
    return sizes


def test_a_run_without_jobs_uses_every_processor(tmp_path, monkeypatch):
    pools = _record_pool_sizes(monkeypatch)
    (tmp_path / "w.py").write_text(BAD)
    run([tmp_path], Config(root=tmp_path), use_cache=False)
    assert pools == [os.cpu_count()]


def test_a_run_on_a_machine_that_hides_its_processors_uses_one_job(
    tmp_path, monkeypatch
):
    """os.cpu_count() is None where the count cannot be known: the files are
    analysed in this process, without a pool."""
    pools = _record_pool_sizes(monkeypatch)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    (tmp_path / "w.py").write_text(BAD)
    run([tmp_path], Config(root=tmp_path), use_cache=False)
    assert pools == [1]


def test_ctrl_c_in_a_fix_says_how_many_files_were_written(tmp_path, monkeypatch):
    """Stopped while the third of four fixed files is about to be written:
    RunInterrupted counts the two written before it."""
    real_write = runner._FixWriter.write

    def write(self, result, config, hierarchy):
        if Path(result.path).name == "w2.py":
            raise KeyboardInterrupt
        real_write(self, result, config, hierarchy)

    monkeypatch.setattr(runner._FixWriter, "write", write)
    for i in range(4):
        (tmp_path / f"w{i}.py").write_text(BAD)
    config = Config(root=tmp_path, fix_formatter="none")
    with pytest.raises(runner.RunInterrupted) as stopped:
        run([tmp_path], config, fix=True, unsafe=True, write=True, use_cache=False,
            jobs=1)  # fmt: skip
    assert stopped.value.written == 2
    texts = [(tmp_path / f"w{i}.py").read_text() for i in range(4)]
    assert texts == [FIXED, FIXED, BAD, BAD]


def test_the_command_lines_jobs_reach_the_runner(tmp_path, monkeypatch, capsys):
    pools = _record_pool_sizes(monkeypatch)
    (tmp_path / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "-j", "3", "w.py"]) == 1
    assert pools == [3]
    assert capsys.readouterr().out.startswith("VSL001 ")


def test_a_run_over_no_paths_finds_nothing(tmp_path):
    config = Config(root=tmp_path)
    check_run = run([], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    assert (check_run.results, check_run.warnings) == ([], [])


def test_a_missing_formatter_is_a_warning_of_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(formatting, "find_executable", lambda kind: None)
    (tmp_path / "w.py").write_text(BAD)
    config = Config(root=tmp_path, fix_formatter="black")
    check_run = run([tmp_path], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    assert check_run.warnings == [
        "black is not installed: fixes are applied without formatting (the "
        "project formats with black; pip install black)"
    ]
    assert check_run.results[0].fixed_source == FIXED.encode()


def test_the_run_returns_the_hierarchy_it_read(tmp_path):
    write_family_module(tmp_path, SPEC_CLASSES)
    check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=1)
    assert check_run.hierarchy.described_sources() == (
        f"scanned tree: {tmp_path / FAMILY_MODULE}"
    )


def test_cached_results_serve_every_run_that_has_nothing_to_fix_in_them(
    tmp_path, monkeypatch
):
    """A check, whatever its fixes; a fix run, when none of them is wanted."""
    (tmp_path / "w.py").write_text(BAD)
    safe = Config(root=tmp_path, extend_safe_fixes=("VSL001",))
    unsafe_only = Config(root=tmp_path)
    for config in (safe, unsafe_only):
        run([tmp_path], config, jobs=1)  # fills the cache

    def no_analysis(*args, **kwargs):
        raise AssertionError("a cached file analysed again")

    monkeypatch.setattr(runner, "analyze_file", no_analysis)
    expected = [("w.py", "VSL001", (2, 40))]
    assert _sites(run([tmp_path], safe, jobs=1)) == expected
    assert _sites(run([tmp_path], unsafe_only, fix=True, jobs=1)) == expected


def test_fixes_are_laid_out_by_the_formatter_of_the_checked_project(
    tmp_path, monkeypatch
):
    """Found from the first path, not from the working folder (which has
    none, so ruff)."""
    monkeypatch.setattr(formatting, "find_executable", lambda kind: None)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".style.yapf").write_text("[style]\nbased_on_style = pep8\n")
    (project / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    config = Config(root=project)
    check_run = run([project], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    assert [w.split(":")[0] for w in check_run.warnings] == ["yapf is not installed"]


def test_an_internal_error_on_one_file_is_its_vsl900_and_the_run_goes_on(
    tmp_path, monkeypatch
):
    real_analyze = runner._analyze_file

    def analyze(path, *args):
        if path.name == "a.py":
            raise RuntimeError("boom")
        return real_analyze(path, *args)

    monkeypatch.setattr(runner, "_analyze_file", analyze)
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BAD)
    check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=1)
    assert [(Path(f.path).name, f.code, f.message) for f in check_run.findings] == [
        ("a.py", "VSL900", "internal error, please report: RuntimeError: boom"),
        (
            "b.py",
            "VSL001",
            "isinstance() check against MLAAttentionSpec leaves out "
            "SlidingWindowMLASpec",
        ),
    ]
    assert check_run.findings[0].path == str(tmp_path / "a.py")
    assert [r.path for r in check_run.results] == [
        str(tmp_path / "a.py"),
        str(tmp_path / "b.py"),
    ]


def test_a_file_in_an_unknown_encoding_is_its_vsl900(tmp_path):
    bad = tmp_path / "w.py"
    bad.write_bytes(b"# -*- coding: klingon -*-\n" + BAD.encode())
    check_run = run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=1)
    assert [(f.path, f.code, f.message) for f in check_run.findings] == [
        (str(bad), "VSL900", "cannot decode: unknown encoding: klingon")
    ]
    assert [r.path for r in check_run.results] == [str(bad)]


def _compressed_tree(root: Path) -> None:
    """A tree whose SlidingWindowMLASpec derives from CompressedSpec, and a
    module of its package that rejects CompressedSpec (VSL007 in this tree
    only) and tests MLAAttentionSpec through a relative import (VSL001)."""
    write_family_module(root, COMPRESSED_PARENT)
    core = root / "vllm" / "v1" / "core"
    core.mkdir()
    for package in (root / "vllm", root / "vllm" / "v1", core):
        (package / "__init__.py").write_text("")
    (core / "x.py").write_text(
        "from ..kv_cache_interface import CompressedSpec, MLAAttentionSpec\n"
        "\n\n"
        "def check(spec):\n"
        "    match spec:\n"
        "        case CompressedSpec():\n"
        "            raise NotImplementedError('K/V layout only')\n"
        "\n\n"
        "mla = isinstance(s, MLAAttentionSpec)\n"
    )


def test_a_fix_run_sees_the_trees_hierarchy_and_the_files_package(tmp_path):
    _compressed_tree(tmp_path)
    config = Config(root=tmp_path, fix_formatter="none")
    check_run = run([tmp_path], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    [result] = [r for r in check_run.results if r.fixed]
    assert result.fixed == ("VSL001",)
    assert _sites(check_run) == [("x.py", "VSL007", (6, 14))]


def test_a_file_the_formatter_failed_on_keeps_the_findings_of_its_tree(
    tmp_path, monkeypatch
):
    """Analysed again as the run analyses it: with the tree's hierarchy and
    the file's package."""
    fake_black(monkeypatch, tmp_path, "echo broken >&2\nexit 1\n")
    tree = tmp_path / "tree"
    _compressed_tree(tree)
    config = Config(root=tree, fix_formatter="black")
    check_run = run([tree], config, fix=True, unsafe=True, use_cache=False, jobs=1)
    [result] = [r for r in check_run.results if r.findings]
    assert result.failure == "not fixed: the formatter failed: broken"
    assert _sites(check_run) == [
        ("x.py", "VSL007", (6, 14)),
        ("x.py", "VSL001", (10, 21)),
    ]


def test_a_check_chooses_no_formatter(tmp_path, monkeypatch):
    """Only fixes are laid out: a check over a tree or over standard input
    names no missing formatter (the same settings warn in a fix run)."""
    monkeypatch.setattr(formatting, "find_executable", lambda kind: None)
    (tmp_path / "w.py").write_text(BAD)
    config = Config(root=tmp_path, fix_formatter="black")
    assert run([tmp_path], config, use_cache=False, jobs=1).warnings == []
    assert runner.run_source("w.py", BAD.encode(), config).warnings == []
    fixing = runner.run_source("w.py", BAD.encode(), config, fix=True, unsafe=True)
    assert [w.split(":")[0] for w in fixing.warnings] == ["black is not installed"]


MRO_TEST = "is_mla = MLAAttentionSpec in type(other_spec).__mro__\n"


def test_a_cached_entry_holding_one_wanted_fix_is_fixed_not_served(tmp_path):
    """An entry serves a fix run only when none of its findings is to be
    fixed: one safe fix beside a finding without a fix is enough."""
    (tmp_path / "w.py").write_text(BAD + MRO_TEST)
    config = Config(root=tmp_path, extend_safe_fixes=("VSL001",), fix_formatter="none")
    checked = run([tmp_path], config, jobs=1)  # fills the cache
    assert _sites(checked) == [("w.py", "VSL001", (2, 40)), ("w.py", "VSL005", (3, 10))]
    fixed = run([tmp_path], config, fix=True, jobs=1)
    assert fixed.results[0].fixed == ("VSL001",)
    assert fixed.results[0].fixed_source == (FIXED + MRO_TEST).encode()
    assert _sites(fixed) == [("w.py", "VSL005", (3, 10))]


def test_a_warm_check_keeps_the_suppressed_findings(tmp_path, monkeypatch):
    """A cached file's suppressed findings come back with it (`--statistics`
    and `--show-suppressed` count them), as the cold check found them."""
    (tmp_path / "w.py").write_text(NARROWED)
    config = Config(root=tmp_path)
    cold = run([tmp_path], config, jobs=1)

    def no_analysis(*args, **kwargs):
        raise AssertionError("a cached file analysed again")

    monkeypatch.setattr(runner, "analyze_file", no_analysis)
    warm = run([tmp_path], config, jobs=1)
    why = (
        "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 5) already "
        "excludes SlidingWindowMLASpec"
    )
    for check_run in (cold, warm):
        assert check_run.findings == []
        assert [
            (f.code, f.location, f.suppressed_by) for f in check_run.suppressed
        ] == [("VSL001", (7, 25), why)]


def test_a_write_the_system_fails_is_the_files_failure_and_the_run_goes_on(
    tmp_path, monkeypatch
):
    """Every write fails (an I/O error): each file says so, keeps its
    findings, stays as it was, and no temporary file is left."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BAD)
    failing_disk(monkeypatch)
    config = Config(root=tmp_path, fix_formatter="none")
    fixed = run(
        [tmp_path], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1
    )
    assert [(Path(r.path).name, r.failure) for r in fixed.results] == [
        ("a.py", "not written: [Errno 5] Input/output error"),
        ("b.py", "not written: [Errno 5] Input/output error"),
    ]
    assert _sites(fixed) == [("a.py", "VSL001", (2, 40)), ("b.py", "VSL001", (2, 40))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]
    assert (tmp_path / "a.py").read_text() == (tmp_path / "b.py").read_text() == BAD


def test_a_failed_write_reports_the_files_findings_with_the_trees_classes(
    tmp_path, monkeypatch
):
    """The findings a file keeps after its write failed come from the
    hierarchy read from the tree: a plugin's companion, a subclass of
    SlidingWindowMLASpec, is excluded by a test of its parent."""
    (tmp_path / "specs.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\n"
        "class XMLAAttentionSpec(MLAAttentionSpec):\n"
        "    pass\n"
        "\n\n"
        "class XSlidingWindowMLASpec(SlidingWindowMLASpec):\n"
        "    pass\n"
    )
    (tmp_path / "use.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n"
        "from specs import XMLAAttentionSpec\n"
        "\n\n"
        "def is_mla(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return False\n"
        "    return isinstance(spec, XMLAAttentionSpec)\n"
        "\n\n"
        "OK = isinstance(S, MLAAttentionSpec)\n"
    )
    failing_disk(monkeypatch)
    config = Config(root=tmp_path, fix_formatter="none")
    fixed = run(
        [tmp_path], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1
    )
    [failed] = [r for r in fixed.results if r.failure]
    assert Path(failed.path).name == "use.py"
    assert [(f.code, f.location) for f in failed.findings] == [("VSL001", (12, 20))]


def test_a_checks_two_halves_give_its_whole_analysis(tmp_path):
    """screen_file settles, without libcst, a file with no candidate or one
    that does not parse or decode; for the rest, its slice finished by
    finish_file gives what analyze_file does."""
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    path, source = Path("w.py"), BAD.encode()
    relevant = runner.screen_file(path, source, config, hierarchy)
    assert not isinstance(relevant, runner.FileResult)
    finished = runner.finish_file(path, source, relevant, config, hierarchy)
    assert finished == runner.analyze_file(path, source, config, hierarchy, Mode())
    assert [(f.code, f.location) for f in finished.findings] == [("VSL001", (2, 40))]
    imports_only = b"from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    assert runner.screen_file(
        Path("p.py"), imports_only, config, hierarchy
    ) == runner.FileResult("p.py", [])
    [broken] = runner.screen_file(
        Path("s.py"), b"MLAAttentionSpec(\n", config, hierarchy
    ).findings
    assert (broken.code, broken.message) == (
        "VSL900",
        "cannot parse: '(' was never closed",
    )
    undecodable = runner.screen_file(
        Path("d.py"), b"MLAAttentionSpec = 1\n\xff\n", config, hierarchy
    )
    [reason] = undecodable.findings
    assert (undecodable.path, reason.path) == ("d.py", "d.py")
    assert reason.message.startswith("cannot decode: ")


RELATIVE = """\
from ..kv_cache_interface import MLAAttentionSpec{also}


def is_mla(spec):
    return isinstance(spec, {classes})
"""


OWN_CLASSES = """\
class MLAAttentionSpec:
    pass


class SlidingWindowMLASpec:
    pass


def is_mla(spec):
    return isinstance(spec, MLAAttentionSpec)
"""


def test_a_checks_two_halves_know_the_files_module_from_its_path(tmp_path):
    """In vllm/v1/worker/, `from ..kv_cache_interface import` names vLLM's
    classes: the test naming both is settled by the first half. In
    vllm/v1/kv_cache_interface.py the classes defined are vLLM's own: the
    test is a finding of the second half."""
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    folder = tmp_path / "vllm" / "v1" / "worker"
    folder.mkdir(parents=True)
    for package in (tmp_path / "vllm", tmp_path / "vllm" / "v1", folder):
        (package / "__init__.py").touch()
    covered = RELATIVE.format(
        also=", SlidingWindowMLASpec",
        classes="(MLAAttentionSpec, SlidingWindowMLASpec)",
    ).encode()
    path = folder / "covered.py"
    assert runner.screen_file(path, covered, config, hierarchy) == runner.FileResult(
        str(path), []
    )
    path, source = tmp_path / FAMILY_MODULE, OWN_CLASSES.encode()
    relevant = runner.screen_file(path, source, config, hierarchy)
    finished = runner.finish_file(path, source, relevant, config, hierarchy)
    assert [(f.code, f.location) for f in finished.findings] == [("VSL001", (10, 29))]


NARROWED = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec


def page(spec):
    if isinstance(spec, SlidingWindowMLASpec):
        return 1
    if isinstance(spec, MLAAttentionSpec):
        return 2
    return isinstance(spec, MLAAttentionSpec)  # noqa: VSL001
"""


def test_a_checks_second_half_keeps_the_suppressed_and_applies_noqa(tmp_path):
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    path, source = Path("n.py"), NARROWED.encode()
    relevant = runner.screen_file(path, source, config, hierarchy)
    finished = runner.finish_file(path, source, relevant, config, hierarchy)
    assert finished.findings == []
    assert [(f.code, f.location) for f in finished.suppressed] == [("VSL001", (7, 25))]


def test_analysing_a_file_is_the_analyse_pause_point(tmp_path, monkeypatch):
    """Where the Ctrl-C tests hold a worker (tests/test_hard_edges.py, in a
    process of its own)."""
    paused = []
    monkeypatch.setattr(runner, "pause_point", lambda *at: paused.append(at))
    path = Path("w.py")
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    result = runner.analyze_file(path, BAD.encode(), config, hierarchy, Mode())
    assert paused == [("analyse", path)]
    assert _sites(CheckRun([result], hierarchy)) == [("w.py", "VSL001", (2, 40))]


def test_a_files_last_analysis_is_handed_to_the_analysis(tmp_path, monkeypatch):
    """The same text analysed again with its last analysis is answered from
    it: libcst and the rules run once."""
    from vllm_spec_lint.core.last_analysis import LastAnalysis

    analysed = count_slice_analyses(monkeypatch)
    path, last = Path("w.py"), LastAnalysis()
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    for _ in range(2):
        again = runner.analyze_file(path, BAD.encode(), config, hierarchy, Mode(), last)
        assert _sites(CheckRun([again], hierarchy)) == [("w.py", "VSL001", (2, 40))]
    assert len(analysed) == 1


def test_screening_a_file_is_the_analyse_pause_point(tmp_path, monkeypatch):
    """Tests stop a run while the main process screens a file it took back,
    as while a worker analyses one (VSL_TEST_PAUSE, edges/files.py)."""
    paused = []
    monkeypatch.setattr(runner, "pause_point", lambda *at: paused.append(at))
    path = Path("w.py")
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    runner.screen_file(path, BAD.encode(), config, hierarchy)
    assert paused == [("analyse", path)]


def test_an_odd_file_in_either_half_is_an_internal_error_of_that_file(
    tmp_path, monkeypatch
):
    config, hierarchy = Config(root=tmp_path), ClassHierarchy.default()
    path, source = Path("w.py"), BAD.encode()
    relevant = runner.screen_file(path, source, config, hierarchy)

    def odd(*args, **kwargs):
        raise ValueError("odd")

    expected = runner.FileResult(
        "w.py", [parse_error("w.py", "internal error, please report: ValueError: odd")]
    )
    monkeypatch.setattr(runner, "analyze_slice", odd)
    assert runner.finish_file(path, source, relevant, config, hierarchy) == expected
    monkeypatch.setattr(runner, "screen_source", odd)
    assert runner.screen_file(path, source, config, hierarchy) == expected


def test_a_check_gives_the_pool_its_two_halves_and_a_fix_does_not(
    tmp_path, monkeypatch
):
    """The main process screens files it takes back only in a check; the
    halves it is given analyse with the run's own settings."""
    given = []
    monkeypatch.setattr(
        workers.Analyses, "help", lambda self: given.append((self.screen, self.finish))
    )
    (tmp_path / "w.py").write_text(BAD)
    config = Config(root=tmp_path, select=("VSL002",))
    assert run([tmp_path], config, use_cache=False, jobs=1).findings == []
    fix_config = Config(root=tmp_path, fix_formatter="none")
    run([tmp_path], fix_config, fix=True, unsafe=True, use_cache=False, jobs=1)
    [(screen, finish), fixing] = given
    assert fixing == (None, None)
    path, source = tmp_path / "w.py", BAD.encode()
    # Selected VSL002 only: the file's VSL001 test is no finding.
    assert finish(path, source, screen(path, source)).findings == []


def test_an_internal_error_stops_the_workers(tmp_path, monkeypatch):
    """No worker outlives a run that fails: it would hold the command's
    output streams open, and whoever reads them would wait."""
    stopped = []
    real_stop = workers.Analyses.stop

    def stop(self):
        stopped.append(self.pool is not None)
        real_stop(self)

    def failing_pass(self):
        raise RuntimeError("the pass failed")

    monkeypatch.setattr(workers.Analyses, "stop", stop)
    monkeypatch.setattr(runner.TreePairing, "start", failing_pass)
    _two_bad_files(tmp_path)
    with pytest.raises(RuntimeError, match="the pass failed"):
        run([tmp_path], Config(root=tmp_path), use_cache=False, jobs=2)
    assert stopped == [True]
