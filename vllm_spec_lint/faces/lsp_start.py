"""The language server's start over stdio: ``initialize`` answered at once.

Importing pygls and lsprotocol takes about half a second (lsprotocol's
types alone most of it), and an editor waits for the answer to
``initialize`` before anything else. The answer depends only on the
client's capabilities and on what the server offers, so the answer pygls
gave last time in this project is remembered (edges/cache.py) and given
again before pygls is imported; pygls then reads the same ``initialize``
and sets itself up, and its own answer, the same, is not sent twice. The
first start with a client (or after an upgrade) waits for pygls as before.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from vllm_spec_lint import __version__


def serve_stdio(
    build_server: Callable[[], Any],
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Serve over stdin/stdout (or the streams given); ``build_server``
    imports pygls and builds the server (faces/lsp.py)."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    first, message = _read_frame(stdin)
    request_id = answers = key = cached = None
    if message.get("method") == "initialize" and "id" in message:
        request_id, params = message["id"], message.get("params") or {}
        root = _root_of(params)
        if root is not None:
            from vllm_spec_lint.edges.cache import InitializeAnswers

            answers, key = InitializeAnswers(root), _key_of(params)
            cached = answers.get(key)
            if cached is not None:
                _write_frame(
                    stdout, {"jsonrpc": "2.0", "id": request_id, "result": cached}
                )
    server = build_server()
    writer = _InitializeWriter(stdout, request_id, cached, answers, key)
    server.start_io(stdin=_Prefixed(first, stdin), stdout=writer)


def _read_frame(stream: BinaryIO) -> tuple[bytes, dict]:
    """The first message's bytes as read, and the message (empty when it is
    not JSON: pygls answers that)."""
    raw, length = b"", None
    while True:
        line = stream.readline()
        raw += line
        if not line or line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value)
    if not line or length is None:
        return raw, {}
    body = stream.read(length)
    try:
        message = json.loads(body)
    except ValueError:
        message = {}
    return raw + body, message if isinstance(message, dict) else {}


def _write_frame(stream: BinaryIO, message: dict) -> None:
    body = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def _root_of(params: dict) -> Path | None:
    """The project's folder: where its cache is."""
    folders = params.get("workspaceFolders") or []
    uri = params.get("rootUri") or (folders[0].get("uri") if folders else None)
    if not isinstance(uri, str) or not uri.startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    root = Path(unquote(urlparse(uri).path))
    return root if root.is_dir() else None


def _key_of(params: dict) -> str:
    from importlib import metadata

    versions = [__version__]
    for package in ("pygls", "lsprotocol"):
        try:
            versions.append(metadata.version(package))
        except metadata.PackageNotFoundError:
            versions.append("")
    # What the server offers is lsp.py's: a change to it is a new answer.
    offered = (Path(__file__).parent / "lsp.py").read_bytes()
    decided = json.dumps(
        [versions, params.get("capabilities"), params.get("initializationOptions")],
        sort_keys=True,
    )
    return hashlib.sha256(decided.encode() + offered).hexdigest()


class _Prefixed:
    """``stream`` with ``first`` read from it again: pygls reads the message
    this module read."""

    def __init__(self, first: bytes, stream: BinaryIO):
        import io

        self._first = io.BytesIO(first)
        self._stream = stream

    def readline(self) -> bytes:
        return self._first.readline() or self._stream.readline()

    def read(self, size: int = -1) -> bytes:
        return self._first.read(size) or self._stream.read(size)


class _InitializeWriter:
    """stdout for pygls: its answer to ``initialize`` is remembered, and not
    sent again when the remembered one was sent."""

    def __init__(self, stream, request_id, sent: dict | None, answers, key):
        self._stream = stream
        self._id = request_id
        self._sent = sent
        self._answers, self._key = answers, key

    def write(self, data: bytes) -> None:
        if self._id is not None:
            _, _, body = data.partition(b"\r\n\r\n")
            try:
                message = json.loads(body)
            except ValueError:
                message = {}
            if message.get("id") == self._id and "result" in message:
                self._id = None  # one answer per server
                answer = message["result"]
                if self._answers is not None and answer != self._sent:
                    self._answers.put(self._key, answer)
                if self._sent is not None:
                    return
        self._stream.write(data)

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()
