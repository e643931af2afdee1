"""``vllm-spec-lint server``: the checks in the editor, over the Language
Server Protocol (pygls; ``pip install 'vllm-spec-lint[lsp]'``).

A document is checked from its buffer, as ``check --stdin-filename PATH``
checks standard input: the configuration, selection, noqa, strictness,
exclusions and class hierarchy of a file at that path. Settings and the
hierarchy are read once per folder and read again when a settings file or a
family module changes (``workspace/didChangeWatchedFiles``) or the client's
configuration does. Only this module imports pygls.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from vllm_spec_lint import __version__
from vllm_spec_lint.core.findings import PARSE_ERROR_CODE, Finding, wanted
from vllm_spec_lint.core.last_analysis import LastAnalysis
from vllm_spec_lint.core.settings import RULE_NAMES, Config, ConfigError, rule_url
from vllm_spec_lint.edges.code_cache import save_compiled
from vllm_spec_lint.edges.config import load_config
from vllm_spec_lint.edges.hierarchy_sources import HierarchyError, load_hierarchy
from vllm_spec_lint.model.hierarchy import ClassHierarchy, module_path, short_name

NAME = "vllm-spec-lint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{NAME}"
# Files whose change means settings or the hierarchy must be read again.
WATCHED = ("**/pyproject.toml", "**/setup.cfg", "**/tox.ini", "**/*.py")
SETTINGS_FILES = ("pyproject.toml", "setup.cfg", "tox.ini")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Project:
    """What checking a file in one folder takes."""

    config: Config
    hierarchy: ClassHierarchy
    error: str | None = None
    # What the command line warns about on stderr (a family module that
    # cannot be read keeps the built-in hierarchy).
    warnings: tuple[str, ...] = ()


@dataclass
class Checked:
    """A document's findings at the version they were computed for."""

    version: int | None
    text: str
    findings: list[Finding]
    project: Project


class SpecLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__)
        self.projects: dict[Path, Project] = {}
        self.checked: dict[str, Checked] = {}
        # Per open file: its last analysis, reused while a change leaves the
        # code the rules see as it was (core/last_analysis.py).
        self.last_analyses: dict[str, LastAnalysis] = {}

    # -- settings and hierarchy, per folder -----------------------------------

    def project_for(self, path: Path) -> Project:
        folder = path.parent
        project = self.projects.get(folder)
        if project is None:
            try:
                config = load_config(path)
                warnings: list[str] = []
                hierarchy = load_hierarchy([path], [], config, warnings)
                project = Project(config, hierarchy, warnings=tuple(warnings))
            except (ConfigError, HierarchyError) as e:
                project = Project(Config(), ClassHierarchy.default(), str(e))
            self.projects[folder] = project
        return project

    def forget_projects(self) -> None:
        self.projects.clear()

    # -- checking a document -------------------------------------------------------

    def check(self, uri: str) -> Checked | None:
        """The document's findings, computed from its buffer now; None for a
        document the client has not opened (there is no buffer to check, and
        a request may name a file that does not exist)."""
        if uri not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        checked = self.check_text(document.path, document.version, document.source)
        if checked is not None:
            self.checked[uri] = checked
        return checked

    def current(self, uri: str) -> Checked | None:
        """The document's findings for the text it holds now: the last
        check's when it saw this version, else a check made now (a request
        can come before the check of the latest change is done, and edits
        made for older text would land on the wrong lines)."""
        checked = self.checked.get(uri)
        if uri not in self.workspace.text_documents:
            return None
        version = self.workspace.get_text_document(uri).version
        if checked is not None and checked.version == version:
            return checked
        return self.check(uri)

    def check_text(self, path: str | None, version, text: str) -> Checked | None:
        """Findings for a buffer's text at ``path``; touches no document, so
        it runs off the event loop while newer changes come in."""
        from vllm_spec_lint.edges.runner import run_source

        if not path or not path.endswith((".py", ".pyi")):
            return None
        project = self.project_for(Path(path))
        result = run_source(
            path,
            text.encode("utf-8", "surrogatepass"),
            project.config,
            force_exclude=True,
            hierarchy=project.hierarchy,
            last=self.last_analyses.setdefault(path, LastAnalysis()),
        )
        findings = [f for r in result.results for f in r.findings]
        return Checked(version, text, findings, project)

    def diagnostics(self, uri: str, checked: Checked) -> list[types.Diagnostic]:
        document = self.workspace.get_text_document(uri)
        lines = document.lines
        project = checked.project
        severity = types.DiagnosticSeverity
        top = [_top_diagnostic(w, severity.Warning) for w in project.warnings]
        if project.error:
            error = f"settings not used: {project.error}"
            top.insert(0, _top_diagnostic(error, severity.Error))
        return top + [_diagnostic(document, lines, f) for f in checked.findings]

    async def publish(self, uri: str) -> None:
        """Check the document off the event loop and push its diagnostics,
        unless a newer change came in meanwhile: that change publishes its
        own, and this (stale) work is dropped."""
        document = self.workspace.get_text_document(uri)
        version = document.version
        checked = await asyncio.to_thread(
            self.check_text, document.path, version, document.source
        )
        current = self.workspace.text_documents.get(uri)
        if checked is None or current is None or current.version != version:
            return
        self.checked[uri] = checked
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=self.diagnostics(uri, checked)
            )
        )
        # An editor may end the server without a word: the code its first
        # check compiled (edges/code_cache.py) is kept now, not at its exit.
        save_compiled()

    async def republish_all(self) -> None:
        for uri in list(self.workspace.text_documents):
            await self.publish(uri)


def _position(document, lines, row: int, column: int) -> types.Position:
    """A finding's 1-based (row, column in code points) in the client's units
    (past the last line: the end, as pygls's codec gives it)."""
    line, character = max(row - 1, 0), max(column - 1, 0)
    return document.position_codec.position_to_client_units(
        lines, types.Position(line=line, character=character)
    )


def _diagnostic(document, lines, finding: Finding) -> types.Diagnostic:
    start = _position(document, lines, *finding.location)
    end = _position(document, lines, *finding.end_location)
    url = rule_url(finding.code)
    message = finding.message
    if finding.suppressed_by:
        message += f" (strict: {finding.suppressed_by})"
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=NAME,
        data={
            "row": finding.location[0],
            "column": finding.location[1],
            "name": RULE_NAMES[finding.code],
        },
    )


def _top_diagnostic(message: str, severity) -> types.Diagnostic:
    """About the settings or the hierarchy, not a line: at the top."""
    return types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        message=message,
        severity=severity,
        source=NAME,
    )


# -- edits ---------------------------------------------------------------------------


def _offset_position(document, lines, text: str, offset: int) -> types.Position:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return document.position_codec.position_to_client_units(
        lines, types.Position(line=line, character=column)
    )


def minimal_edits(document, before: str, after: str) -> list[types.TextEdit]:
    """The changed lines only, as ``TextEdit``s on ``before``."""
    lines = document.lines
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start = _offset_position(document, lines, before, starts[i1])
        end = _offset_position(document, lines, before, starts[i2])
        edits.append(
            types.TextEdit(
                range=types.Range(start=start, end=end), new_text="".join(new[j1:j2])
            )
        )
    return edits


def _fixed_text(checked: Checked, path: Path, select, unsafe: bool) -> str:
    from vllm_spec_lint.core.fixing import fix_source
    from vllm_spec_lint.edges.discovery import module_name_for
    from vllm_spec_lint.repair.formatting import formatter_for

    config = checked.project.config
    outcome = fix_source(
        checked.text,
        str(path),
        config,
        checked.project.hierarchy,
        module_name=module_name_for(path),
        unsafe=unsafe,
        formatter=formatter_for(str(path), config.line_length, config.fix_formatter),
        select=select,
    )
    return checked.text if outcome.failure else outcome.text


def _noqa_text(checked: Checked, finding: Finding) -> str:
    from vllm_spec_lint.core.noqa import add_noqa

    text, _, _ = add_noqa(checked.text, {finding.location[0]: {finding.code}})
    return text


def _finding_for(checked: Checked, diagnostic: types.Diagnostic) -> Finding | None:
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    for finding in checked.findings:
        if finding.code == diagnostic.code and (
            finding.location == (data.get("row"), data.get("column"))
        ):
            return finding
    return None


def _action(server, uri, title, kind, text, checked, diagnostic=None, preferred=False):
    document = server.workspace.get_text_document(uri)
    edits = minimal_edits(document, checked.text, text)
    if not edits:
        return None
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=[diagnostic] if diagnostic else None,
        is_preferred=preferred or None,
        edit=types.WorkspaceEdit(changes={uri: edits}),
    )


def code_actions(server: SpecLintServer, params: types.CodeActionParams):
    uri = params.text_document.uri
    checked = server.current(uri)
    if checked is None:
        return []
    path = Path(server.workspace.get_text_document(uri).path)
    only = params.context.only
    actions = []

    def asked(kind: str) -> bool:
        return not only or any(kind.startswith(k) for k in only)

    if asked(types.CodeActionKind.QuickFix):
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != NAME:
                continue
            finding = _finding_for(checked, diagnostic)
            if finding is None or finding.code == PARSE_ERROR_CODE:
                continue
            if finding.fix is not None:
                safe = wanted(finding, unsafe=False)
                fixed = _fixed_text(
                    checked,
                    path,
                    lambda f, target=finding: (
                        (f.code, f.location) == (target.code, target.location)
                    ),
                    unsafe=True,
                )
                title = f"{finding.fix.message} ({finding.code})"
                if not safe:
                    title += " - unsafe: changes what the check admits"
                action = _action(
                    server,
                    uri,
                    title,
                    types.CodeActionKind.QuickFix,
                    fixed,
                    checked,
                    diagnostic,
                    preferred=safe,
                )
                if action:
                    actions.append(action)
            keep = _action(
                server,
                uri,
                f"Keep: add `# noqa: {finding.code}`",
                types.CodeActionKind.QuickFix,
                _noqa_text(checked, finding),
                checked,
                diagnostic,
            )
            if keep:
                actions.append(keep)
    if asked(FIX_ALL):
        fixed = _fixed_text(checked, path, lambda f: True, unsafe=False)
        action = _action(
            server, uri, f"{NAME}: apply every safe fix", FIX_ALL, fixed, checked
        )
        if action:
            actions.append(action)
    return actions


def hover(server: SpecLintServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    checked = server.current(uri)
    if checked is None:
        return None
    document = server.workspace.get_text_document(uri)
    lines = document.lines
    for finding in checked.findings:
        diagnostic = _diagnostic(document, lines, finding)
        if _contains(diagnostic.range, params.position):
            text = _hierarchy_lines(checked.project, finding)
            if text:
                return types.Hover(
                    contents=types.MarkupContent(
                        kind=types.MarkupKind.Markdown, value=text
                    ),
                    range=diagnostic.range,
                )
    return None


def _contains(span: types.Range, position: types.Position) -> bool:
    start, end = span.start, span.end
    after_start = (position.line, position.character) >= (start.line, start.character)
    before_end = (position.line, position.character) <= (end.line, end.character)
    return after_start and before_end


def _hierarchy_lines(project: Project, finding: Finding) -> str:
    """Where the family's classes sit, in the lines ``families`` prints."""
    hierarchy = project.hierarchy
    parts = []
    for family in project.config.families:
        if short_name(family.anchor) not in finding.message:
            continue
        lines = []
        for cls in (family.anchor, *family.companions):
            chain = [cls]
            while hierarchy.bases.get(chain[-1]):
                chain.append(hierarchy.bases[chain[-1]][0])
            lines.append("  " + " <- ".join(short_name(c) for c in chain))
        companions = ", ".join(short_name(c) for c in family.companions)
        parts.append(
            f"**{finding.code}** `{RULE_NAMES[finding.code]}`: family "
            f"{family.name}\n\n```text\n" + "\n".join(lines) + "\n```\n\n"
            f"{companions} share(s) {short_name(family.anchor)}'s cache layout "
            "without deriving from it: a test against it alone leaves them out."
        )
    return "\n\n".join(parts)


# -- the server ---------------------------------------------------------------------


def build_server() -> SpecLintServer:
    logging.basicConfig(level=logging.WARNING)
    server = SpecLintServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: SpecLintServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watched = capabilities and capabilities.did_change_watched_files
        if watched and watched.dynamic_registration:
            ls.client_register_capability(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=f"{NAME}-watched-files",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[
                                    types.FileSystemWatcher(glob_pattern=g)
                                    for g in WATCHED
                                ]
                            ),
                        )
                    ]
                )
            )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: SpecLintServer, params: types.DidOpenTextDocumentParams):
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SpecLintServer, params: types.DidChangeTextDocumentParams):
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: SpecLintServer, params: types.DidSaveTextDocumentParams):
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SpecLintServer, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        ls.checked.pop(uri, None)
        ls.last_analyses.pop(to_fs_path(uri), None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=NAME, inter_file_dependencies=False, workspace_diagnostics=False
        ),
    )
    def pull_diagnostics(ls: SpecLintServer, params: types.DocumentDiagnosticParams):
        checked = ls.check(params.text_document.uri)
        items = (
            [] if checked is None else ls.diagnostics(params.text_document.uri, checked)
        )
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]
        ),
    )
    def code_action(ls: SpecLintServer, params: types.CodeActionParams):
        return code_actions(ls, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: SpecLintServer, params: types.HoverParams):
        return hover(ls, params)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_changed(
        ls: SpecLintServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        if any(_matters(change.uri, ls) for change in params.changes):
            ls.forget_projects()
            await ls.republish_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(
        ls: SpecLintServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.forget_projects()
        await ls.republish_all()

    return server


def _matters(uri: str, server: SpecLintServer) -> bool:
    """A settings file, or a module the hierarchy was read from."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri) or ""
    if Path(path).name in SETTINGS_FILES:
        return True
    sources = {s for p in server.projects.values() for s in p.hierarchy.sources}
    return path in sources or path.endswith(
        tuple(
            "/" + module_path(m)
            for p in server.projects.values()
            for f in p.config.families
            for m in f.modules
        )
    )


def serve(tcp_port: int | None = None, host: str = "127.0.0.1") -> None:
    server = build_server()
    if tcp_port is not None:
        server.start_tcp(host, tcp_port)
    else:
        server.start_io()
