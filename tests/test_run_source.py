"""``runner.run_source``: a buffer checked as the file at its name (standard
input, the language server)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import (
    COMPRESSED_PARENT,
    write_covering_hierarchy,
    write_family_module,
)
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.runner import run_source

SOURCE = (
    b"from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    b"is_mla = isinstance(s, MLAAttentionSpec)\n"
)
FIXED = (
    b"from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    b"is_mla = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
)


def _outcome(run):
    [result] = run.results
    return [f.code for f in result.findings], result.fixed_source, run.warnings


def test_defaults_are_the_explicit_spelling(tmp_path):
    name = str(tmp_path / "m.py")
    config = Config(fix_formatter="none")
    default = run_source(name, SOURCE, config, fix=True)
    explicit = run_source(
        name, SOURCE, config, fix=True, unsafe=False, force_exclude=False
    )
    # VSL001's fix is unsafe: not applied unless asked.
    assert _outcome(default) == _outcome(explicit) == (["VSL001"], None, [])
    unsafe = run_source(name, SOURCE, config, fix=True, unsafe=True)
    assert _outcome(unsafe) == ([], FIXED, [])


def test_an_excluded_name_is_checked_unless_exclusion_is_forced(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # patterns are read from the working folder
    name = "m.py"
    config = Config(exclude=("m.py",))
    assert [f.code for f in run_source(name, SOURCE, config).findings] == ["VSL001"]
    assert run_source(name, SOURCE, config, force_exclude=True).results == []


def test_the_hierarchy_and_warnings_of_the_files_tree_are_returned(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    kci = write_family_module(tmp_path, "class MLAAttentionSpec(\n")
    warning = (
        f"{kci}: cannot read class hierarchy: '(' was never closed (<unknown>, line 1)"
    )
    config = Config(exclude=("m.py",))
    for force_exclude in (False, True):
        # Forced, the excluded name returns early: with the same hierarchy.
        run = run_source("m.py", SOURCE, config, force_exclude=force_exclude)
        assert len(run.results) == (0 if force_exclude else 1)
        assert run.warnings == [warning]
        assert run.hierarchy.sources == ("built-in defaults",)
    good = tmp_path / "good"
    kci = write_covering_hierarchy(good)
    run = run_source(str(good / "m.py"), SOURCE, Config())
    assert run.findings == []
    assert run.hierarchy.bases["vllm.v1.kv_cache_interface.SlidingWindowMLASpec"] == (
        "vllm.v1.kv_cache_interface.MLAAttentionSpec",
    )  # in the built-in hierarchy, SlidingWindowSpec
    assert Path(run.hierarchy.sources[-1]) == kci


def test_a_buffer_over_the_size_limit_is_named_in_its_vsl900(tmp_path):
    big = SOURCE + b"#" * 2**20 + b"\n"
    run = run_source(str(tmp_path / "big.py"), big, Config(max_file_size_mb=1))
    [finding] = run.findings
    assert (finding.code, finding.path, finding.message) == (
        "VSL900",
        str(tmp_path / "big.py"),
        "not analysed: 1.0 MiB is over the 1 MiB limit (max-file-size)",
    )


def test_a_parent_only_the_trees_hierarchy_knows_is_screened_in(tmp_path):
    write_family_module(tmp_path, COMPRESSED_PARENT)
    source = (
        b"from vllm.v1.kv_cache_interface import CompressedSpec\n"
        b"\n\n"
        b"def check(spec):\n"
        b"    if isinstance(spec, CompressedSpec):\n"
        b"        raise ValueError('no compression')\n"
    )
    run = run_source(str(tmp_path / "c.py"), source, Config())
    assert [(f.code, f.location) for f in run.findings] == [("VSL007", (5, 25))]


def test_a_fix_is_laid_out_by_the_chosen_formatter(tmp_path):
    config = Config(fix_formatter="ruff", line_length=60)
    run = run_source(str(tmp_path / "m.py"), SOURCE, config, fix=True, unsafe=True)
    assert _outcome(run) == (
        [],
        b"from vllm.v1.kv_cache_interface import (\n"
        b"    MLAAttentionSpec,\n"
        b"    SlidingWindowMLASpec,\n"
        b")\n"
        b"is_mla = isinstance(\n"
        b"    s, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        b")\n",
        [],
    )


def test_a_missing_formatter_is_among_the_warnings(tmp_path, monkeypatch):
    from vllm_spec_lint.repair import formatting

    # An environment without yapf: nothing beside the interpreter, an empty PATH.
    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    config = Config(fix_formatter="yapf")
    run = run_source(str(tmp_path / "m.py"), SOURCE, config, fix=True, unsafe=True)
    assert _outcome(run) == (
        [],
        FIXED,
        [
            "yapf is not installed: fixes are applied without formatting "
            "(the project formats with yapf; pip install yapf)"
        ],
    )


def test_a_buffer_of_exactly_the_size_limit_is_analysed(tmp_path):
    padding = 2**20 - len(SOURCE) - 1
    exact = SOURCE + b"#" * padding + b"\n"
    assert len(exact) == 2**20
    run = run_source(str(tmp_path / "edge.py"), exact, Config(max_file_size_mb=1))
    assert [f.code for f in run.findings] == ["VSL001"]
    over = run_source(
        str(tmp_path / "edge.py"), exact + b"\n", Config(max_file_size_mb=1)
    )
    assert [f.code for f in over.findings] == ["VSL900"]


def test_a_non_ascii_buffer_with_an_unknown_encoding_cannot_be_decoded(tmp_path):
    source = b'# -*- coding: no-such-codec -*-\nx = "\xc3\xa9"\n'
    [finding] = run_source(str(tmp_path / "bad.py"), source, Config()).findings
    assert (finding.code, finding.message) == (
        "VSL900",
        "cannot decode: unknown encoding: no-such-codec",
    )
