"""How cost grows with a file's size and findings.

    python benchmarks/growth.py [--repeat 3] [--output BENCHMARKS.md]

Two files written here in vLLM's style, one ten times the other (200 and
2,000 functions, each with one class test that leaves out the companion:
1,200 and 12,000 lines, 200 and 2,000 findings), checked in each output
format and fixed (``--fix --unsafe-fixes``, laid out by ruff), cold. The
target: ten times the file costs at most 13 times the time (linear, with
room for the interpreter's start) and at most ten times the peak memory.
Writes its section between the ``<!-- growth -->`` markers of
BENCHMARKS.md (benchmarks/run.py keeps it).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from run import SELF, replace_section, timed

REPO = Path(__file__).resolve().parent.parent
START, END = "<!-- growth -->", "<!-- /growth -->"
SMALL, LARGE = 200, 2000
HEAD = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
FUNCTION = """
def block_layout_{i}(kv_cache_spec):
    if isinstance(kv_cache_spec, MLAAttentionSpec):
        return {i}
    return None

"""
COMMANDS = {
    "check, full": ["check", "--no-cache", "--output-format", "full"],
    "check, concise": ["check", "--no-cache", "--output-format", "concise"],
    "check, json": ["check", "--no-cache", "--output-format", "json"],
    "fix --unsafe-fixes": ["check", "--no-cache", "--fix", "--unsafe-fixes"],
}
TIME_LIMIT, MEMORY_LIMIT = 13.0, 10.0


def write(folder: Path, functions: int) -> Path:
    path = folder / f"layouts_{functions}.py"
    path.write_text(HEAD + "".join(FUNCTION.format(i=i) for i in range(functions)))
    return path


def measure(repeat: int) -> dict[str, dict[int, tuple[float, int]]]:
    """Per command and size: the median wall time and the largest peak RSS."""
    found: dict[str, dict[int, tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pyproject.toml").write_text("[tool.ruff]\nline-length = 88\n")
        sources = {n: write(folder, n) for n in (SMALL, LARGE)}
        for name, args in COMMANDS.items():
            found[name] = {}
            for size, source in sources.items():
                runs, peaks = [], []
                for _ in range(repeat):
                    work = folder / f"work_{size}.py"
                    shutil.copyfile(source, work)  # fix writes it
                    elapsed, peak, _ = timed([*SELF, *args, work.name], folder)
                    runs.append(elapsed)
                    peaks.append(peak)
                found[name][size] = (statistics.median(runs), max(peaks))
    return found


def render(found: dict[str, dict[int, tuple[float, int]]]) -> str:
    lines = [
        START,
        "## Growth with a file's size and findings",
        "",
        f"Made by `python benchmarks/growth.py`: a file of {SMALL} functions "
        f"({SMALL} findings) against one of {LARGE} ({LARGE} findings), cold.",
        "",
        f"| command | {SMALL} (s) | {LARGE} (s) | x time | limit | peak MB "
        f"({SMALL} / {LARGE}) | x memory | limit | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, sizes in found.items():
        (small, small_rss), (large, large_rss) = sizes[SMALL], sizes[LARGE]
        time_ratio, memory_ratio = large / small, large_rss / small_rss
        met = time_ratio <= TIME_LIMIT and memory_ratio <= MEMORY_LIMIT
        lines.append(
            f"| {name} | {small:.2f} | {large:.2f} | {time_ratio:.1f} | "
            f"{TIME_LIMIT:g} | {small_rss / 1024:.0f} / {large_rss / 1024:.0f} | "
            f"{memory_ratio:.1f} | {MEMORY_LIMIT:g} | {'yes' if met else 'no'} |"
        )
    return "\n".join([*lines, END]) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=REPO / "BENCHMARKS.md")
    args = parser.parse_args()
    section = render(measure(args.repeat))
    replace_section(args.output, START, END, section)
    print(section)
    return (
        0 if all(row.endswith("| yes |") for row in section.splitlines()[7:-1]) else 1
    )


if __name__ == "__main__":
    sys.exit(main())
