"""scripts/mutation_report.py: the table MUTATION.md records, put together
from saved rounds of a run, with its exit status as the bar."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "mutation_report.py"

ROUND_1 = """\
    pkg.mod.x_f__mutmut_1: killed
    pkg.mod.x_f__mutmut_2: survived
    pkg.mod.x_f__mutmut_3: not checked
    pkg.gone.x_g__mutmut_1: killed
"""
# The later round: mutant 1 not run again, 2 killed by a new test, 4 new.
ROUND_2 = """\
    pkg.mod.x_f__mutmut_1: not checked
    pkg.mod.x_f__mutmut_2: killed
    pkg.mod.x_f__mutmut_3: not checked
    pkg.mod.xǁCǁm__mutmut_4: survived
"""
EQUIVALENT = "- `pkg.mod.xǁCǁm__mutmut_4`: only its name changes.\n"
HEADER = (
    "| module | mutants | not checked | killed | survived | no tests | timeout "
    "| equivalent | killed of checked, non-equivalent |"
)


def _report(tmp_path, *rounds: str, equivalent: str = EQUIVALENT):
    paths = []
    for number, text in enumerate(rounds, start=1):
        path = tmp_path / f"round{number}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    listing = tmp_path / "MUTATION.md"
    listing.write_text(equivalent, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--equivalent-from", str(listing), *paths],
        capture_output=True,
        text=True,
    )


def test_rounds_merge_into_the_last_rounds_mutants_with_their_latest_verdict(
    tmp_path,
):
    done = _report(tmp_path, ROUND_1, ROUND_2)
    assert done.stdout.splitlines() == [
        HEADER,
        "|---|---|---|---|---|---|---|---|---|",
        "| pkg/mod.py | 4 | 1 | 2 | 0 | 0 | 0 | 1 | 100.0% |",
        "| all | 4 | 1 | 2 | 0 | 0 | 0 | 1 | 100.0% |",
    ]
    assert done.stderr == "not checked yet: 1 mutants of pkg/mod.py\n"
    assert done.returncode == 1


def test_every_module_checked_and_at_the_bar_exits_0(tmp_path):
    last = ROUND_2.replace("3: not checked", "3: killed")
    done = _report(tmp_path, ROUND_1, last)
    assert done.stdout.splitlines()[2] == (
        "| pkg/mod.py | 4 | 0 | 3 | 0 | 0 | 0 | 1 | 100.0% |"
    )
    assert (done.stderr, done.returncode) == ("", 0)


def test_a_module_under_the_bar_is_named_and_exits_1(tmp_path):
    last = ROUND_2.replace("3: not checked", "3: survived")
    done = _report(tmp_path, ROUND_1, last)
    assert done.stdout.splitlines()[2] == (
        "| pkg/mod.py | 4 | 0 | 2 | 1 | 0 | 0 | 1 | 66.7% |"
    )
    assert (done.stderr, done.returncode) == ("under the 90% bar: pkg/mod.py\n", 1)


def test_an_equivalent_mutant_that_no_longer_exists_exits_1(tmp_path):
    last = ROUND_2.replace("3: not checked", "3: killed")
    stale = EQUIVALENT + "- `pkg.mod.x_f__mutmut_9`: gone since.\n"
    done = _report(tmp_path, ROUND_1, last, equivalent=stale)
    assert done.stderr == (
        "listed as equivalent but not a mutant now: pkg.mod.x_f__mutmut_9\n"
    )
    assert done.returncode == 1


def test_an_equivalent_mutant_the_tests_detect_now_exits_1(tmp_path):
    # Its function changed and the number names another mutation, or a
    # test kills it: the listing no longer holds.
    last = ROUND_2.replace("3: not checked", "3: timeout")
    listed = EQUIVALENT + (
        "- `pkg.mod.x_f__mutmut_2`: listed before a test killed it.\n"
        "- `pkg.mod.x_f__mutmut_3`: listed before it looped.\n"
    )
    done = _report(tmp_path, ROUND_1, last, equivalent=listed)
    assert done.stderr == (
        "listed as equivalent but killed now: pkg.mod.x_f__mutmut_2\n"
        "listed as equivalent but timeout now: pkg.mod.x_f__mutmut_3\n"
    )
    assert done.returncode == 1


def test_a_saved_round_that_cannot_be_read_exits_2_without_a_traceback(
    tmp_path,
):
    missing = tmp_path / "missing.txt"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(missing)], capture_output=True, text=True
    )
    assert done.stderr.startswith("error: [Errno 2] No such file or directory: ")
    assert str(missing) in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
