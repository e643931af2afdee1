"""The per-module table of a mutation run, for MUTATION.md.

    python scripts/mutation_report.py             # the verdicts in mutation/verdicts/
    python scripts/mutation_report.py SAVED ...   # saved `mutmut results` outputs

Reads the verdicts ``scripts/mutation_state.py save`` keeps in the
repository (mutmut's exit codes per mutant, with the commit they judge), or
``mutmut results --all true`` outputs saved in files, rounds of a run whose
state mutmut reset when its settings changed: the last round's mutants, each
with the latest verdict that is not "not checked". With the mutants
MUTATION.md lists as equivalent (lines ``- `MUTANT`: reason``) it prints, per
module: mutants, not yet checked, killed, survived, no tests, timed out,
equivalent, and the share of the checked, non-equivalent mutants that were
killed. Exits 1 when a module is under the 90 % bar, has mutants not
checked, has verdicts on code that changed since, or a listed equivalent
mutant no longer exists or is detected now (its number names another
mutation since its function changed, or a test kills it: either way the
listing no longer holds); 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BAR = 0.90
VERDICTS = REPO / "mutation" / "verdicts"
# mutmut's exit codes (mutmut.stats.status_by_exit_code, mutmut 3.8).
STATUS_BY_EXIT_CODE = {
    None: "not checked",
    0: "survived",
    1: "killed",
    3: "killed",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "caught by type check",
}
# Verdicts no equivalent mutant can have: the tests do not pass with it.
_DETECTED = frozenset({"killed", "timeout", "caught by type check"})
EQUIVALENT = re.compile(r"^- `(?P<name>[\w.]+__mutmut_\d+)`: \S", re.MULTILINE)


def statuses(saved: list[str]) -> dict[str, str]:
    rounds = [_parsed(Path(path).read_text(encoding="utf-8")) for path in saved]
    # The last round names the mutants there are now; a mutant whose code
    # changed since an earlier round is not in it.
    found = dict(rounds[-1])
    for earlier in reversed(rounds[:-1]):
        for name, status in earlier.items():
            if found.get(name) == "not checked":
                found[name] = status
    return found


def kept_verdicts(verdicts: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Each mutant's status, and the commit each module's verdicts judge."""
    found, commits = {}, {}
    for path in sorted(verdicts.rglob("*.json")):
        saved = json.loads(path.read_text(encoding="utf-8"))
        module = path.relative_to(verdicts).with_suffix(".py").as_posix()
        commits[module] = saved["commit"]
        for name, code in saved["verdicts"].items():
            found[name] = STATUS_BY_EXIT_CODE.get(code, "suspicious")
    if not found:
        raise OSError(f"{verdicts}: no saved verdicts")
    return found, commits


def changed_since(verdicts: Path, commits: dict[str, str]) -> list[str]:
    """A line for each module whose code differs from the commit its verdicts
    judge, or whose commit git cannot find (a shallow clone)."""
    changed = []
    for commit in sorted(set(commits.values())):
        # One diff per commit; `:/` is the top of the verdicts' repository.
        diff = subprocess.run(
            ["git", "-C", str(verdicts), "diff", "--name-only", commit, "--", ":/"],
            capture_output=True, text=True,
        )  # fmt: skip
        reason = (diff.stderr.strip() or "git failed").splitlines()[0]
        files = set(diff.stdout.splitlines())
        for module in sorted(m for m, c in commits.items() if c == commit):
            if diff.returncode:
                changed.append(f"verdicts' commit not comparable ({reason}): {module}")
            elif module in files:
                changed.append(f"code changed since its verdicts ({commit}): {module}")
    return changed


def _parsed(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            found[name] = status
    return found


def module_of(mutant: str) -> str:
    # vllm_spec_lint.core.noqa.x_is_suppressed__mutmut_3 -> vllm_spec_lint/core/noqa.py
    module = re.sub(r"\.x.*__mutmut_\d+$|\.x.*$", "", mutant.split("ǁ")[0])
    return module.replace(".", "/") + ".py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mutation_report.py",
        description="The per-module table of a mutation run, for MUTATION.md.",
    )
    parser.add_argument(
        "saved",
        nargs="*",
        metavar="SAVED",
        help="saved `mutmut results --all true` outputs, oldest first "
        "(default: the verdicts kept in mutation/verdicts/)",
    )
    parser.add_argument(
        "--equivalent-from",
        metavar="FILE",
        default=str(REPO / "MUTATION.md"),
        help="the file listing equivalent mutants (default: MUTATION.md)",
    )
    parser.add_argument(
        "--verdicts",
        metavar="DIR",
        default=str(VERDICTS),
        help="where scripts/mutation_state.py keeps the verdicts "
        "(default: mutation/verdicts)",
    )
    args = parser.parse_args(argv)
    stale: list[str] = []
    try:
        if args.saved:
            results = statuses(args.saved)
        else:
            results, commits = kept_verdicts(Path(args.verdicts))
            stale = changed_since(Path(args.verdicts), commits)
        listing = Path(args.equivalent_from).read_text(encoding="utf-8")
    except (OSError, ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    equivalent = set(EQUIVALENT.findall(listing))
    gone = sorted(equivalent - set(results))
    detected = sorted(n for n in equivalent if results.get(n) in _DETECTED)
    by_module: dict[str, Counter] = defaultdict(Counter)
    for name, status in results.items():
        counts = by_module[module_of(name)]
        counts["mutants"] += 1
        if name in equivalent:
            counts["equivalent"] += 1
        else:
            counts[status] += 1
    columns = [
        "mutants", "not checked", "killed", "survived", "no tests", "timeout",
        "equivalent",
    ]  # fmt: skip
    print(
        "| module | " + " | ".join(columns) + " | killed of checked, non-equivalent |"
    )
    print("|---" * (len(columns) + 2) + "|")
    below, unchecked = [], []
    total: Counter = Counter()
    for module in sorted(by_module):
        counts = by_module[module]
        total.update(counts)
        share = _share(counts)
        below += [module] if share < BAR else []
        unchecked += [(module, counts["not checked"])] if counts["not checked"] else []
        cells = " | ".join(str(counts[c]) for c in columns)
        print(f"| {module} | {cells} | {_shown(counts, share)} |")
    cells = " | ".join(str(total[c]) for c in columns)
    print(f"| all | {cells} | {_shown(total, _share(total))} |")
    for name in gone:
        print(f"listed as equivalent but not a mutant now: {name}", file=sys.stderr)
    for name in detected:
        status = results[name]
        print(f"listed as equivalent but {status} now: {name}", file=sys.stderr)
    for line in stale:
        print(line, file=sys.stderr)
    for module in below:
        print(f"under the {BAR:.0%} bar: {module}", file=sys.stderr)
    for module, count in unchecked:
        print(f"not checked yet: {count} mutants of {module}", file=sys.stderr)
    return 1 if gone or detected or stale or below or unchecked else 0


def _shown(counts: Counter, share: float) -> str:
    # A module none of whose mutants was checked has no share yet.
    checked = counts["mutants"] - counts["equivalent"] - counts["not checked"]
    return f"{share:.1%}" if checked else "-"


def _share(counts: Counter) -> float:
    considered = counts["mutants"] - counts["equivalent"] - counts["not checked"]
    return counts["killed"] / considered if considered else 1.0


if __name__ == "__main__":
    sys.exit(main())
