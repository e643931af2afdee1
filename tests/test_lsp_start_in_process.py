"""The language server's start over stdio (faces/lsp_start.py), in this
process: the real pygls server reads the client's messages from a stream
and writes to another, so mutation testing reaches this module (the
program's own start is tests/test_lsp_start.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.faces import lsp, lsp_start


class _Output(io.BytesIO):
    """stdout for the server: what it wrote stays readable after it closes
    the stream at ``exit``."""

    def close(self) -> None:
        self.closed_by_server = True


def _frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _messages(data: bytes) -> list[dict]:
    stream, found = io.BytesIO(data), []
    while True:
        length = None
        line = stream.readline()
        if not line:
            return found
        while line not in (b"\r\n", b"\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
            line = stream.readline()
        found.append(json.loads(stream.read(length)))


def _serve(first: bytes, *rest: dict) -> list[dict]:
    """Serve a client that sends ``first`` (raw bytes) and then ``rest``,
    shutdown and exit; every message the server wrote."""
    requests = [*rest, {"id": 99, "method": "shutdown"}, {"method": "exit"}]
    stdin = io.BytesIO(first + b"".join(_frame(m) for m in requests))
    stdout = _Output()
    lsp_start.serve_stdio(lsp.build_server, stdin=stdin, stdout=stdout)
    return _messages(stdout.getvalue())


def _initialize(root: Path | None, capabilities: dict, **more) -> bytes:
    params = {"processId": None, "capabilities": capabilities, **more}
    params["rootUri"] = root.as_uri() if root else None
    return _frame({"id": 1, "method": "initialize", "params": params})


def _remembered(root: Path) -> list[Path]:
    folder = root / ".vllm_spec_lint_cache" / __version__ / "initialize"
    return sorted(folder.glob("*.json"))


def _answers(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m.get("id") == 1]


def test_the_first_start_sends_pygls_answer_once_and_remembers_it(tmp_path):
    messages = _serve(_initialize(tmp_path, {}), {"method": "initialized"})
    [answer] = _answers(messages)
    assert answer["result"]["serverInfo"]["name"] == "vllm-spec-lint"
    [entry] = _remembered(tmp_path)
    assert json.loads(entry.read_text()) == answer["result"]
    assert [m["id"] for m in messages if "id" in m] == [1, 99]


def test_the_next_start_gives_the_remembered_answer_first_and_only_once(tmp_path):
    [first] = _answers(_serve(_initialize(tmp_path, {})))
    [entry] = _remembered(tmp_path)
    # What is remembered is what is given: mark it to see it come back.
    marked = {**first["result"], "remembered": True}
    entry.write_text(json.dumps(marked))
    messages = _serve(_initialize(tmp_path, {}))
    assert _answers(messages) == [{"jsonrpc": "2.0", "id": 1, "result": marked}]
    assert messages[0]["id"] == 1
    # pygls's own answer differs from the marked one: it replaces it.
    assert json.loads(entry.read_text()) == first["result"]


def test_a_client_with_other_capabilities_or_options_gets_its_own_entry(tmp_path):
    _serve(_initialize(tmp_path, {}))
    utf8 = {"general": {"positionEncodings": ["utf-8"]}}
    [answer] = _answers(_serve(_initialize(tmp_path, utf8)))
    assert answer["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert len(_remembered(tmp_path)) == 2
    _serve(_initialize(tmp_path, {}, initializationOptions={"select": ["VSL001"]}))
    assert len(_remembered(tmp_path)) == 3
    _serve(_initialize(tmp_path, utf8))
    assert len(_remembered(tmp_path)) == 3


def test_a_workspace_folder_is_the_project_when_there_is_no_root_uri(tmp_path):
    folders = [{"uri": tmp_path.as_uri(), "name": "project"}]
    _serve(_initialize(None, {}, workspaceFolders=folders))
    assert len(_remembered(tmp_path)) == 1


def test_a_corrupt_remembered_answer_is_replaced_and_pygls_answers(tmp_path):
    [first] = _answers(_serve(_initialize(tmp_path, {})))
    [entry] = _remembered(tmp_path)
    entry.write_text("{not json")
    assert _answers(_serve(_initialize(tmp_path, {}))) == [first]
    assert json.loads(entry.read_text()) == first["result"]


def test_without_a_folder_or_with_a_missing_one_nothing_is_kept(tmp_path):
    [answer] = _answers(_serve(_initialize(None, {})))
    assert answer["result"]["serverInfo"]["name"] == "vllm-spec-lint"
    missing = tmp_path / "gone"
    [answer] = _answers(_serve(_initialize(missing, {})))
    assert answer["result"]["serverInfo"]["name"] == "vllm-spec-lint"
    remote = _frame(
        {
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "rootUri": "vscode-vfs://github/x"},
        }
    )
    assert len(_answers(_serve(remote))) == 1
    # A web address whose path happens to be a folder here is no folder.
    web = _frame(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "capabilities": {},
                "rootUri": "https://example.com" + tmp_path.as_posix(),
            },
        }
    )
    assert len(_answers(_serve(web))) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_first_message_that_is_not_initialize_is_left_to_pygls(tmp_path):
    shutdown = _frame({"id": 5, "method": "shutdown"})
    messages = _serve(shutdown, {"method": "initialize", "id": 1, "params": {}})
    assert [m.get("id") for m in messages][:1] == [5]
    notification = _frame(
        {"method": "initialize", "params": {"rootUri": tmp_path.as_uri()}}
    )
    _serve(notification)
    assert list(tmp_path.iterdir()) == []


def test_the_first_frame_is_read_whatever_its_header_spelling(tmp_path):
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "rootUri": tmp_path.as_uri()},
        }
    ).encode()
    header = b"content-length: %d\nContent-Type: application/json\n\n" % len(body)
    stream = io.BytesIO(header + body + b"rest")
    raw, message = lsp_start._read_frame(stream)
    assert raw == header + body
    assert message["params"]["rootUri"] == tmp_path.as_uri()
    assert stream.read() == b"rest"


def test_a_first_frame_that_is_not_a_json_object_is_no_message():
    for body in (b"{not json", b"[1, 2]"):
        frame = b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert lsp_start._read_frame(io.BytesIO(frame)) == (frame, {})
    no_length = b"X-Other: 1\r\n\r\n{}"
    assert lsp_start._read_frame(io.BytesIO(no_length)) == (b"X-Other: 1\r\n\r\n", {})
    cut = b"Content-Length: 10\r\n"
    assert lsp_start._read_frame(io.BytesIO(cut)) == (cut, {})


def test_a_frame_is_written_with_the_protocols_header_spelling():
    stream = io.BytesIO()
    lsp_start._write_frame(stream, {"id": 1, "result": None})
    body = b'{"id": 1, "result": null}'
    assert stream.getvalue() == b"Content-Length: 25\r\n\r\n" + body


def test_the_prefixed_stream_gives_what_was_read_first_by_the_size_asked():
    stream = lsp_start._Prefixed(b"Header: 1\r\n\r\nbody", io.BytesIO(b"rest\nmore"))
    assert stream.readline() == b"Header: 1\r\n"
    assert stream.readline() == b"\r\n"
    assert stream.read(2) == b"bo"
    assert stream.read(5) == b"dy"
    assert stream.read(4) == b"rest"
    assert stream.readline() == b"\n"


def _writer(sent, answers=None, key="k"):
    out = _Output()
    return out, lsp_start._InitializeWriter(out, 1, sent, answers, key)


def test_the_writer_holds_back_only_pygls_answer_to_initialize(tmp_path):
    from vllm_spec_lint.edges.cache import InitializeAnswers

    answers = InitializeAnswers(tmp_path)
    out, writer = _writer({"capabilities": {}}, answers)
    other_answer = _frame({"id": 2, "result": {"capabilities": {}}})
    not_json = b"Content-Length: 3\r\n\r\nabc"
    refused = _frame({"id": 1, "error": {"code": -32602, "message": "bad"}})
    writer.write(other_answer)  # another request's answer: passed on
    writer.write(not_json)
    writer.write(refused)  # an error is no answer to remember or hold back
    writer.write(_frame({"id": 1, "result": {"capabilities": {}}}))  # held back
    later = _frame({"id": 1, "result": {"capabilities": {"late": True}}})
    writer.write(later)  # the answer is held back once: a later id 1 passes
    assert out.getvalue() == other_answer + not_json + refused + later
    assert answers.get("k") is None  # the same as the one sent: not rewritten


def test_the_key_is_the_same_for_the_same_capabilities_in_any_order():
    first = {"capabilities": {"general": {"a": 1}, "textDocument": {}}}
    second = {"capabilities": {"textDocument": {}, "general": {"a": 1}}}
    assert lsp_start._key_of(first) == lsp_start._key_of(second)
    other = {"capabilities": {"general": {"a": 2}, "textDocument": {}}}
    assert lsp_start._key_of(first) != lsp_start._key_of(other)


def test_the_key_changes_with_pygls_or_lsprotocols_version(monkeypatch):
    from importlib import metadata

    params = {"capabilities": {}}
    before = lsp_start._key_of(params)
    real = metadata.version
    keys = {before}
    for package in ("pygls", "lsprotocol"):
        with monkeypatch.context() as patched:
            patched.setattr(
                metadata,
                "version",
                lambda name, package=package: (
                    "0.0.1" if name == package else real(name)
                ),
            )
            keys.add(lsp_start._key_of(params))
    assert len(keys) == 3
    assert lsp_start._key_of(params) == before


def test_odd_first_messages_are_left_to_pygls_and_nothing_is_kept(tmp_path):
    # Another request naming a root: not an initialize, nothing remembered.
    messages = _serve(
        _frame(
            {"id": 5, "method": "shutdown", "params": {"rootUri": tmp_path.as_uri()}}
        )
    )
    assert [m.get("id") for m in messages] == [5]
    assert list(tmp_path.iterdir()) == []
    # Nor answered from what is remembered for an initialize like it.
    _serve(_initialize(tmp_path, {}))
    assert len(_remembered(tmp_path)) == 1
    like_initialize = {"capabilities": {}, "rootUri": tmp_path.as_uri()}
    messages = _serve(
        _frame({"id": 5, "method": "shutdown", "params": like_initialize})
    )
    assert messages == [{"id": 5, "jsonrpc": "2.0", "result": None}]
    # An initialize without params: pygls refuses it (its own log message).
    messages = _serve(_frame({"id": 1, "method": "initialize", "params": None}))
    assert [m.get("id") for m in messages] == [None, 99]
    # A root that is no string: answered, nothing remembered.
    odd_root = {"capabilities": {}, "rootUri": 5}
    [answer] = _answers(
        _serve(_frame({"id": 1, "method": "initialize", "params": odd_root}))
    )
    assert answer["result"]["serverInfo"]["name"] == "vllm-spec-lint"


def test_a_content_length_that_is_no_number_is_no_message():
    frame = b"Content-Length: abc\r\n\r\n{}"
    assert lsp_start._read_frame(io.BytesIO(frame)) == (
        b"Content-Length: abc\r\n\r\n",
        {},
    )
