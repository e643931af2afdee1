"""Baselines (faces/baseline.py) on their own: the order entries are
written in, what makes a file no baseline, which findings are new and which
entries are stale, on small trees written here."""

from __future__ import annotations

import json

import pytest

from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.faces.baseline import (
    BaselineError,
    read_baseline,
    split_by_baseline,
    write_baseline,
)


def _finding(path, row: int, code: str = "VSL001", text: str = "ok = f(spec)"):
    return Finding(code, "m", str(path), (row, 1), (row, 2), line_text=text)


def test_entries_are_written_by_path_then_place_then_code(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    findings = [
        _finding(b, 1),
        _finding(a, 5, "VSL002"),
        _finding(a, 5, "VSL001"),
        _finding(a, 2),  # same line text as the one at row 5: occurrence 0
    ]
    baseline = tmp_path / "baseline.json"
    assert write_baseline(baseline, findings) == 4
    entries = json.loads(baseline.read_text())["entries"]
    assert [(e["path"], e["code"], e["occurrence"]) for e in entries] == [
        ("a.py", "VSL001", 0),
        ("a.py", "VSL001", 1),
        ("a.py", "VSL002", 0),
        ("b.py", "VSL001", 0),
    ]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{", "Expecting property name enclosed in double quotes"),  # ValueError
        ('{"version": 1}', "'entries'"),  # KeyError
        ('{"version": 1, "entries": [{"path": "a.py"}]}', "missing 3 required"),
        ("[1]", "'list' object has no attribute 'get'"),  # AttributeError
    ],
    ids=["not-json", "no-entries", "entry-fields", "not-an-object"],
)
def test_a_file_that_is_no_baseline_says_why(tmp_path, text, reason):
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(BaselineError) as raised:
        read_baseline(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: not a vllm-spec-lint baseline: ")
    assert reason in message


def test_new_findings_come_in_path_then_place_order(tmp_path):
    baseline = tmp_path / "baseline.json"
    write_baseline(baseline, [])
    b2, a9, a3 = (_finding(tmp_path / "b.py", 2), _finding(tmp_path / "a.py", 9),
                  _finding(tmp_path / "a.py", 3, text="other"))  # fmt: skip
    new, stale = split_by_baseline([b2, a9, a3], baseline, [tmp_path])
    assert (new, stale) == ([a3, a9, b2], [])


def test_stale_entries_are_those_under_the_checked_paths_only(tmp_path):
    for folder in ("proj", "proj_old", "other"):
        (tmp_path / folder).mkdir()
    baseline = tmp_path / "baseline.json"
    gone = [
        _finding(tmp_path / "proj" / "a.py", 1),
        _finding(tmp_path / "proj_old" / "b.py", 1),
        _finding(tmp_path / "other" / "c.py", 1),
        _finding(tmp_path / "single.py", 1),
    ]
    write_baseline(baseline, gone)
    # Nothing is found any more. Checked: proj (a folder) and single.py (a
    # file); proj_old is not under proj.
    checked = [tmp_path / "proj", tmp_path / "single.py"]
    new, stale = split_by_baseline([], baseline, checked)
    assert new == []
    assert sorted(e.path for e in stale) == ["proj/a.py", "single.py"]
