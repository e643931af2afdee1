"""The per-module table of a mutation run, for MUTATION.md.

    python scripts/mutation_report.py        # after `mutmut run` (nox -s mutation)
    python scripts/mutation_report.py SAVED ...   # from saved results, in order

Reads mutmut's results (``mutmut results --all true``; or that command's
output saved in files, rounds of a run whose state mutmut reset when its
settings changed: the last round's mutants, each with the latest verdict
that is not "not checked") and the mutants MUTATION.md lists as
equivalent (lines ``- `MUTANT`: reason``), and prints, per module:
mutants, not yet checked, killed, survived, no tests, timed out,
equivalent, and the share of the checked, non-equivalent mutants that were
killed. Exits 1 when a module is under the 90 % bar, has mutants not
checked, or a listed equivalent mutant no longer exists; 2 when a file
cannot be read.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BAR = 0.90
EQUIVALENT = re.compile(r"^- `(?P<name>[\w.]+__mutmut_\d+)`: \S", re.MULTILINE)


def statuses(saved: list[str]) -> dict[str, str]:
    if not saved:
        out = subprocess.run(
            [sys.executable, "-m", "mutmut", "results", "--all", "true"],
            cwd=REPO, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return _parsed(out.stdout)
    rounds = [_parsed(Path(path).read_text(encoding="utf-8")) for path in saved]
    # The last round names the mutants there are now; a mutant whose code
    # changed since an earlier round is not in it.
    found = dict(rounds[-1])
    for earlier in reversed(rounds[:-1]):
        for name, status in earlier.items():
            if found.get(name) == "not checked":
                found[name] = status
    return found


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
        "(default: ask mutmut for the current run's results)",
    )
    parser.add_argument(
        "--equivalent-from",
        metavar="FILE",
        default=str(REPO / "MUTATION.md"),
        help="the file listing equivalent mutants (default: MUTATION.md)",
    )
    args = parser.parse_args(argv)
    try:
        results = statuses(args.saved)
        listing = Path(args.equivalent_from).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    equivalent = set(EQUIVALENT.findall(listing))
    stale = sorted(equivalent - set(results))
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
    for name in stale:
        print(f"listed as equivalent but not a mutant now: {name}", file=sys.stderr)
    for module in below:
        print(f"under the {BAR:.0%} bar: {module}", file=sys.stderr)
    for module, count in unchecked:
        print(f"not checked yet: {count} mutants of {module}", file=sys.stderr)
    return 1 if stale or below or unchecked else 0


def _shown(counts: Counter, share: float) -> str:
    # A module none of whose mutants was checked has no share yet.
    checked = counts["mutants"] - counts["equivalent"] - counts["not checked"]
    return f"{share:.1%}" if checked else "-"


def _share(counts: Counter) -> float:
    considered = counts["mutants"] - counts["equivalent"] - counts["not checked"]
    return counts["killed"] / considered if considered else 1.0


if __name__ == "__main__":
    sys.exit(main())
