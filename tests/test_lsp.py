"""The language server, end to end, with a real LSP client over stdio
(pytest-lsp, built on pygls's client): what an editor sees."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import run_cli

KCI = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
WORKER = (
    KCI
    + "\n\ndef register(layer_spec):\n"
    + "    is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    + "    return is_mla_region\n"
)
FIXED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "\n\ndef register(layer_spec):\n"
    "    is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    "    return is_mla_region\n"
)
PAGE = "https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md"


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "worker.py").write_text(WORKER)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "vllm_spec_lint", "server"]
    ),
)
async def client(lsp_client: LanguageClient, project: Path):
    registered: list[types.Registration] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):  # as VS Code accepts them
        registered.extend(params.registrations)

    lsp_client.registered = registered
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(project.as_uri(), "project")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )


def _change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=version
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply TextEdits (positions in UTF-16 code units), last first."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        units, index = 0, 0
        while units < position.character and index < len(line):
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return sum(len(x) for x in lines[: position.line]) + index

    spans = sorted(
        ((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def test_open_reports_the_finding_with_its_page(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    [diagnostic] = await _diagnostics(client, uri)
    assert diagnostic.code == "VSL001"
    assert diagnostic.source == "vllm-spec-lint"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.code_description.href == PAGE
    assert diagnostic.range == types.Range(
        start=types.Position(line=4, character=43),
        end=types.Position(line=4, character=59),
    )
    assert diagnostic.message == (
        "isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec"
    )


async def test_the_buffer_not_the_file_is_checked(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, "x = 1\n")
    assert await _diagnostics(client, uri) == []
    _change(client, uri, WORKER, 2)
    [diagnostic] = await _diagnostics(client, uri)
    assert diagnostic.code == "VSL001"
    _change(client, uri, FIXED, 3)
    assert await _diagnostics(client, uri) == []


async def test_a_buffer_that_does_not_parse_keeps_no_stale_diagnostics(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    assert [d.code for d in await _diagnostics(client, uri)] == ["VSL001"]
    _change(client, uri, KCI + "def broken(:\n", 2)
    [diagnostic] = await _diagnostics(client, uri)
    assert diagnostic.code == "VSL900"
    _change(client, uri, WORKER, 3)
    assert [d.code for d in await _diagnostics(client, uri)] == ["VSL001"]


async def test_save_checks_again(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    assert [d.code for d in await _diagnostics(client, uri)] == ["VSL001"]
    (project / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nstrict = true\n")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri))
    )
    # Saved: checked again (the settings are the folder's, read once).
    assert [d.code for d in await _diagnostics(client, uri)] == ["VSL001"]


async def test_close_clears_the_diagnostics(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    await _diagnostics(client, uri)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri)
        )
    )
    assert await _diagnostics(client, uri) == []


async def test_the_fix_action_gives_the_text_fix_gives(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    [diagnostic] = await _diagnostics(client, uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    titles = [a.title for a in actions]
    assert titles == [
        "Add SlidingWindowMLASpec (VSL001) - unsafe: changes what the check admits",
        "Keep: add `# noqa: VSL001`",
    ]
    fix, keep = actions
    assert not fix.is_preferred
    edits = fix.edit.changes[uri]
    assert len(edits) == 2  # the import and the check, nothing else
    fixed_in_editor = _apply(WORKER, edits)
    run_cli("fix", "--unsafe-fixes", "--no-cache", "worker.py", cwd=project)
    assert fixed_in_editor == (project / "worker.py").read_text()
    kept = _apply(WORKER, keep.edit.changes[uri])
    assert kept == WORKER.replace(
        "MLAAttentionSpec)\n", "MLAAttentionSpec)  # noqa: VSL001\n"
    )


async def test_fix_all_applies_safe_fixes_only(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    await _diagnostics(client, uri)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(
            diagnostics=[], only=["source.fixAll.vllm-spec-lint"]
        ),
    )
    # Every fix is unsafe: nothing to apply.
    assert not await client.text_document_code_action_async(params)
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(project / "pyproject.toml").as_uri(),
                    type=types.FileChangeType.Created,
                )
            ]
        )
    )
    await _diagnostics(client, uri)
    [action] = await client.text_document_code_action_async(params)
    assert action.kind == "source.fixAll.vllm-spec-lint"
    assert _apply(WORKER, action.edit.changes[uri]) == FIXED


async def test_settings_change_is_picked_up(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    assert len(await _diagnostics(client, uri)) == 1
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nignore = ["VSL001"]\n'
    )
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={})
    )
    assert await _diagnostics(client, uri) == []


async def test_hierarchy_change_is_picked_up(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    assert len(await _diagnostics(client, uri)) == 1
    kci = project / "vllm" / "v1" / "kv_cache_interface.py"
    kci.parent.mkdir(parents=True)
    kci.write_text(
        "class KVCacheSpec: ...\nclass AttentionSpec(KVCacheSpec): ...\n"
        "class MLAAttentionSpec(AttentionSpec): ...\n"
        "class SlidingWindowMLASpec(MLAAttentionSpec): ...\n"
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=kci.as_uri(), type=types.FileChangeType.Created)
            ]
        )
    )
    assert await _diagnostics(client, uri) == []


async def test_hover_shows_where_the_classes_sit(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    [diagnostic] = await _diagnostics(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line=4, character=50),
        )
    )
    assert (
        "MLAAttentionSpec <- FullAttentionSpec <- AttentionSpec <- KVCacheSpec"
        in hover.contents.value
    )
    assert (
        "SlidingWindowMLASpec <- SlidingWindowSpec <- AttentionSpec <- KVCacheSpec"
        in hover.contents.value
    )
    nothing = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line=0, character=0),
        )
    )
    assert nothing is None


@pytest.mark.parametrize("name", ["worker.py", "missing.py"])
async def test_requests_on_a_document_never_opened_answer_nothing(
    client, project, name
):
    """A client may ask about a file it has not opened (one on disk, one
    that does not exist): no buffer, so no answer, and no error."""
    (project / "worker.py").write_text(WORKER)
    uri = (project / name).as_uri()
    position = types.Position(line=4, character=50)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position)
    )
    assert hover is None
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(position, position),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions  # no action: [] or null, as the client decodes it
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )
    assert list(report.items) == []


async def test_positions_are_utf16(client, project):
    uri = (project / "worker.py").as_uri()
    # Two characters before the check that are two UTF-16 units each.
    text = WORKER.replace(
        "    is_mla_region = ", '    note = "\U0001f600\U0001f600"; is_mla_region = '
    )
    _open(client, uri, text)
    [diagnostic] = await _diagnostics(client, uri)
    line = text.splitlines()[4]
    code_points = line.index("MLAAttentionSpec)")
    assert diagnostic.range.start == types.Position(line=4, character=code_points + 2)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    fixed = _apply(text, actions[0].edit.changes[uri])
    assert "(MLAAttentionSpec, SlidingWindowMLASpec)" in fixed
    assert 'note = "\U0001f600\U0001f600"; ' in fixed


async def test_pull_diagnostics(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    await _diagnostics(client, uri)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri))
    )
    assert [d.code for d in report.items] == ["VSL001"]


async def test_the_server_asks_to_watch_settings_and_family_modules(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, WORKER)
    await _diagnostics(client, uri)
    [registration] = client.registered
    assert registration.method == "workspace/didChangeWatchedFiles"
    patterns = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert patterns == ["**/pyproject.toml", "**/setup.cfg", "**/tox.ini", "**/*.py"]


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "vllm_spec_lint", "server"]
    ),
)
async def static_client(lsp_client: LanguageClient, project: Path):
    """VS Code's capabilities, but file watching without dynamic
    registration (as Neovim 0.7 announces it)."""
    import attrs

    registered: list[types.Registration] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        registered.extend(params.registrations)

    lsp_client.registered = registered
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    workspace = attrs.evolve(
        capabilities.workspace,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=False
        ),
    )
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=attrs.evolve(capabilities, workspace=workspace),
            root_uri=project.as_uri(),
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_a_client_without_dynamic_registration_is_not_asked_to_watch(
    static_client, project
):
    """The protocol: a server must not register a capability dynamically
    with a client that did not announce it can take that."""
    uri = (project / "worker.py").as_uri()
    _open(static_client, uri, WORKER)
    [diagnostic] = await _diagnostics(static_client, uri)
    assert diagnostic.code == "VSL001"
    assert static_client.registered == []


# -- robustness, with raw JSON-RPC frames ------------------------------------------


def _frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def _read_message(stream) -> dict:
    import json

    length = None
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("the server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def _response(stream, request_id) -> dict:
    while True:
        message = _read_message(stream)
        if message.get("id") == request_id and "method" not in message:
            return message


def test_malformed_and_unknown_messages_leave_the_server_up(tmp_path):
    import json
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", "server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        send = server.stdin.write
        send(_frame(b"{this is not json"))
        send(
            _frame(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "vsl/nothing", "params": {}}
                ).encode()
            )
        )
        send(
            _frame(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "initialize",
                        "params": {"capabilities": {}, "rootUri": tmp_path.as_uri()},
                    }
                ).encode()
            )
        )
        server.stdin.flush()
        unknown = _response(server.stdout, 1)
        assert unknown["error"]["code"] == -32601  # method not found
        initialized = _response(server.stdout, 2)
        assert initialized["result"]["serverInfo"] == {
            "name": "vllm-spec-lint",
            "version": metadata.version("vllm-spec-lint"),
        }
        capabilities = initialized["result"]["capabilities"]
        assert capabilities["codeActionProvider"]["codeActionKinds"] == [
            "quickfix",
            "source.fixAll.vllm-spec-lint",
        ]
        # A document outside the workspace, and one nested too deeply.
        outside = tmp_path.parent / "elsewhere.py"
        deep = (
            KCI
            + "x = "
            + "(" * 5000
            + ")" * 5000
            + "\nok = isinstance(s, MLAAttentionSpec)\n"
        )
        for version, (uri, text) in enumerate(
            [(outside.as_uri(), WORKER), ((tmp_path / "deep.py").as_uri(), deep)]
        ):
            send(
                _frame(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "method": "textDocument/didOpen",
                            "params": {
                                "textDocument": {
                                    "uri": uri,
                                    "languageId": "python",
                                    "version": version,
                                    "text": text,
                                }
                            },
                        }
                    ).encode()
                )
            )
        server.stdin.flush()
        published = {}
        while len(published) < 2:
            message = _read_message(server.stdout)
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                published[params["uri"]] = [d["code"] for d in params["diagnostics"]]
        assert published[outside.as_uri()] == ["VSL001"]
        assert published[(tmp_path / "deep.py").as_uri()] == ["VSL900"]
        send(
            _frame(
                json.dumps({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}).encode()
            )
        )
        server.stdin.flush()
        assert _response(server.stdout, 3)["result"] is None
        send(_frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()))
        server.stdin.flush()
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        server.wait()


def test_a_client_that_disappears_leaves_no_process_behind():
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", "server"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    server.stdin.close()  # the editor is gone
    try:
        assert server.wait(timeout=30) is not None
    finally:
        server.kill()


def test_server_without_pygls_says_how_to_install_it(tmp_path):
    fake = tmp_path / "fake"
    (fake / "pygls").mkdir(parents=True)
    (fake / "pygls" / "__init__.py").write_text("raise ImportError('not installed')\n")
    import os

    out = run_cli(
        "server",
        env={"PYTHONPATH": f"{fake}{os.pathsep}{Path(__file__).parent.parent}"},
    )
    assert out.returncode == 2
    assert out.stderr.endswith("pip install 'vllm-spec-lint[lsp]'\n")
    assert "Traceback" not in out.stderr


async def test_a_newer_change_supersedes_an_older_one(client, project):
    uri = (project / "worker.py").as_uri()
    _open(client, uri, "x = 1\n")
    await _diagnostics(client, uri)
    for version in range(2, 12):  # typed fast: only the last has the finding
        _change(client, uri, WORKER if version == 11 else f"x = {version}\n", version)
    published = []
    while 11 not in published:
        params = await client.wait_for_notification(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
        )
        published.append(params.version)
    assert published == sorted(published)  # nothing older after something newer
    assert [d.code for d in client.diagnostics[uri]] == ["VSL001"]
