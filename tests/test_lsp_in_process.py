"""The language server's features called in this process, on a server that
was initialized as a client would. ``test_lsp.py`` drives the real protocol
over stdio; these reach the same code where mutation testing's mutants live
(a server process of its own never sees them)."""

from __future__ import annotations

import asyncio
from importlib import metadata
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

from tests.conftest import (  # noqa: E402
    COMPRESSED_PARENT,
    write_family_module,
    write_plugin_package,
)
from tests.test_lsp import FIXED, KCI, WORKER, _apply  # noqa: E402
from vllm_spec_lint.faces import lsp  # noqa: E402


def initialized_server(root: Path, encoding=None) -> lsp.SpecLintServer:
    server = lsp.build_server()
    general = types.GeneralClientCapabilities(position_encodings=encoding)
    handshake = server.protocol.lsp_initialize(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(general=general),
            root_uri=root.as_uri(),
        )
    )
    for _ in handshake:  # the generator yields the user's handler, if any
        pass
    return server


def opened(server: lsp.SpecLintServer, path: Path, text: str) -> str:
    uri = path.as_uri()
    server.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    )
    return uri


def code_actions(server, uri: str, span: types.Range, diagnostics, only=None):
    return lsp.code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=span,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        ),
    )


def hover_at(server, uri: str, line: int, character: int):
    return lsp.hover(
        server,
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line=line, character=character),
        ),
    )


def quick_fixed(project: Path, name: str, text: str) -> str:
    """``text``, opened as ``name`` in ``project``, after the quick fix of
    its one finding."""
    server = initialized_server(project)
    uri = opened(server, project / name, text)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    fix, _keep = code_actions(server, uri, diagnostic.range, [diagnostic])
    return _apply(text, fix.edit.changes[uri])


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_the_server_gives_its_name_and_the_packages_version(project):
    server = initialized_server(project)
    assert (server.name, server.version) == (
        "vllm-spec-lint",
        metadata.version("vllm-spec-lint"),
    )


def test_a_finding_becomes_a_diagnostic_with_its_range_code_and_page(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert diagnostic == types.Diagnostic(
        range=types.Range(
            start=types.Position(line=4, character=43),
            end=types.Position(line=4, character=59),
        ),
        message=(
            "isinstance() check against MLAAttentionSpec leaves out "
            "SlidingWindowMLASpec"
        ),
        severity=types.DiagnosticSeverity.Warning,
        code="VSL001",
        code_description=types.CodeDescription(
            href="https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md"
        ),
        source="vllm-spec-lint",
        data={"row": 5, "column": 44, "name": "isinstance-leaves-out-companion"},
    )


def test_positions_are_counted_in_the_clients_units(project):
    # Two characters outside the BMP before the check: two UTF-16 units each,
    # one code point each in UTF-32.
    text = WORKER.replace("    is_mla_region", "    x = '𝔘𝔘'; is_mla_region")
    utf16 = initialized_server(project)
    uri = opened(utf16, project / "worker.py", text)
    [diagnostic] = utf16.diagnostics(uri, utf16.check(uri))
    assert (diagnostic.range.start.character, diagnostic.range.end.character) == (
        55,
        71,
    )
    utf32 = initialized_server(project, [types.PositionEncodingKind.Utf32])
    uri = opened(utf32, project / "worker.py", text)
    [diagnostic] = utf32.diagnostics(uri, utf32.check(uri))
    assert (diagnostic.range.start.character, diagnostic.range.end.character) == (
        53,
        69,
    )


def test_bad_settings_are_one_diagnostic_at_the_top_and_defaults_apply(project):
    (project / "pyproject.toml").write_text('[tool.vllm-spec-lint]\nselect = ["XYZ"]\n')
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    settings, finding = server.diagnostics(uri, server.check(uri))
    assert settings.range == types.Range(types.Position(0, 0), types.Position(0, 0))
    assert settings.severity == types.DiagnosticSeverity.Error
    assert settings.message == (
        f"settings not used: {project / 'pyproject.toml'}: invalid value for "
        "'select': unknown rule selector 'XYZ' (codes: VSL001, VSL002, VSL003, "
        "VSL004, VSL005, VSL006, VSL007, VSL008, VSL900)"
    )
    assert settings.source == "vllm-spec-lint"
    assert finding.code == "VSL001"


def test_a_bad_exclude_pattern_is_a_settings_diagnostic_and_defaults_apply(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["[z-a]"]\n'
    )
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    settings, finding = server.diagnostics(uri, server.check(uri))
    assert settings.message == (
        f"settings not used: {project / 'pyproject.toml'}: invalid value for "
        "'exclude': '[z-a]' is not a glob: the range 'z-a' runs backwards"
    )
    assert finding.code == "VSL001"


def test_a_gitignore_line_git_cannot_match_changes_nothing(project):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("[z-a]\nfoo\\\n[[:alpha:]]x\n")
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [finding] = server.diagnostics(uri, server.check(uri))
    assert finding.code == "VSL001"


def test_a_vllm_source_that_is_not_there_is_a_settings_diagnostic(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nvllm-source = "missing"\n'
    )
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    settings, finding = server.diagnostics(uri, server.check(uri))
    assert settings.message == (
        f"settings not used: {project / 'missing'}: no "
        "vllm/v1/kv_cache_interface.py there (expected a vLLM checkout or a "
        "site-packages folder)"
    )
    assert finding.code == "VSL001"
    # The built-in hierarchy stands in: the hover shows its family.
    shown = hover_at(server, uri, 4, 50)
    assert shown.contents.value.startswith(
        "**VSL001** `isinstance-leaves-out-companion`: family mla\n\n```text\n"
        "  MLAAttentionSpec <- FullAttentionSpec <- AttentionSpec <- KVCacheSpec\n"
    )


def test_a_family_module_that_cannot_be_read_is_a_warning_and_defaults_apply(
    project,
):
    module = project / "vllm" / "v1" / "kv_cache_interface.py"
    module.parent.mkdir(parents=True)
    module.write_text("class KVCacheSpec(:\n")
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    warning, finding = server.diagnostics(uri, server.check(uri))
    assert (warning.range, warning.severity, warning.message, warning.source) == (
        types.Range(types.Position(0, 0), types.Position(0, 0)),
        types.DiagnosticSeverity.Warning,
        f"{module}: cannot read class hierarchy: invalid syntax (<unknown>, line 1)",
        "vllm-spec-lint",
    )
    assert finding.code == "VSL001"


def test_only_python_documents_are_checked(project):
    server = initialized_server(project)
    assert server.check(opened(server, project / "notes.txt", WORKER)) is None
    assert server.check(opened(server, project / "stub.pyi", WORKER)) is not None


def test_quick_fixes_give_the_fixed_text_and_the_noqa_line(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    fix, keep = code_actions(server, uri, diagnostic.range, [diagnostic])
    assert fix.title == (
        "Add SlidingWindowMLASpec (VSL001) - unsafe: changes what the check admits"
    )
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.is_preferred is None
    assert fix.diagnostics == [diagnostic]
    assert _apply(WORKER, fix.edit.changes[uri]) == FIXED
    assert keep.title == "Keep: add `# noqa: VSL001`"
    assert keep.kind == types.CodeActionKind.QuickFix
    assert keep.diagnostics == [diagnostic]
    assert keep.is_preferred is None
    assert _apply(WORKER, keep.edit.changes[uri]) == WORKER.replace(
        "MLAAttentionSpec)\n", "MLAAttentionSpec)  # noqa: VSL001\n"
    )


def test_a_quick_fix_changes_its_own_finding_only(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nfix-formatter = "none"\n'
    )
    text = WORKER + "\n\nALSO = isinstance(spec, MLAAttentionSpec)\n"
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", text)
    first, second = server.diagnostics(uri, server.check(uri))
    fix, _keep = code_actions(server, uri, second.range, [second])
    assert _apply(text, fix.edit.changes[uri]) == (
        WORKER.replace(
            "import MLAAttentionSpec\n",
            "import MLAAttentionSpec, SlidingWindowMLASpec\n",
        )
        + "\n\nALSO = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )


@pytest.mark.parametrize(
    "formatter, expected",
    [
        (
            "ruff",
            "from vllm.v1.kv_cache_interface import (\n"
            "    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec,\n"
            ")\n"
            "\n\n"
            "def register(layer_spec):\n"
            "    is_mla_region = isinstance(\n"
            "        layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
            "    )\n"
            "    return is_mla_region\n",
        ),
        ("none", FIXED),
    ],
)
def test_a_quick_fix_is_laid_out_by_the_projects_formatter(
    project, formatter, expected
):
    (project / "pyproject.toml").write_text(
        f'[tool.vllm-spec-lint]\nline-length = 60\nfix-formatter = "{formatter}"\n'
    )
    assert quick_fixed(project, "worker.py", WORKER) == expected


def test_a_quick_fix_is_laid_out_by_the_formatter_the_project_uses(project):
    """Found from the document's project (yapf here), not the server's
    working folder."""
    (project / ".style.yapf").write_text(
        "[style]\nbased_on_style = pep8\ncolumn_limit = 60\n"
    )
    assert quick_fixed(project, "worker.py", WORKER) == (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\n"
        "def register(layer_spec):\n"
        "    is_mla_region = isinstance(\n"
        "        layer_spec,\n"
        "        (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "    return is_mla_region\n"
    )


def test_a_quick_fix_uses_the_projects_hierarchy(project):
    write_family_module(project, COMPRESSED_PARENT)
    text = (
        "from vllm.v1.kv_cache_interface import CompressedSpec\n"
        "\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, CompressedSpec):\n"
        "        raise ValueError('no compression')\n"
    )
    assert quick_fixed(project, "check.py", text) == (
        "from vllm.v1.kv_cache_interface import CompressedSpec, SlidingWindowMLASpec\n"
        "\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, CompressedSpec) and not isinstance(spec, SlidingWindowMLASpec):\n"
        "        raise ValueError('no compression')\n"
    )


def test_fix_all_resolves_relative_imports_by_the_documents_package(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
    )
    layers = write_plugin_package(project)
    text = layers.read_text()
    server = initialized_server(project)
    uri = opened(server, layers, text)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    [fix_all] = code_actions(
        server, uri, diagnostic.range, [], ["source.fixAll.vllm-spec-lint"]
    )
    assert _apply(text, fix_all.edit.changes[uri]) == (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as VllmMLA\n"
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n"
        "\n"
        "from .kv_cache_interface import MLAAttentionSpec\n"
        "\n"
        "ours = isinstance(s, MLAAttentionSpec)\n"
        "vllms = isinstance(s, (VllmMLA, SlidingWindowMLASpec))\n"
    )


def test_a_safe_fix_is_preferred_and_fix_all_applies_it(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
    )
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    quick = code_actions(
        server, uri, diagnostic.range, [diagnostic], [types.CodeActionKind.QuickFix]
    )
    assert [a.title for a in quick] == [
        "Add SlidingWindowMLASpec (VSL001)",
        "Keep: add `# noqa: VSL001`",
    ]
    assert quick[0].is_preferred is True
    [fix_all] = code_actions(
        server, uri, diagnostic.range, [], ["source.fixAll.vllm-spec-lint"]
    )
    assert fix_all.title == "vllm-spec-lint: apply every safe fix"
    assert fix_all.kind == "source.fixAll.vllm-spec-lint"
    assert fix_all.diagnostics is None
    assert _apply(WORKER, fix_all.edit.changes[uri]) == FIXED


@pytest.mark.parametrize(
    "only, kinds",
    [
        (["source"], ["source.fixAll.vllm-spec-lint"]),
        (["source.fixAll"], ["source.fixAll.vllm-spec-lint"]),
        (["quickfix"], ["quickfix", "quickfix"]),
        (["refactor"], []),
        # Any kind named is asked for.
        (
            ["refactor", "quickfix", "source"],
            ["quickfix", "quickfix", "source.fixAll.vllm-spec-lint"],
        ),
    ],
)
def test_a_client_asking_for_a_kind_gets_the_actions_of_its_sub_kinds(
    project, only, kinds
):
    """LSP: a kind the client names covers every kind below it
    (``source`` covers ``source.fixAll.vllm-spec-lint``)."""
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
    )
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    actions = code_actions(server, uri, diagnostic.range, [diagnostic], only)
    assert [a.kind for a in actions] == kinds


def test_other_sources_diagnostics_get_no_actions(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    foreign = types.Diagnostic(  # even with our data
        range=diagnostic.range,
        message="x",
        code="VSL001",
        source="ruff",
        data=diagnostic.data,
    )
    recoded = types.Diagnostic(  # our place, another code
        range=diagnostic.range,
        message="x",
        code="VSL002",
        source="vllm-spec-lint",
        data=diagnostic.data,
    )
    moved = types.Diagnostic(
        range=diagnostic.range,
        message="x",
        code="VSL001",
        source="vllm-spec-lint",
        data={"row": 4, "column": 44},
    )
    stripped = types.Diagnostic(  # a client that does not send data back
        range=diagnostic.range, message="x", code="VSL001", source="vllm-spec-lint"
    )

    def quick_fixes(diagnostics) -> list[str]:
        kind = [types.CodeActionKind.QuickFix]
        found = code_actions(server, uri, diagnostic.range, diagnostics, kind)
        return [action.title for action in found]

    assert quick_fixes([foreign, recoded, moved, stripped]) == []
    # Passed over, not the end of the list: the finding after them has its own.
    assert quick_fixes([foreign, moved, diagnostic]) == [
        "Add SlidingWindowMLASpec (VSL001) - unsafe: changes what the check admits",
        "Keep: add `# noqa: VSL001`",
    ]


def test_hover_on_a_finding_shows_the_family(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    server.check(uri)

    for character in (43, 50, 59):  # the range's ends are inside
        shown = hover_at(server, uri, 4, character)
        assert shown.range == types.Range(
            start=types.Position(line=4, character=43),
            end=types.Position(line=4, character=59),
        )
    assert shown.contents.kind == types.MarkupKind.Markdown
    assert shown.contents.value == (
        "**VSL001** `isinstance-leaves-out-companion`: family mla\n\n"
        "```text\n"
        "  MLAAttentionSpec <- FullAttentionSpec <- AttentionSpec <- KVCacheSpec\n"
        "  SlidingWindowMLASpec <- SlidingWindowSpec <- AttentionSpec <- KVCacheSpec\n"
        "```\n\n"
        "SlidingWindowMLASpec share(s) MLAAttentionSpec's cache layout without "
        "deriving from it: a test against it alone leaves them out."
    )
    assert hover_at(server, uri, 4, 42) is None
    assert hover_at(server, uri, 4, 60) is None
    assert hover_at(server, uri, 3, 50) is None


def test_hover_shows_every_family_of_the_anchor_and_all_its_companions(project):
    """Families of other anchors are passed over, not the end of the list."""
    (project / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nfamilies = [\n"
        "  { name = 'mamba', module = 'vllm.v1.kv_cache_interface',"
        " members = ['MambaSpec', 'ShortConvSpec'] },\n"
        "  { name = 'mla', module = 'vllm.v1.kv_cache_interface',"
        " members = ['MLAAttentionSpec', 'SlidingWindowMLASpec', 'ChunkedMLASpec'] },\n"
        "  { name = 'chunked', module = 'vllm.v1.kv_cache_interface',"
        " members = ['MLAAttentionSpec', 'ChunkedMLASpec'] },\n"
        "]\n"
    )
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    server.check(uri)
    shown = hover_at(server, uri, 4, 50)
    mla = "  MLAAttentionSpec <- FullAttentionSpec <- AttentionSpec <- KVCacheSpec\n"
    assert shown.contents.value == (
        "**VSL001** `isinstance-leaves-out-companion`: family mla\n\n"
        "```text\n" + mla + "  SlidingWindowMLASpec <- SlidingWindowSpec <- "
        "AttentionSpec <- KVCacheSpec\n"
        "  ChunkedMLASpec\n"
        "```\n\n"
        "SlidingWindowMLASpec, ChunkedMLASpec share(s) MLAAttentionSpec's cache "
        "layout without deriving from it: a test against it alone leaves them out."
        "\n\n"
        "**VSL001** `isinstance-leaves-out-companion`: family chunked\n\n"
        "```text\n" + mla + "  ChunkedMLASpec\n"
        "```\n\n"
        "ChunkedMLASpec share(s) MLAAttentionSpec's cache layout without deriving "
        "from it: a test against it alone leaves them out."
    )


def edits_between(project: Path, before: str, after: str) -> list[types.TextEdit]:
    server = initialized_server(project)
    uri = opened(server, project / "m.py", before)
    document = server.workspace.get_text_document(uri)
    return lsp.minimal_edits(document, before, after)


def test_minimal_edits_touch_only_the_changed_lines(project):
    before = "a = 1\nb = 2\nc = 3\n"
    after = "a = 1\nb = 20\nc = 3\nd = 4\n"
    edits = edits_between(project, before, after)
    assert edits == [
        types.TextEdit(
            range=types.Range(types.Position(1, 0), types.Position(2, 0)),
            new_text="b = 20\n",
        ),
        types.TextEdit(
            range=types.Range(types.Position(3, 0), types.Position(3, 0)),
            new_text="d = 4\n",
        ),
    ]
    assert _apply(before, edits) == after
    assert edits_between(project, before, before) == []


def test_a_package_made_while_the_server_runs_changes_the_module_name(project):
    """Outside a package ``vllm/v1/kv_cache_interface.py`` defines classes of
    its own; once the user adds the ``__init__.py`` files it is vLLM's
    module, and its check against MLAAttentionSpec is reported."""
    from tests.test_oracles import FAMILY_MODULE

    server = initialized_server(project)
    module = project / "vllm" / "v1" / "kv_cache_interface.py"
    module.parent.mkdir(parents=True)
    module.write_text(FAMILY_MODULE)
    uri = opened(server, module, FAMILY_MODULE)
    assert server.check(uri).findings == []
    for folder in ("vllm", "vllm/v1"):
        (project / folder / "__init__.py").write_text("")
    [finding] = server.check(uri).findings
    assert (finding.code, finding.location) == ("VSL001", (10, 29))


# -- pushing diagnostics ------------------------------------------------------------


def sent_diagnostics(server, monkeypatch) -> list[types.PublishDiagnosticsParams]:
    """What the server pushes to the client, in order (no client is attached
    in this process)."""
    sent: list[types.PublishDiagnosticsParams] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", sent.append)
    return sent


def feature(server, method: str):
    return server.protocol.fm.features[method]


def test_publish_pushes_the_documents_diagnostics_with_its_version(
    project, monkeypatch
):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    asyncio.run(server.publish(uri))
    [params] = sent
    assert (params.uri, params.version) == (uri, 1)
    assert [(d.code, d.range.start.line) for d in params.diagnostics] == [("VSL001", 4)]
    assert server.checked[uri].version == 1


def test_the_code_a_check_compiled_is_saved_once_its_diagnostics_are_out(
    project, monkeypatch, tmp_path
):
    """An editor may end the server without a word (no exit to save at)."""
    import dataclasses

    from vllm_spec_lint.edges.code_cache import FOLDER_VARIABLE, compiled_dataclasses

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path / "code-cache"))
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    with compiled_dataclasses() as code:
        dataclasses.make_dataclass("MadeBeforeTheCheck", [("only_here", int)])
        assert (code.compiled > 0, code.path.exists()) == (True, False)
        asyncio.run(server.publish(uri))
        assert (len(sent), code.compiled, code.path.exists()) == (1, 0, True)


def _edit(server, uri: str) -> None:
    server.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=2, text=KCI)
    )


def _close(server, uri: str) -> None:
    server.workspace.remove_text_document(uri)


@pytest.mark.parametrize("meanwhile", [_edit, _close], ids=["edited", "closed"])
def test_a_document_edited_or_closed_during_its_check_gets_nothing(
    project, monkeypatch, meanwhile
):
    """The newer change publishes its own diagnostics; a closed document
    must not get any back."""
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    check_text = server.check_text

    def check_while_the_user_types(*args):
        checked = check_text(*args)
        meanwhile(server, uri)
        return checked

    monkeypatch.setattr(server, "check_text", check_while_the_user_types)
    asyncio.run(server.publish(uri))
    assert sent == [] and uri not in server.checked


def test_a_document_that_is_not_python_gets_nothing(project, monkeypatch):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "notes.txt", WORKER)
    asyncio.run(server.publish(uri))
    assert sent == [] and server.checked == {}


def test_republish_all_pushes_every_open_document(project, monkeypatch):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    first = opened(server, project / "a.py", WORKER)
    second = opened(server, project / "b.py", KCI)
    asyncio.run(server.republish_all())
    assert [(p.uri, len(p.diagnostics)) for p in sent] == [(first, 1), (second, 0)]


def _watched(server, *paths: Path):
    changes = [
        types.FileEvent(uri=p.as_uri(), type=types.FileChangeType.Changed)
        for p in paths
    ]
    handler = feature(server, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    asyncio.run(handler(types.DidChangeWatchedFilesParams(changes=changes)))


def test_a_settings_file_change_rereads_settings_and_republishes(project, monkeypatch):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    server.check(uri)
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nignore = ["VSL001"]\n'
    )
    _watched(server, project / "other.py", project / "pyproject.toml")
    [params] = sent
    assert (params.uri, params.diagnostics) == (uri, [])


def test_a_change_to_an_unrelated_module_keeps_settings_and_pushes_nothing(
    project, monkeypatch
):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    server.check(uri)
    projects = dict(server.projects)
    _watched(server, project / "other.py")
    assert sent == [] and server.projects == projects


def test_a_configuration_change_rereads_settings_and_republishes(project, monkeypatch):
    server = initialized_server(project)
    sent = sent_diagnostics(server, monkeypatch)
    uri = opened(server, project / "worker.py", WORKER)
    server.check(uri)
    (project / "setup.cfg").write_text("[vllm-spec-lint]\nignore = VSL001\n")
    handler = feature(server, types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    asyncio.run(handler(types.DidChangeConfigurationParams(settings={})))
    [params] = sent
    assert (params.uri, params.diagnostics) == (uri, [])


@pytest.mark.parametrize(
    "relative, matters",
    [
        ("pyproject.toml", True),
        ("setup.cfg", True),
        ("sub/tox.ini", True),
        ("other.py", False),
        ("vllm/v1/kv_cache_interface.py", True),
        ("not_vllm/kv_cache_interface.py", False),
        ("setup.cfg.orig", False),
    ],
)
def test_which_watched_files_matter(project, relative, matters):
    server = initialized_server(project)
    server.check(opened(server, project / "worker.py", WORKER))
    assert lsp._matters((project / relative).as_uri(), server) is matters


# -- what a check keeps, and the positions at a document's edges --------------------


def test_a_check_keeps_the_documents_version_and_result(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    checked = server.check(uri)
    assert checked.version == 1
    assert server.checked[uri] is checked


def test_documents_in_one_folder_share_their_settings(project):
    server = initialized_server(project)
    first = server.project_for(project / "a.py")
    assert server.project_for(project / "b.py") is first
    assert list(server.projects) == [project]


def test_an_excluded_document_gets_no_diagnostics(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-exclude = ["generated"]\n'
    )
    (project / "generated").mkdir()
    server = initialized_server(project)
    uri = opened(server, project / "generated" / "worker.py", WORKER)
    assert server.check(uri).findings == []


def test_a_lone_surrogate_in_the_buffer_is_vsl900_not_a_crash(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER + "# \ud800\n")
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert (diagnostic.code, diagnostic.range.start) == ("VSL900", types.Position(0, 0))
    assert diagnostic.message.startswith("cannot decode: 'utf-8' codec can't decode")


@pytest.mark.parametrize(
    "text, start",
    [
        # A finding on the first line, and one in the first column.
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec; "
            "a = isinstance(s, MLAAttentionSpec)\n",
            types.Position(0, 75),
        ),
        (KCI + "'''abc\n", types.Position(1, 0)),
    ],
    ids=["first-line", "first-column"],
)
def test_findings_at_the_documents_first_line_and_column(project, text, start):
    server = initialized_server(project)
    uri = opened(server, project / "edge.py", text)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert diagnostic.range.start == start


def test_strict_sites_say_why_the_default_leaves_them_out(project):
    """A narrowed site says why; one with ``# noqa`` stays quiet, as in
    ``check --strict``."""
    (project / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nstrict = true\n")
    server = initialized_server(project)
    text = (
        KCI + "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n\n\n"
        "def f(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return 0\n"
        "    if isinstance(spec, MLAAttentionSpec):\n"
        "        return 1\n"
        "    if isinstance(spec, MLAAttentionSpec):  # noqa: VSL001 deliberate\n"
        "        return 2\n"
    )
    uri = opened(server, project / "worker.py", text)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert diagnostic.range.start == types.Position(7, 24)
    assert diagnostic.message == (
        "isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec"
        " (strict: narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 6) "
        "already excludes SlidingWindowMLASpec)"
    )


def test_actions_and_hover_follow_a_change_not_checked_yet(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    # A line added at the top; the change's own check has not run yet.
    server.workspace.put_text_document(
        types.TextDocumentItem(
            uri=uri, language_id="python", version=2, text="# moved\n" + WORKER
        )
    )
    # The diagnostic sent for the old text names no finding of the new one.
    assert code_actions(server, uri, diagnostic.range, [diagnostic]) == []

    row = diagnostic.range.start.line
    assert hover_at(server, uri, row, 50) is None
    assert hover_at(server, uri, row + 1, 50).contents.value.startswith("**VSL001**")
    assert server.checked[uri].version == 2


def test_actions_and_hover_on_a_document_not_checked_yet(project):
    server = initialized_server(project)
    uri = opened(server, project / "worker.py", WORKER)
    span = types.Range(types.Position(4, 43), types.Position(4, 59))
    diagnostic = types.Diagnostic(
        range=span,
        message="",
        code="VSL001",
        source="vllm-spec-lint",
        data={"row": 5, "column": 44, "name": "isinstance-leaves-out-companion"},
    )
    titles = [a.title for a in code_actions(server, uri, span, [diagnostic])]
    assert titles[0].startswith("Add SlidingWindowMLASpec")
    server.checked.clear()
    hovered = hover_at(server, uri, 4, 50)
    assert hovered.contents.value.startswith("**VSL001**")


@pytest.mark.parametrize(
    "before, after, edit",
    [
        (
            "a = 1\nb = 2\nc = 3\nd = 4\n",
            "a = 1\nb = 20\nc = 30\nd = 4\n",
            ((1, 0), (3, 0), "b = 20\nc = 30\n"),
        ),
        ("\na = 1\n", "\na = 2\n", ((1, 0), (2, 0), "a = 2\n")),
        # Past the last line: the document's end.
        ("a = 1\nb = 2\n", "a = 1\nb = 2\nc = 3\n", ((2, 0), (2, 0), "c = 3\n")),
        # A long document of repeated lines: no line is junk to the matcher.
        (
            "".join("x = 1\n" if i % 2 else "\n" for i in range(400)),
            "".join(
                "x = 2\n" if i == 201 else "x = 1\n" if i % 2 else "\n"
                for i in range(400)
            ),
            ((201, 0), (202, 0), "x = 2\n"),
        ),
    ],
    ids=[
        "several-lines",
        "after-a-blank-first-line",
        "appended-line",
        "repeated-lines",
    ],
)
def test_minimal_edits_replace_the_changed_run_of_lines(project, before, after, edit):
    (start, end, text) = edit
    assert edits_between(project, before, after) == [
        types.TextEdit(
            range=types.Range(types.Position(*start), types.Position(*end)),
            new_text=text,
        )
    ]


def test_a_shared_vsl007_site_offers_only_to_keep_it(project):
    """strict reports the site with its `shared:` reason; the rule itself
    says excluding the companion would be wrong, so no quick fix does."""
    from tests.test_vsl007 import SHARED_SITE

    (project / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nstrict = true\n")
    server = initialized_server(project)
    uri = opened(server, project / "window.py", SHARED_SITE)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert diagnostic.code == "VSL007"
    actions = code_actions(server, uri, diagnostic.range, [diagnostic])
    assert [a.title for a in actions] == ["Keep: add `# noqa: VSL007`"]


def test_a_file_that_does_not_parse_offers_no_noqa_it_could_not_honour(project):
    """VSL900 is always reported: `# noqa` cannot hide it, so the server
    offers no action that would add one."""
    text = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\nx = (\n"
    server = initialized_server(project)
    uri = opened(server, project / "broken.py", text)
    [diagnostic] = server.diagnostics(uri, server.check(uri))
    assert diagnostic.code == "VSL900"
    assert code_actions(server, uri, diagnostic.range, [diagnostic]) == []


def test_serve_listens_on_tcp_where_asked_and_otherwise_on_stdio(monkeypatch):
    from vllm_spec_lint.faces import lsp

    started = []
    build = lsp.build_server

    def built():
        server = build()
        server.start_tcp = lambda host, port: started.append(("tcp", host, port))
        server.start_io = lambda: started.append(("stdio",))
        return server

    monkeypatch.setattr(lsp, "build_server", built)
    lsp.serve(2087)
    lsp.serve()
    lsp.serve(2088, host="0.0.0.0")
    assert started == [("tcp", "127.0.0.1", 2087), ("stdio",), ("tcp", "0.0.0.0", 2088)]


def test_a_document_the_client_never_opened_gets_nothing(project):
    server = initialized_server(project)
    (project / "worker.py").write_text(WORKER)
    uri = (project / "worker.py").as_uri()
    span = types.Range(types.Position(0, 0), types.Position(0, 1))
    assert server.current(uri) is None
    assert code_actions(server, uri, span, []) == []
    assert hover_at(server, uri, 0, 0) is None


def test_a_buffer_without_a_file_path_is_not_checked(project):
    server = initialized_server(project)
    uri = "untitled:Untitled-1"
    server.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=WORKER)
    )
    assert server.check(uri) is None
    assert server.check_text(None, 1, WORKER) is None
    assert server.check_text(str(project / "notes.txt"), 1, WORKER) is None


@pytest.mark.parametrize(
    "workspace, asked_to_watch",
    [
        (None, False),
        (types.WorkspaceClientCapabilities(), False),
        (
            types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True
                )
            ),
            True,
        ),
    ],
    ids=["no-workspace-capabilities", "no-file-watching", "dynamic-registration"],
)
def test_only_a_client_that_can_watch_files_is_asked_to(
    project, workspace, asked_to_watch
):
    server = lsp.build_server()
    handshake = server.protocol.lsp_initialize(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(workspace=workspace),
            root_uri=project.as_uri(),
        )
    )
    for _ in handshake:
        pass
    asked = []
    server.client_register_capability = asked.append
    feature(server, types.INITIALIZED)(types.InitializedParams())
    assert len(asked) == (1 if asked_to_watch else 0)


def test_a_change_to_a_file_that_is_not_on_disk_does_not_matter(project):
    server = initialized_server(project)
    server.check(opened(server, project / "worker.py", WORKER))
    assert lsp._matters("untitled:Untitled-1", server) is False
