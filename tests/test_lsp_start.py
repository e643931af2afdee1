"""The language server's start over stdio (faces/lsp_start.py): the answer
to ``initialize`` pygls gave is remembered per project and client, given
again at the next start before pygls loads, and never sent twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_lsp import WORKER, _frame, _read_message
from vllm_spec_lint import __version__


def _send(server, message: dict) -> None:
    server.stdin.write(_frame(json.dumps({"jsonrpc": "2.0", **message}).encode()))
    server.stdin.flush()


def _session(root: Path, capabilities: dict) -> tuple[dict, list[dict]]:
    """Start, initialize, open the worker, shut down: the answer to
    initialize, and every message the server sent."""
    server = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", "server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": capabilities,
        }
        _send(server, {"id": 1, "method": "initialize", "params": params})
        answer = _read_message(server.stdout)
        _send(server, {"method": "initialized", "params": {}})
        uri = (root / "worker.py").as_uri()
        document = {"uri": uri, "languageId": "python", "version": 1, "text": WORKER}
        _send(
            server,
            {"method": "textDocument/didOpen", "params": {"textDocument": document}},
        )
        messages = [answer]
        while messages[-1].get("method") != "textDocument/publishDiagnostics":
            messages.append(_read_message(server.stdout))
        _send(server, {"id": 2, "method": "shutdown"})
        while messages[-1].get("id") != 2:
            messages.append(_read_message(server.stdout))
        _send(server, {"method": "exit"})
        server.wait(timeout=30)
    finally:
        server.kill()
        server.communicate()
    return answer, messages


def _project(folder: Path) -> Path:
    (folder / "worker.py").write_text(WORKER)
    return folder


def _remembered(root: Path) -> list[Path]:
    folder = root / ".vllm_spec_lint_cache" / __version__ / "initialize"
    return sorted(folder.glob("*.json"))


def test_the_answer_pygls_gave_is_remembered_and_given_again(tmp_path):
    project = _project(tmp_path)
    first, _ = _session(project, {})
    [entry] = _remembered(project)
    assert json.loads(entry.read_text()) == first["result"]
    assert first["result"]["capabilities"]["positionEncoding"] == "utf-16"
    second, messages = _session(project, {})
    assert second == first
    # Given once: pygls's own answer to the same request is not sent again.
    assert [m for m in messages if m.get("id") == 1] == [second]
    [published] = [
        m for m in messages if m.get("method") == "textDocument/publishDiagnostics"
    ]
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["VSL001"]


def test_another_client_gets_the_answer_for_its_own_capabilities(tmp_path):
    project = _project(tmp_path)
    _session(project, {})
    utf8 = {"general": {"positionEncodings": ["utf-8"]}}
    answer, _ = _session(project, utf8)
    assert answer["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert len(_remembered(project)) == 2


def test_a_corrupt_remembered_answer_is_replaced_by_pygls_answer(tmp_path):
    project = _project(tmp_path)
    first, _ = _session(project, {})
    [entry] = _remembered(project)
    entry.write_text("{not json")
    again, messages = _session(project, {})
    assert again == first
    assert [m for m in messages if m.get("id") == 1] == [again]
    assert json.loads(entry.read_text()) == first["result"]


def test_a_client_without_a_folder_is_answered_by_pygls_and_nothing_is_kept(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", "server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path,
    )  # fmt: skip
    try:
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        _send(server, {"id": 7, "method": "initialize", "params": params})
        answer = _read_message(server.stdout)
        assert answer["id"] == 7
        assert answer["result"]["serverInfo"]["name"] == "vllm-spec-lint"
    finally:
        server.kill()
        server.communicate()
    assert not (tmp_path / ".vllm_spec_lint_cache").exists()
