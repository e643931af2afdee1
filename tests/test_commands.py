"""What the commands decide, as functions of their own (issue 44): the
NIXL worker a path leads to, the codemod's summary, the settings a command
line makes, the stand-ins' text. The whole command line is tested in
test_cli*.py; these pin the decisions alone."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vllm_spec_lint.faces.cli_options import build_parser, config_for, reads_stdin
from vllm_spec_lint.faces.codemods import NIXL_WORKER
from vllm_spec_lint.faces.commands.codemod import _codemod_summary, _nixl_worker_under
from vllm_spec_lint.faces.commands.families import _stand_ins_text
from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy, Family
from vllm_spec_lint.model.stand_ins import stand_in_families

WORKER = "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"


def test_the_nixl_worker_path_is_the_one_the_codemod_looks_for():
    assert NIXL_WORKER == WORKER


@pytest.mark.parametrize(
    "start, expected",
    [
        ("", WORKER),  # a checkout
        ("vllm", WORKER.removeprefix("vllm/")),
        ("vllm/distributed/kv_transfer/kv_connector/v1/nixl", "base_worker.py"),
        ("unrelated", WORKER),  # not found: where it would be
    ],
)
def test_a_folder_leads_to_the_worker_inside_it(tmp_path, start, expected):
    worker = tmp_path / "checkout" / WORKER
    worker.parent.mkdir(parents=True)
    worker.write_text("")
    (tmp_path / "checkout" / "unrelated").mkdir()
    root = tmp_path / "checkout" / start
    assert _nixl_worker_under(root) == root / expected


def test_a_file_is_its_own_worker(tmp_path):
    file = tmp_path / "worker.py"
    file.write_text("")
    assert _nixl_worker_under(file) == file


def _result(*fixed: tuple[str, ...]):
    changed = [SimpleNamespace(fixed=codes) for codes in fixed]
    return SimpleNamespace(results=[*changed, SimpleNamespace(fixed=())]), changed


def test_the_codemod_summary_counts_files_fixes_per_rule_and_failures():
    result, changed = _result(("VSL001", "VSL001"), ("VSL004",))
    assert _codemod_summary(result, changed, 1, diff=False) == (
        "3 files checked, 2 changed, 3 findings fixed, 1 failure (VSL001: 2, VSL004: 1)"
    )
    assert _codemod_summary(result, changed, 0, diff=True) == (
        "3 files checked, 2 would change, 3 findings would fix, 0 failures "
        "(VSL001: 2, VSL004: 1)"
    )
    nothing, none = _result()
    assert _codemod_summary(nothing, none, 0, diff=False) == (
        "1 file checked, 0 changed, 0 findings fixed, 0 failures"
    )


def test_the_command_lines_options_make_the_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(
        [
            "check", "--select", "VSL001", "--extend-select", "VSL002",
            "--ignore", "VSL003", "--line-length", "100", "--strict",
            "--explain-suppressions", "--extend-exclude", "build/", ".",
        ]
    )  # fmt: skip
    config = config_for(args)
    assert config.select == ("VSL001", "VSL002")
    assert config.ignore == ("VSL003",)
    assert config.line_length == 100
    assert config.strict and config.explain_suppressed
    assert config.command_line_exclude == ("build/",)
    plain = config_for(build_parser().parse_args(["check", "."]))
    assert (plain.strict, plain.line_length, plain.command_line_exclude) == (
        False,
        None,
        (),
    )


def test_standard_input_is_read_for_a_dash_or_a_stdin_filename():
    parse = build_parser().parse_args
    assert reads_stdin(parse(["check", "-"]))
    assert reads_stdin(parse(["check", "--stdin-filename", "x.py"]))
    assert not reads_stdin(parse(["check", "."]))
    assert not reads_stdin(parse(["rules"]))


def test_the_stand_ins_text_names_each_family_and_the_configuration():
    kci = KV_CACHE_INTERFACE
    hierarchy = ClassHierarchy.default().with_classes(
        {
            "p.specs.PMLAAttentionSpec": (f"{kci}.MLAAttentionSpec",),
            "q.TkvMLAAttentionSpec": (f"{kci}.MLAAttentionSpec",),
        },
        "2 classes",
        "scanned files",
    )
    mla = Family("mla", kci, ("MLAAttentionSpec", "SlidingWindowMLASpec"))
    text = _stand_ins_text(stand_in_families([mla], hierarchy))
    assert text.splitlines() == [
        "stand-in mla:PMLAAttentionSpec (p.specs)",
        "  anchor: PMLAAttentionSpec",
        f"  companion: SlidingWindowMLASpec ({kci})",
        "  from: PMLAAttentionSpec stands in for MLAAttentionSpec (its name extends "
        "MLAAttentionSpec's)",
        "stand-in mla:TkvMLAAttentionSpec (q)",
        "  anchor: TkvMLAAttentionSpec",
        f"  companion: SlidingWindowMLASpec ({kci})",
        "  from: TkvMLAAttentionSpec stands in for MLAAttentionSpec (its name extends "
        "MLAAttentionSpec's)",
        "To check the stand-ins when files are checked a few at a time (pre-commit, "
        "flake8, an editor), add to [tool.vllm-spec-lint]:",
        "extend-families = [",
        '  { name = "mla:PMLAAttentionSpec", module = "p.specs", members = '
        f'["PMLAAttentionSpec", "{kci}.SlidingWindowMLASpec"] }},',
        '  { name = "mla:TkvMLAAttentionSpec", module = "q", members = '
        f'["TkvMLAAttentionSpec", "{kci}.SlidingWindowMLASpec"] }},',
        "]",
    ]
