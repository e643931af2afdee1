"""Benchmark vllm-spec-lint against its peers on real vLLM trees.

    python benchmarks/run.py [--repeat 9] [--flake8-repeat 4] [--output BENCHMARKS.md]
                             [--no-lsp] [--no-growth]

Fetches vLLM releases with scripts/fetch_sources.py (each copied once, beside
the fetched sources, with vLLM's formatter setting as a checkout has it), then,
in one run and alternating the commands (so a slow spell of the machine hits
all of them), times each command ``--repeat`` times (flake8, minutes a
run, fewer) and reports medians, and ratios as the median of each round's
ratio: our check cold and warm, ``fix --diff``, semgrep with the reference
rule in ../shared/peers/, ruff's fastest whole-tree check, grep (the floor:
reading the bytes), and flake8 with and without our plugin (by CPU time, and the
plugin's own calls timed alone); plus our peak memory and how check time
grows with the tree; vLLM 0.34.0's cold check and ruff's interleaved with
the rest; one file with findings checked cold, alone and as the pre-commit
hook runs it. Then benchmarks/lsp.py and benchmarks/growth.py, whose
sections it keeps: one command measures every target. Writes a Markdown
report.

semgrep and a flake8 without our plugin are installed into virtual
environments under benchmarks/.venvs/ on first use.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
VENVS = HERE / ".venvs"
MAIN_VERSION = "0.33.0"
SECOND_VERSION = "0.34.0"
# One file with findings, checked cold: 0.33.0's MLA indexer (1,975 lines).
ONE_FILE = "vllm/v1/attention/backends/mla/indexer.py"
SCALING_VERSIONS = ("0.24.0", "0.29.0", "0.33.0")
RUFF_SELECT = "E9,F63,F7,F82"
SELF = [sys.executable, "-m", "vllm_spec_lint"]
# The pair whose ratio is the plugin's cost; round_order alternates them.
FLAKE8_WITHOUT = "flake8, without our plugin"
FLAKE8_WITH = "flake8, with our plugin"


def fetch(version: str) -> Path:
    sys.path.insert(0, str(REPO / "scripts"))
    from fetch_sources import fetch_sources

    return fetch_sources(f"vllm=={version}")


# vLLM's formatter setting, as its checkout's pyproject.toml holds it.
VLLM_FORMATTER = "[tool.ruff]\nline-length = 88\n"


def checkout(version: str) -> Path:
    """A release's sources as a maintainer's checkout has them: beside its
    formatter configuration, which a release's sources do not carry. Without
    one, fixes and the report's previews first ask ruff whether it would
    leave each file as it is (docs/usage.md). Made once, beside the fetched
    sources: never inside this repository, whose .gitignore a run would
    apply to it."""
    sources = fetch(version)
    folder = sources.parent / "checkouts" / sources.name
    if not (folder / "pyproject.toml").exists():  # written last
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(sources, folder)
        (folder / "pyproject.toml").write_text(VLLM_FORMATTER)
    return folder


def venv_with(name: str, *packages: str) -> Path:
    """A virtual environment with ``packages``; its bin folder."""
    folder = VENVS / name
    bin_dir = folder / "bin"
    if not (bin_dir / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run(
            [str(bin_dir / "python"), "-m", "pip", "install", "-q", *packages],
            check=True,
        )
    return bin_dir


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or "unknown"


def line_count(tree: Path) -> int:
    return sum(path.read_bytes().count(b"\n") for path in (tree / "vllm").rglob("*.py"))


def timed(command: list[str], cwd: Path) -> tuple[float, int, float]:
    """Wall time, the peak RSS (KiB) of the largest process it ran, and the
    CPU time (user + system) of it and every process it waited for."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "subprocess.run(sys.argv[1:], **quiet)\n"
        "elapsed = time.perf_counter() - start\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command], cwd=cwd, capture_output=True, text=True
    )
    elapsed, rss, cpu = out.stdout.split()
    return float(elapsed), int(rss), float(cpu)


def checks_something(tree: Path, *paths: str) -> None:
    """Stop the run unless our check finds what it should in ``tree``: a
    command that checks no file (every one excluded, say) is fast for
    nothing."""
    out = subprocess.run(
        [*SELF, "check", "--no-cache", "--output-format", "concise", *paths],
        cwd=tree, capture_output=True, text=True,
    )  # fmt: skip
    if out.returncode != 1 or "Found " not in out.stdout:
        raise SystemExit(
            f"{tree}: check {' '.join(paths)} found nothing to report "
            f"(exit {out.returncode}): {out.stdout.strip() or out.stderr.strip()}"
        )


# What our flake8 plugin adds to a flake8 run, without flake8's own work
# (reading lines, parsing, its checks), which is the same with or without it:
# the plugin's calls for every file, as flake8 makes them, in CPU seconds.
PLUGIN_ALONE = """
import ast, os, sys, time
files = []
for folder, _, names in os.walk("."):
    files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
inputs = []
for name in sorted(files):
    with open(name, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.readlines()
    text = "".join(lines)
    tree = ast.parse(text) if "MLAAttentionSpec" in text else None
    inputs.append((name, lines, tree))
start = time.process_time()
from vllm_spec_lint.faces.flake8_plugin import Flake8Plugin
for name, lines, tree in inputs:
    list(Flake8Plugin(tree, name, lines).run())
print(time.process_time() - start)
"""


def plugin_alone_cpu(tree: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", PLUGIN_ALONE], cwd=tree, capture_output=True, text=True
    )
    return float(out.stdout.split()[-1])


def replace_section(output: Path, start: str, end: str, section: str) -> None:
    """Write ``section`` (from ``start`` to ``end``) into the report at
    ``output``, in place of the one there, else at its end."""
    old = output.read_text() if output.exists() else ""
    if start in old:
        head, _, rest = old.partition(start)
        old = head + rest.partition(end)[2].lstrip("\n")
    output.write_text(old.rstrip("\n") + "\n\n" + section)


def round_order(commands: dict[str, list[str]], round_: int) -> list:
    """The commands of a round, in order; flake8 without and with our plugin
    change places every other round. Each keeps both cores busy for about a
    minute; in a fixed order, the plugin always ran second, right after a
    minute of full load. Three rounds in that order read 1.04-1.08 x (CPU)
    over the runs of the last sessions; six rounds in turns, run by hand on
    the same code, read 0.98-1.01 x (median 1.00), neither order the
    faster every time."""
    order = list(commands.items())
    if round_ % 2:
        names = [name for name, _ in order]
        first, second = names.index(FLAKE8_WITHOUT), names.index(FLAKE8_WITH)
        order[first], order[second] = order[second], order[first]
    return order


def clear_cache(tree: Path) -> None:
    shutil.rmtree(tree / ".vllm_spec_lint_cache", ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--flake8-repeat",
        type=int,
        default=4,
        help="flake8 over the tree takes minutes a run (an even number: "
        "each of the pair runs first as often)",
    )
    parser.add_argument("--output", type=Path, default=REPO / "BENCHMARKS.md")
    parser.add_argument("--no-lsp", action="store_true", help="skip lsp.py")
    parser.add_argument("--no-growth", action="store_true", help="skip growth.py")
    args = parser.parse_args()

    # As `pip install .` does: byte-compile the package, so no run pays for
    # compiling it (an editable install under PYTHONDONTWRITEBYTECODE would).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "vllm_spec_lint")],
        check=True,
    )
    # The code cache (edges/code_cache.py) in a folder of this run's own,
    # filled before the rounds, as Python's .pyc files are by an install;
    # "one file, cold, empty code cache" starts each of its runs without it.
    code_cache = Path(tempfile.mkdtemp(prefix="vsl-code-cache-"))
    os.environ["VLLM_SPEC_LINT_CACHE_DIR"] = str(code_cache / "kept")
    first_run = code_cache / "first-run"
    trees = {v: checkout(v) for v in SCALING_VERSIONS}
    tree = trees[MAIN_VERSION]
    second = checkout(SECOND_VERSION)
    semgrep = venv_with("semgrep", "semgrep") / "semgrep"
    plain_flake8 = venv_with("flake8-only", "flake8") / "flake8"
    our_flake8 = Path(sys.executable).parent / "flake8"
    rule = SHARED / "peers" / "semgrep_rule.yaml"

    def warm_check():
        return SELF + ["check", "--exit-zero", "."]

    commands = {
        "check, cold": SELF + ["check", "--no-cache", "--exit-zero", "."],
        "check --discover-families, cold": SELF + [
            "check", "--no-cache", "--discover-families", "--exit-zero", ".",
        ],
        "check, warm": warm_check(),
        "fix --diff": SELF + ["fix", "--diff", "--no-cache", "--exit-zero", "."],
        "semgrep (reference rule)": [
            str(semgrep), "scan", "--config", str(rule), "--metrics=off",
            "--disable-version-check", "--no-git-ignore", "-q", "--jobs",
            str(os.cpu_count()), ".",
        ],
        f"ruff check --select {RUFF_SELECT}": [
            sys.executable, "-m", "ruff", "check", "--no-cache", "--select",
            RUFF_SELECT, "--exit-zero", ".",
        ],
        "grep (floor)": ["grep", "-rlE", "MLAAttentionSpec", "--include=*.py", "."],
        f"check, cold, {SECOND_VERSION}": SELF + [
            "check", "--no-cache", "--exit-zero", ".",
        ],
        f"ruff, {SECOND_VERSION}": [
            sys.executable, "-m", "ruff", "check", "--no-cache", "--select",
            RUFF_SELECT, "--exit-zero", ".",
        ],
        "one file, cold": SELF + ["check", "--no-cache", "--exit-zero", ONE_FILE],
        # The hook's entry (.pre-commit-hooks.yaml) with one changed file.
        "pre-commit hook, one file, cold": SELF + [
            "check", "--force-exclude", "--no-cache", "--exit-zero", ONE_FILE,
        ],
        "one file, cold, empty code cache": [
            "env", f"VLLM_SPEC_LINT_CACHE_DIR={first_run}", *SELF,
            "check", "--no-cache", "--exit-zero", ONE_FILE,
        ],
        FLAKE8_WITHOUT: [
            str(plain_flake8), "--isolated", "--select", RUFF_SELECT,
            "--exit-zero", ".",
        ],
        FLAKE8_WITH: [
            str(our_flake8), "--isolated", "--select", f"{RUFF_SELECT},VSL",
            "--exit-zero", ".",
        ],
    }  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    rss: list[int] = []
    for where, paths in ((tree, ["."]), (second, ["."]), (tree, [ONE_FILE])):
        checks_something(where, *paths)
    timed(commands["one file, cold"], tree)  # fill the code cache
    timed(commands["check, warm"], tree)  # fill the cache, warm the page cache
    for round_ in range(args.repeat):
        for name, command in round_order(commands, round_):
            if name.startswith("flake8") and round_ >= args.flake8_repeat:
                continue
            where = second if SECOND_VERSION in name else tree
            if "cold" in name:
                clear_cache(where)
            if "empty code cache" in name:
                shutil.rmtree(first_run, ignore_errors=True)
            elapsed, peak, used = timed(command, where)
            times[name].append(elapsed)
            cpu[name].append(used)
            if name == "check, cold":
                rss.append(peak)
            if "cold" in name and where is tree:
                timed(warm_check(), tree)  # refill for "check, warm"
            step = f"[{round_ + 1}/{args.repeat}]"
            print(f"{step} {name}: {elapsed:.2f} s, {used:.2f} s CPU", file=sys.stderr)

    median = {name: statistics.median(values) for name, values in times.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    scaling = []
    for version, folder in trees.items():
        runs = []
        for _ in range(args.repeat):
            clear_cache(folder)
            runs.append(timed(commands["check, cold"], folder)[0])
        scaling.append((version, line_count(folder), statistics.median(runs)))
        clear_cache(folder)

    plugin_cpu = statistics.median(plugin_alone_cpu(tree) for _ in range(args.repeat))
    runs = {name: len(values) for name, values in times.items()}
    spread = {name: (min(values), max(values)) for name, values in times.items()}

    def per_round(measure, over, of=times) -> float:
        """Median over rounds of ``measure / over``: the commands of a round
        run seconds apart, so a slow spell of the machine hits both."""
        return statistics.median(
            a / b for a, b in zip(of[measure], of[over], strict=True)
        )

    ruff_name = f"ruff check --select {RUFF_SELECT}"
    semgrep_name = "semgrep (reference rule)"
    plugin_share = plugin_cpu / median_cpu[FLAKE8_WITHOUT]
    second_cold, second_ruff = (
        f"check, cold, {SECOND_VERSION}",
        f"ruff, {SECOND_VERSION}",
    )
    targets = [
        # Issue #43's: no slower than ruff's whole-tree pass, and less CPU.
        (
            f"cold check {MAIN_VERSION} <= 1.0 x ruff",
            per_round("check, cold", ruff_name),
            1.0,
        ),
        (
            f"cold check {MAIN_VERSION} CPU <= 0.85 x ruff's",
            per_round("check, cold", ruff_name, cpu),
            0.85,
        ),
        (
            f"cold check {SECOND_VERSION} <= 1.0 x ruff",
            per_round(second_cold, second_ruff),
            1.0,
        ),
        (
            f"cold check {SECOND_VERSION} CPU <= 0.85 x ruff's",
            per_round(second_cold, second_ruff, cpu),
            0.85,
        ),
        ("one file with findings, cold <= 0.2 s", median["one file, cold"], 0.2),
        (
            "pre-commit hook, one file, cold <= 0.2 s",
            median["pre-commit hook, one file, cold"],
            0.2,
        ),
        ("cold check <= 0.25 x semgrep", per_round("check, cold", semgrep_name), 0.25),
        ("cold check <= 1.5 x ruff", per_round("check, cold", ruff_name), 1.5),
        (
            "cold check, discovering families, <= 0.25 x semgrep",
            per_round("check --discover-families, cold", semgrep_name),
            0.25,
        ),
        (
            "cold check, discovering families, <= 1.5 x ruff",
            per_round("check --discover-families, cold", ruff_name),
            1.5,
        ),
        ("warm check <= 3 x grep", per_round("check, warm", "grep (floor)"), 3.0),
        ("fix --diff <= 1.5 x cold check", per_round("fix --diff", "check, cold"), 1.5),
        # flake8 runs for minutes, over which this kind of machine's wall
        # clock wanders by +-15 %: the plugin's cost is read from CPU time.
        (
            "flake8 with plugin <= 1.03 x without (CPU)",
            per_round(FLAKE8_WITH, FLAKE8_WITHOUT, cpu),
            1.03,
        ),
        # The plugin's own calls, timed alone: what the noise above hides.
        ("flake8 + plugin's own CPU <= 1.03 x flake8", 1 + plugin_share, 1.03),
        ("peak RSS <= 300 MB", max(rss) / 1024, 300.0),
    ]  # fmt: skip
    report = render(median, median_cpu, targets, scaling, runs, spread, commands)
    # The sections of benchmarks/lsp.py and growth.py are theirs: kept.
    old = args.output.read_text() if args.output.exists() else ""
    kept = [
        m.group(0) for m in re.finditer(r"<!-- (\w+) -->.*?<!-- /\1 -->\n", old, re.S)
    ]
    if kept:
        report = report.rstrip("\n") + "\n\n" + "\n".join(kept)
    args.output.write_text(report)
    print(report)
    for script, skipped in (("lsp.py", args.no_lsp), ("growth.py", args.no_growth)):
        if not skipped:  # each rewrites its own section of the report
            command = [sys.executable, str(HERE / script), "--output", str(args.output)]
            subprocess.run(command, check=False)
    shutil.rmtree(code_cache, ignore_errors=True)
    return 0


def render(median, median_cpu, targets, scaling, runs, spread, commands) -> str:
    cold = median["check, cold"]
    lines = [
        "# Benchmarks",
        "",
        f"Made by `python benchmarks/run.py` on {time.strftime('%Y-%m-%d')} at "
        f"commit {commit()}: "
        f"{os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}. vLLM {MAIN_VERSION} "
        f"({scaling[-1][1]:,} lines of Python), beside vLLM's formatter "
        "setting as its checkout holds it (`[tool.ruff]`, line length 88); "
        "medians, commands alternated. "
        "The code cache (docs/performance.md) is filled before the rounds; "
        "the empty-code-cache row starts each run without one.",
        "",
        "| command | runs | median (s) | min-max (s) | x cold check | median CPU (s) |",
        "|---|---|---|---|---|---|",
    ]
    for name in commands:
        low, high = spread[name]
        lines.append(
            f"| {name} | {runs[name]} | {median[name]:.2f} | {low:.2f}-{high:.2f} | "
            f"{median[name] / cold:.2f} | {median_cpu[name]:.2f} |"
        )
    lines += [
        "",
        "Ratios: the median over rounds of each round's ratio.",
        "",
        "| target | measured | limit | met |",
        "|---|---|---|---|",
    ]
    for name, value, limit in targets:
        met = "yes" if value <= limit else "no"
        lines.append(f"| {name} | {value:.2f} | {limit:g} | {met} |")
    lines += [
        "",
        "Cold check time against tree size:",
        "",
        "| vLLM | lines | check, cold (s) | us per line |",
        "|---|---|---|---|",
    ]
    for version, lines_of_code, seconds in scaling:
        lines.append(
            f"| {version} | {lines_of_code:,} | {seconds:.2f} | "
            f"{seconds / lines_of_code * 1e6:.2f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
