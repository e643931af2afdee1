"""scripts/mutation_state.py and the report over what it keeps: mutmut's
verdicts saved in the repository, merged across machines, restored as
mutmut's own meta files, and flagged when the code moved on."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

STATE = REPO / "scripts" / "mutation_state.py"
REPORT = REPO / "scripts" / "mutation_report.py"
EQUIVALENT = "- `vllm_spec_lint.m.x_g__mutmut_2`: only its name changes.\n"


def _git(where, *args):
    done = subprocess.run(
        ["git", *args], cwd=where, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _project(tmp_path):
    """A git checkout with one package module, committed, and mutmut's folder."""
    root = tmp_path / "project"
    (root / "vllm_spec_lint").mkdir(parents=True)
    (root / "vllm_spec_lint" / "m.py").write_text("def f():\n    return 1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m")
    (root / "mutants" / "vllm_spec_lint").mkdir(parents=True)
    return root, _git(root, "rev-parse", "--short", "HEAD")


def _meta(root, verdicts, hashes):
    # mutmut 3.8's meta file, as SourceFileMutationData.save writes it.
    meta = {
        "exit_code_by_key": verdicts,
        "hash_by_function_name": hashes,
        "type_check_error_by_key": {},
        "durations_by_key": {"vllm_spec_lint.m.x_f__mutmut_1": 0.5},
        "estimated_durations_by_key": {},
    }
    path = root / "mutants" / "vllm_spec_lint" / "m.py.meta"
    path.write_text(json.dumps(meta, indent=4))


def _run(script, root, *args):
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=root,
        capture_output=True,
        text=True,
    )


def _state(root, action, *extra):
    return _run(
        STATE,
        root,
        action,
        "--mutants",
        str(root / "mutants"),
        "--verdicts",
        str(root / "mutation" / "verdicts"),
        *extra,
    )


def _report(root):
    listing = root / "EQUIVALENT.md"
    listing.write_text(EQUIVALENT)
    return _run(
        REPORT,
        root,
        "--verdicts",
        str(root / "mutation" / "verdicts"),
        "--equivalent-from",
        str(listing),
    )


def _saved(root):
    path = root / "mutation" / "verdicts" / "vllm_spec_lint" / "m.json"
    return json.loads(path.read_text())


def _save_two_functions(root):
    """x_f with a killed and a surviving mutant, x_g with a killed one."""
    _meta(
        root,
        {
            "vllm_spec_lint.m.x_f__mutmut_1": 1,
            "vllm_spec_lint.m.x_f__mutmut_2": 0,
            "vllm_spec_lint.m.x_g__mutmut_1": 1,
        },
        {"x_f": "aaaaaaaaaaaa", "x_g": "bbbbbbbbbbbb"},
    )
    assert _state(root, "save").returncode == 0


def test_save_keeps_each_verdict_with_its_functions_hash_and_commit(tmp_path):
    root, commit = _project(tmp_path)
    _meta(
        root,
        {"vllm_spec_lint.m.x_f__mutmut_1": 1, "vllm_spec_lint.m.x_f__mutmut_2": 0},
        {"x_f": "aaaaaaaaaaaa"},
    )
    done = _state(root, "save")
    assert (done.stdout, done.stderr, done.returncode) == (
        "saved the verdicts of 1 modules\n",
        "",
        0,
    )
    assert _saved(root) == {
        "commit": commit,
        "functions": {"x_f": "aaaaaaaaaaaa"},
        "verdicts": {
            "vllm_spec_lint.m.x_f__mutmut_1": 1,
            "vllm_spec_lint.m.x_f__mutmut_2": 0,
        },
    }


def test_save_merges_an_unchecked_mutant_keeps_its_verdict_while_its_code_holds(
    tmp_path,
):
    root, _ = _project(tmp_path)
    _save_two_functions(root)
    # Another machine: x_f unchanged and not run; x_f_2 re-judged; x_g edited.
    _meta(
        root,
        {
            "vllm_spec_lint.m.x_f__mutmut_1": None,
            "vllm_spec_lint.m.x_f__mutmut_2": 1,
            "vllm_spec_lint.m.x_g__mutmut_1": None,
        },
        {"x_f": "aaaaaaaaaaaa", "x_g": "cccccccccccc"},
    )
    assert _state(root, "save").returncode == 0
    assert _saved(root)["verdicts"] == {
        "vllm_spec_lint.m.x_f__mutmut_1": 1,
        "vllm_spec_lint.m.x_f__mutmut_2": 1,
        "vllm_spec_lint.m.x_g__mutmut_1": None,
    }
    assert _saved(root)["functions"] == {"x_f": "aaaaaaaaaaaa", "x_g": "cccccccccccc"}


def test_restore_writes_mutmuts_meta_file_back(tmp_path):
    root, _ = _project(tmp_path)
    _meta(root, {"vllm_spec_lint.m.x_f__mutmut_1": 36}, {"x_f": "aaaaaaaaaaaa"})
    assert _state(root, "save").returncode == 0
    (root / "mutants" / "vllm_spec_lint" / "m.py.meta").unlink()
    done = _state(root, "restore")
    assert (done.stdout, done.returncode) == ("restored the verdicts of 1 modules\n", 0)
    meta = root / "mutants" / "vllm_spec_lint" / "m.py.meta"
    # The five keys mutmut 3.8's SourceFileMutationData.load takes, no other.
    assert json.loads(meta.read_text()) == {
        "exit_code_by_key": {"vllm_spec_lint.m.x_f__mutmut_1": 36},
        "hash_by_function_name": {"x_f": "aaaaaaaaaaaa"},
        "type_check_error_by_key": {},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
    }


def test_save_refuses_a_package_with_uncommitted_changes(tmp_path):
    root, _ = _project(tmp_path)
    _meta(root, {"vllm_spec_lint.m.x_f__mutmut_1": 1}, {"x_f": "aaaaaaaaaaaa"})
    (root / "vllm_spec_lint" / "m.py").write_text("def f():\n    return 2\n")
    done = _state(root, "save")
    assert done.stderr == (
        "error: vllm_spec_lint/ has uncommitted changes; "
        "commit them before saving verdicts\n"
    )
    assert done.returncode == 2
    assert not (root / "mutation").exists()


def test_the_report_reads_the_kept_verdicts_by_mutmuts_exit_codes(tmp_path):
    root, _ = _project(tmp_path)
    verdicts = {
        "vllm_spec_lint.m.x_f__mutmut_1": 1,
        "vllm_spec_lint.m.x_f__mutmut_2": 3,
        "vllm_spec_lint.m.x_f__mutmut_3": 0,
        "vllm_spec_lint.m.x_f__mutmut_4": 33,
        "vllm_spec_lint.m.x_f__mutmut_5": 36,
        "vllm_spec_lint.m.x_f__mutmut_6": None,
        "vllm_spec_lint.m.x_g__mutmut_1": 1,
        "vllm_spec_lint.m.x_g__mutmut_2": 0,
    }
    _meta(root, verdicts, {"x_f": "aaaaaaaaaaaa", "x_g": "bbbbbbbbbbbb"})
    assert _state(root, "save").returncode == 0
    done = _report(root)
    assert done.stdout.splitlines()[2:] == [
        "| vllm_spec_lint/m.py | 8 | 1 | 3 | 1 | 1 | 1 | 1 | 50.0% |",
        "| all | 8 | 1 | 3 | 1 | 1 | 1 | 1 | 50.0% |",
    ]
    assert done.stderr == (
        "under the 90% bar: vllm_spec_lint/m.py\n"
        "not checked yet: 1 mutants of vllm_spec_lint/m.py\n"
    )
    assert done.returncode == 1


def _save_one_killed_one_equivalent(root):
    _meta(
        root,
        {"vllm_spec_lint.m.x_f__mutmut_1": 1, "vllm_spec_lint.m.x_g__mutmut_2": 0},
        {"x_f": "aaaaaaaaaaaa", "x_g": "bbbbbbbbbbbb"},
    )
    assert _state(root, "save").returncode == 0


def test_the_report_names_a_module_whose_code_changed_since_its_verdicts(tmp_path):
    root, commit = _project(tmp_path)
    _save_one_killed_one_equivalent(root)
    assert (_report(root).stderr, _report(root).returncode) == ("", 0)
    (root / "vllm_spec_lint" / "m.py").write_text("def f():\n    return 2\n")
    done = _report(root)
    assert done.stderr == (
        f"code changed since its verdicts ({commit}): vllm_spec_lint/m.py\n"
    )
    assert done.returncode == 1


def test_the_report_names_a_commit_git_does_not_know(tmp_path):
    root, _ = _project(tmp_path)
    _save_one_killed_one_equivalent(root)
    saved = root / "mutation" / "verdicts" / "vllm_spec_lint" / "m.json"
    saved.write_text(saved.read_text().replace(_saved(root)["commit"], "0badc0de"))
    done = _report(root)
    assert done.stderr == (
        "verdicts' commit not comparable (fatal: bad revision '0badc0de'): "
        "vllm_spec_lint/m.py\n"
    )
    assert done.returncode == 1


def test_the_report_without_saved_verdicts_exits_2(tmp_path):
    root, _ = _project(tmp_path)
    done = _report(root)
    assert (
        done.stderr == f"error: {root / 'mutation' / 'verdicts'}: no saved verdicts\n"
    )
    assert done.returncode == 2


def test_restore_can_set_survivors_back_to_be_judged_again(tmp_path):
    """Survivors under the prefix, less the listed equivalents, come back as
    not checked; killed mutants and other modules' survivors keep theirs."""
    root, _ = _project(tmp_path)
    verdicts = {
        "vllm_spec_lint.m.x_f__mutmut_1": 0,
        "vllm_spec_lint.m.x_f__mutmut_2": 0,
        "vllm_spec_lint.m.x_f__mutmut_3": 1,
        "vllm_spec_lint.m.x_g__mutmut_1": 0,
    }
    _meta(root, verdicts, {"x_f": "aaaaaaaaaaaa", "x_g": "bbbbbbbbbbbb"})
    assert _state(root, "save").returncode == 0
    listing = tmp_path / "listing.md"
    listing.write_text("- `vllm_spec_lint.m.x_f__mutmut_2`: only its name changes.\n")
    done = _state(
        root, "restore", "--rejudge", "vllm_spec_lint.m.x_f", "--listing", str(listing)
    )
    assert (done.returncode, done.stderr) == (0, "")
    meta = root / "mutants" / "vllm_spec_lint" / "m.py.meta"
    assert json.loads(meta.read_text())["exit_code_by_key"] == {
        "vllm_spec_lint.m.x_f__mutmut_1": None,
        "vllm_spec_lint.m.x_f__mutmut_2": 0,
        "vllm_spec_lint.m.x_f__mutmut_3": 1,
        "vllm_spec_lint.m.x_g__mutmut_1": 0,
    }
    # Stopped before judging them: save keeps the verdicts they had.
    assert _state(root, "save").returncode == 0
    assert _saved(root)["verdicts"] == verdicts


def test_move_carries_a_functions_verdicts_and_hash_to_its_new_module(tmp_path):
    root, commit = _project(tmp_path)
    _save_two_functions(root)
    done = _state(root, "move", "vllm_spec_lint.m", "vllm_spec_lint.sub.n", "x_f")
    assert (done.stdout, done.stderr, done.returncode) == (
        "moved the verdicts of 2 mutants\n",
        "",
        0,
    )
    assert _saved(root) == {
        "commit": commit,
        "functions": {"x_g": "bbbbbbbbbbbb"},
        "verdicts": {"vllm_spec_lint.m.x_g__mutmut_1": 1},
    }
    moved = root / "mutation" / "verdicts" / "vllm_spec_lint" / "sub" / "n.json"
    assert json.loads(moved.read_text()) == {
        "commit": commit,
        "functions": {"x_f": "aaaaaaaaaaaa"},
        "verdicts": {
            "vllm_spec_lint.sub.n.x_f__mutmut_1": 1,
            "vllm_spec_lint.sub.n.x_f__mutmut_2": 0,
        },
    }
    # Restored as mutmut's meta file of the new module: mutmut keeps the
    # verdicts only while the function's hash there is the same.
    assert _state(root, "restore").returncode == 0
    meta = root / "mutants" / "vllm_spec_lint" / "sub" / "n.py.meta"
    assert json.loads(meta.read_text())["hash_by_function_name"] == {
        "x_f": "aaaaaaaaaaaa"
    }


def test_move_of_a_function_with_no_saved_verdicts_changes_nothing(tmp_path):
    root, _ = _project(tmp_path)
    _meta(root, {"vllm_spec_lint.m.x_f__mutmut_1": 1}, {"x_f": "aaaaaaaaaaaa"})
    assert _state(root, "save").returncode == 0
    before = _saved(root)
    done = _state(root, "move", "vllm_spec_lint.m", "vllm_spec_lint.n", "x_f", "x_h")
    assert (done.stderr, done.returncode) == (
        "error: 'no saved verdicts of x_h in vllm_spec_lint.m'\n",
        2,
    )
    assert _saved(root) == before
    assert not (root / "mutation" / "verdicts" / "vllm_spec_lint" / "n.json").exists()


def test_move_needs_both_modules_and_a_function(tmp_path):
    root, _ = _project(tmp_path)
    done = _state(root, "move", "vllm_spec_lint.m", "vllm_spec_lint.n")
    assert done.returncode == 2
    assert done.stderr.endswith(
        "error: move takes FROM TO FUNCTION...; restore and save take no names\n"
    )
