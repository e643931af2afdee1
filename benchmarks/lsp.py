"""The language server's latency: from `textDocument/didChange` to the
`textDocument/publishDiagnostics` for that version, on a real ~2,000-line
vLLM file (0.33.0's vllm/v1/attention/backends/mla/indexer.py, fetched with
scripts/fetch_sources.py), over stdio as an editor talks to it; and the time
from starting the server to its answer to `initialize`.

    python benchmarks/lsp.py [--changes 60] [--starts 5] [--output BENCHMARKS.md]

Targets (issue #43): median <= 30 ms, p95 <= 60 ms, initialize <= 0.3 s (the
median of the starts). The result replaces the section between the
`<!-- lsp -->` markers of BENCHMARKS.md (benchmarks/run.py keeps it).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from run import replace_section

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VERSION = "0.33.0"
FILE = "vllm/v1/attention/backends/mla/indexer.py"
START, END = "<!-- lsp -->", "<!-- /lsp -->"
# Places in the file where the changes are typed.
SPOTS = 6
TARGETS = (("median", 30.0, "ms"), ("p95", 60.0, "ms"), ("initialize", 300.0, "ms"))


def fetch(version: str) -> Path:
    sys.path.insert(0, str(REPO / "scripts"))
    from fetch_sources import fetch_sources

    return fetch_sources(f"vllm=={version}")


class Server:
    """The server over pipes, with JSON-RPC framing by hand: nothing between
    the clock and the bytes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "vllm_spec_lint", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, method: str, params: dict, request: bool = False) -> int | None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return message.get("id")

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server stopped")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def wait_for(self, predicate) -> dict:
        while True:
            message = self.receive()
            if predicate(message):
                return message

    def close(self) -> None:
        request = self.send("shutdown", {}, request=True)
        self.wait_for(lambda m: m.get("id") == request)
        self.send("exit", {})
        self.process.wait(timeout=30)


def initialized(path: Path) -> tuple[Server, float]:
    """A started server, and ms from its start to its answer to initialize."""
    started = time.perf_counter()
    server = Server()
    request = server.send(
        "initialize",
        {"capabilities": {}, "rootUri": path.parent.as_uri(), "processId": None},
        request=True,
    )
    server.wait_for(lambda m: m.get("id") == request)
    answered = (time.perf_counter() - started) * 1000
    server.send("initialized", {})
    return server, answered


def measure(path: Path, changes: int) -> tuple[list[float], int]:
    text = path.read_text()
    uri = path.as_uri()
    server, _ = initialized(path)

    def published(version):
        return lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        )

    server.send(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": uri,
                "languageId": "python",
                "version": 0,
                "text": text,
            }
        },
    )
    found = len(server.wait_for(published(0))["params"]["diagnostics"])
    lines = text.splitlines(keepends=True)
    timings = []
    # Typing in several places through the file, as one edits: at each spot
    # a new comment line grows a character per change; the comments typed
    # before stay. The spots are spread evenly over the file's lines.
    per_spot = max(1, changes // SPOTS)
    typed: dict[int, str] = {}
    for version in range(1, changes + 1):
        spot = (version - 1) // per_spot
        row = (spot + 1) * len(lines) // (SPOTS + 1)
        typed[row] = typed.get(row, "#") + "x"
        edited = []
        for index, line in enumerate(lines):
            if index in typed:
                edited.append(typed[index] + "\n")
            edited.append(line)
        started = time.perf_counter()
        server.send(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": "".join(edited)}],
            },
        )
        server.wait_for(published(version))
        timings.append((time.perf_counter() - started) * 1000)
    server.close()
    return timings, found


def render(timings: list[float], found: int, lines: int, starts: list[float]) -> str:
    ordered = sorted(timings)
    values = {
        "median": statistics.median(ordered),
        "p95": ordered[max(0, round(0.95 * len(ordered)) - 1)],
        "initialize": statistics.median(starts[1:]),
    }
    rows = "\n".join(
        f"| {name} <= {limit:g} {unit} | {values[name]:.1f} | {limit:g} | "
        f"{'yes' if values[name] <= limit else 'no'} |"
        for name, limit, unit in TARGETS
    )
    return (
        f"{START}\n"
        f"## Language server\n\n"
        f"Made by `python benchmarks/lsp.py` on {date.today()}: "
        f"{platform.machine()}, Python {platform.python_version()}. vLLM {VERSION}'s "
        f"`{FILE}` ({lines:,} lines, {found} findings), {len(timings)} changes "
        f"(one keystroke each, typed at {SPOTS} places spread over the file, "
        f"the whole document sent), each timed from "
        f"`didChange` to the `publishDiagnostics` for its version "
        f"(min {ordered[0]:.1f} ms, max {ordered[-1]:.1f} ms); `initialize` "
        f"timed from the server's start to its answer: the first start, with "
        f"no answer remembered, {starts[0]:.0f} ms; the median of the "
        f"{len(starts) - 1} starts after it "
        f"({', '.join(f'{s:.0f}' for s in starts[1:])} ms).\n\n"
        "| target | measured (ms) | limit | met |\n|---|---|---|---|\n"
        f"{rows}\n{END}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=60)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--output", type=Path, default=REPO / "BENCHMARKS.md")
    args = parser.parse_args()
    path = fetch(VERSION) / FILE
    # The first start answers after pygls loads and remembers its answer
    # (faces/lsp_start.py); the later ones give it at once.
    for remembered in path.parent.glob(".vllm_spec_lint_cache/*/initialize"):
        shutil.rmtree(remembered)
    starts = []
    for _ in range(args.starts + 1):
        server, answered = initialized(path)
        server.close()
        starts.append(answered)
    timings, found = measure(path, args.changes)
    timings = timings[5:]  # the first changes warm the server's caches
    section = render(timings, found, len(path.read_text().splitlines()), starts)
    replace_section(args.output, START, END, section)
    print(section)
    met = all(row.endswith("| yes |") for row in section.splitlines() if "<=" in row)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
