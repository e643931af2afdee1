"""Run the checker over every file of vLLM releases, and fix copies of them.

    python scripts/release_sweep.py [--sample N] [VERSION ...]
        (default: every file of 0.24.0 0.29.0 0.33.0)

For each release (fetched with scripts/fetch_sources.py):
- the analysis core runs on every Python file, the byte prefilter bypassed:
  no internal error, and VSL900 only where CPython itself cannot parse;
- `vllm-spec-lint fix --unsafe-fixes --strict` runs on a copy of the tree:
  every changed file parses, a second fix changes nothing, and
  `ruff format --check` finds no changed file that it did not find before.
Prints one summary line per release; exits 1 when anything did not hold.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fetch_sources import fetch_sources

REPO = Path(__file__).resolve().parent.parent
VERSIONS = ("0.24.0", "0.29.0", "0.33.0")


def fetch(version: str) -> Path:
    return fetch_sources(f"vllm=={version}")


def check_one(path: str) -> str | None:
    """None when the file behaves; else what went wrong."""
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.files import decode_source

    data = Path(path).read_bytes()
    text, _ = decode_source(data)
    try:
        ast.parse(text)
        parses = True
    except SyntaxError:
        parses = False
    try:
        findings = analyze_source(text, path, Config(strict=True)).findings
    except Exception as e:  # the whole point: there must be none
        return f"{path}: internal error: {type(e).__name__}: {e}"
    errors = [f for f in findings if f.code == "VSL900"]
    if parses and errors:
        return f"{path}: VSL900 on a file CPython parses: {errors[0].message}"
    if not parses and not errors:
        return f"{path}: no VSL900 on a file CPython cannot parse"
    return None


def unformatted(files: list[Path], cwd: Path) -> set[str]:
    if not files:
        return set()
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--isolated",
         *map(str, files)],
        cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    return {
        line.split(": ", 1)[-1]
        for line in out.stdout.splitlines()
        if "Would reformat" in line
    }


def sweep(version: str, sample: int | None = None) -> tuple[str, list[str]]:
    tree = fetch(version)
    files = sorted(str(p) for p in (tree / "vllm").rglob("*.py"))
    if sample is not None and sample < len(files):
        # Every file that names an anchor, and a fixed sample of the rest.
        named = [f for f in files if b"MLAAttentionSpec" in Path(f).read_bytes()]
        rest = random.Random(45831).sample(sorted(set(files) - set(named)), sample)
        files = sorted(named + rest)
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        problems = [p for p in pool.map(check_one, files, chunksize=16) if p]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree / "vllm", copy / "vllm")
        before = {p: p.read_bytes() for p in copy.rglob("*.py")}
        command = [sys.executable, "-m", "vllm_spec_lint", "fix", "--no-cache",
                   "--strict", "--unsafe-fixes", "--exit-zero", "."]  # fmt: skip
        subprocess.run(command, cwd=copy, capture_output=True, check=True)
        changed = [p for p, data in before.items() if p.read_bytes() != data]
        for path in changed:
            try:
                ast.parse(path.read_bytes())
            except SyntaxError as e:
                problems.append(f"{path}: does not parse after fix: {e}")
        after_first = {p: p.read_bytes() for p in changed}
        subprocess.run(command, cwd=copy, capture_output=True, check=True)
        problems += [
            f"{p}: the second fix changed it"
            for p in changed
            if p.read_bytes() != after_first[p]
        ]
        newly = unformatted(changed, copy)
        for path in changed:
            path.write_bytes(before[path])
        newly -= unformatted(changed, copy)
        problems += [f"{p}: ruff format would change it after the fix" for p in newly]
    summary = (
        f"vLLM {version}: {len(files)} files checked, {len(changed)} fixed, "
        f"{len(problems)} problems"
    )
    return summary, problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sample", type=int, help="check only N files besides those naming an anchor"
    )
    parser.add_argument("versions", nargs="*", default=list(VERSIONS))
    args = parser.parse_args(argv)
    failed = False
    for version in args.versions:
        summary, problems = sweep(version, args.sample)
        print(summary)
        for problem in problems:
            print(f"  {problem}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
