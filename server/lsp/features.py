"""Each LSP feature as: LSP params -> our positions -> one pure query of an analysis -> LSP result.

The queries live in opgen_lsp.analysis; this module only converts, taking the
client's capabilities into account (position encoding, Markdown, hierarchical
symbols, folding limits).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability

from ..analysis import actions as actions_query
from ..analysis import backend as backend_query
from ..analysis import completion as completion_query
from ..analysis import definition as definition_query
from ..analysis import hover as hover_query
from ..analysis import kernel_nav, shape_fix
from ..analysis import lens as lens_query
from ..analysis import semantic as semantic_query
from ..analysis import signature as signature_query
from ..analysis import symbols as symbols_query
from ..analysis import vendor as vendor_query
from ..analysis.folding import entry_folds
from ..analysis.lazy import LazySettings
from ..diagnostics import Diagnostic, cap_diagnostics
from ..frozen import record
from ..text import Span
from . import derivatives as derivatives_lsp
from .convert import UTF16, Encoding, Lines, diagnostics, from_position, range_to_span, span_to_range
from .kernels import KernelState
from .workspace import Analysis


@dataclass(frozen=True)
class KernelContext:
    """What the kernel features need from the server: the index, the workspace root, the stub file setting,
    and how to read a file (the editor's text when it is open)."""

    state: KernelState
    root: str | None
    stub_file: str | None
    absolute: Callable[[str], str]
    text_of: Callable[[str], tuple[str | None, str | None]]


@record
class Client:
    """What the client can take, read once from its capabilities."""

    encoding: Encoding = UTF16
    hover_markdown: bool = True
    completion_markdown: bool = True
    hierarchical_symbols: bool = True
    folding_limit: int | None = None
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    configuration: bool = False
    watch_files: bool = False  # accepts client/registerCapability for workspace/didChangeWatchedFiles
    text_document_content: bool = False  # workspace/textDocumentContent (virtual documents, LSP 3.18)
    show_document: bool = False  # window/showDocument
    work_done_progress: bool = False  # window/workDoneProgress/create
    code_lens_refresh: bool = False
    semantic_tokens_refresh: bool = False
    inlay_hint_refresh: bool = False  # workspace/inlayHint/refresh (the kernel index came or changed)
    # Runs `command:` links of Markdown (the VS Code extension says so); other clients' hovers name the CLI command.
    command_links: bool = False

    @classmethod
    def of(cls, caps: types.ClientCapabilities, encoding: Encoding, init_options: object = None) -> Client:
        markdown = types.MarkupKind.Markdown
        return cls(
            encoding=encoding,
            command_links=runs_command_links(caps, init_options),
            hover_markdown=markdown in (get_capability(caps, "text_document.hover.content_format", None)
                                        or [types.MarkupKind.PlainText]),
            completion_markdown=markdown in (get_capability(
                caps, "text_document.completion.completion_item.documentation_format", None) or []),
            hierarchical_symbols=bool(get_capability(
                caps, "text_document.document_symbol.hierarchical_document_symbol_support", False)),
            folding_limit=get_capability(caps, "text_document.folding_range.range_limit", None),
            pull_diagnostics=get_capability(caps, "text_document.diagnostic", None) is not None,
            diagnostic_refresh=bool(get_capability(caps, "workspace.diagnostics.refresh_support", False)),
            configuration=bool(get_capability(caps, "workspace.configuration", False)),
            watch_files=bool(get_capability(caps, "workspace.did_change_watched_files.dynamic_registration", False)),
            text_document_content=get_capability(caps, "workspace.text_document_content", None) is not None,
            show_document=bool(get_capability(caps, "window.show_document.support", False)),
            work_done_progress=bool(get_capability(caps, "window.work_done_progress", False)),
            code_lens_refresh=bool(get_capability(caps, "workspace.code_lens.refresh_support", False)),
            semantic_tokens_refresh=bool(get_capability(caps, "workspace.semantic_tokens.refresh_support", False)),
            inlay_hint_refresh=bool(get_capability(caps, "workspace.inlay_hint.refresh_support", False)),
        )

    def more_code(self, path: str | None) -> hover_query.MoreCode:
        """How a hover points at all of an op's generated code for this client: a command link it can run, else the
        CLI command."""
        return hover_query.show_generated_link if self.command_links and self.hover_markdown \
            else hover_query.explain_command(path)

    def markup(self, text: str, markdown: bool) -> types.MarkupContent:
        """Our Markdown, or plain text for a client whose contentFormat lacks Markdown (Emacs without markdown-mode)."""
        if markdown:
            return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
        return types.MarkupContent(kind=types.MarkupKind.PlainText, value=hover_query.as_plain_text(text))


def runs_command_links(caps: types.ClientCapabilities, init_options: object) -> bool:
    """Whether the client runs `command:` links in hovers: a client capability (experimental.opgen.commandLinks) or
    the VS Code extension's initializationOptions flag (commandLinks). LSP has no standard capability for it."""
    experimental = getattr(caps, "experimental", None)
    opgen = experimental.get("opgen") if isinstance(experimental, dict) else None
    from_caps = isinstance(opgen, dict) and opgen.get("commandLinks") is True
    return from_caps or (isinstance(init_options, dict) and init_options.get("commandLinks") is True)


# ---------------------------------------------------------------- diagnostics

def result_id(analysis: Analysis) -> str:
    return f"{analysis.document.generation}-{hash(analysis.key) & 0xFFFFFFFF:08x}"


def diagnostic_items(analysis: Analysis, client: Client) -> list[types.Diagnostic]:
    return diagnostics(analysis.lines, cap_diagnostics(analysis.diagnostics), client.encoding)


def diagnostic_report(analysis: Analysis | None, previous_result_id: str | None, client: Client,
                      extra: Sequence[types.Diagnostic] = ()
                      ) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
    """`extra`: diagnostics found apart from the analysis (lsp.editing's), part of the result id."""
    if analysis is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    rid = result_id(analysis) + (f"-{hash(tuple(d.message for d in extra)) & 0xFFFFFFFF:08x}" if extra else "")
    if previous_result_id == rid:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
    return types.RelatedFullDocumentDiagnosticReport(items=diagnostic_items(analysis, client) + list(extra), result_id=rid)


# ---------------------------------------------------------------- hover

def backend_hover(analysis: Analysis, pos: types.Position, client: Client, definitions) -> types.Hover | None:
    line, col = from_position(analysis.lines, pos, client.encoding)
    source = analysis.native_source
    found = backend_query.hover(analysis.backend, source.snapshot if source is not None else None, line, col,  # type: ignore[arg-type]
                                definitions, LazySettings(analysis.lazy_preset, analysis.shape_header))
    if found is None:
        return None
    markdown = found.markdown + upgrade_note(analysis.diagnostics, found.span)
    return types.Hover(contents=client.markup(markdown, client.hover_markdown),
                       range=span_to_range(analysis.lines, found.span, client.encoding))


def upgrade_note(diagnostics: Iterable[Diagnostic], span: Span) -> str:
    """What OPG975 says of the hovered op (opgen.upgradeTarget): its change, both schemas and both kernel
    declarations, so that the hover shows what the diagnostic's one line in a status bar cannot."""
    notes = [d.message for d in diagnostics if d.code == "OPG975" and d.span.start_line == span.start_line
             and d.span.start_col <= span.end_col and span.start_col <= d.span.end_col]
    return "".join(f"\n\n**Upgrade** (`opgen.upgradeTarget`): {first}\n{hover_query.code_block(rest)}"
                   for first, _, rest in (note.partition("\n") for note in notes))


def kernel_hover(analysis: Analysis, line: int, col: int, client: Client, kernels: KernelContext | None
                 ) -> types.Hover | None:
    ref = kernel_nav.kernel_at(analysis.native, line, col)  # type: ignore[arg-type]
    if ref is None:
        return None
    state = kernels.state if kernels is not None else None
    index = state.index if state is not None and state.roots else None
    text = kernel_nav.hover_markdown(ref, index, kernel_nav.kernel_declaration(analysis.native, ref),  # type: ignore[arg-type]
                                     kernels.root if kernels is not None else None,
                                     building=bool(state is not None and state.building),
                                     params=kernel_nav.kernel_parameters(analysis.native, ref))  # type: ignore[arg-type]
    return types.Hover(contents=client.markup(text, client.hover_markdown),
                       range=span_to_range(analysis.lines, ref.span, client.encoding))


def hover(analysis: Analysis, pos: types.Position, client: Client, definitions=None,
          kernels: KernelContext | None = None, release_label: str | None = None) -> types.Hover | None:
    if analysis.backend is not None:
        return backend_hover(analysis, pos, client, definitions)
    if analysis.derivatives is not None:
        return derivatives_lsp.hover(analysis, pos, client)
    if analysis.native is None:
        return None
    line, col = from_position(analysis.lines, pos, client.encoding)
    on_kernel = kernel_hover(analysis, line, col, client, kernels)
    if on_kernel is not None:
        return on_kernel
    found = hover_query.hover(analysis.native, analysis.tags, line, col, release_label=release_label,
                              more=client.more_code(analysis.document.path))
    if found is None:
        return None
    return types.Hover(contents=client.markup(found.markdown, client.hover_markdown),
                       range=span_to_range(analysis.lines, found.span, client.encoding))


# ---------------------------------------------------------------- symbols

_SYMBOL_KINDS = {
    symbols_query.OP: types.SymbolKind.Function,
    symbols_query.GROUP: types.SymbolKind.Function,
    symbols_query.TAG: types.SymbolKind.EnumMember,
}


def _symbols_of(analysis: Analysis) -> list[symbols_query.Symbol]:
    if analysis.backend is not None and analysis.backend.vendor is not None:
        return vendor_query.symbols(analysis.backend.vendor.yaml)
    if analysis.native is not None:
        return symbols_query.native_symbols(analysis.native)
    if analysis.tags is not None:
        return symbols_query.tag_symbols(analysis.tags)
    if analysis.derivatives is not None:
        return derivatives_lsp.symbols(analysis)
    return []


def _document_symbol(analysis: Analysis, symbol: symbols_query.Symbol, client: Client) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name,
        detail=symbol.detail or None,
        kind=_SYMBOL_KINDS[symbol.kind],
        range=span_to_range(analysis.lines, symbol.range, client.encoding),
        selection_range=span_to_range(analysis.lines, symbol.selection, client.encoding),
        children=[_document_symbol(analysis, c, client) for c in symbol.children] or None,
    )


def document_symbols(analysis: Analysis, client: Client
                     ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
    found = _symbols_of(analysis)
    if client.hierarchical_symbols:
        return [_document_symbol(analysis, s, client) for s in found]
    return [
        types.SymbolInformation(
            name=symbol.name, kind=_SYMBOL_KINDS[symbol.kind],
            location=types.Location(uri=analysis.uri,
                                    range=span_to_range(analysis.lines, symbol.range, client.encoding)),
            container_name=parent.name if parent is not None else None)
        for symbol, parent in symbols_query.flatten(found)
    ]


def workspace_symbols(analyses: Iterable[Analysis], query: str, limit: int, client: Client
                      ) -> list[types.SymbolInformation]:
    sources = [(a, a.native) for a in analyses if a.native is not None]
    found = symbols_query.search_ops(sources, query, limit)
    return [
        types.SymbolInformation(
            name=symbol.name, kind=types.SymbolKind.Function,
            location=types.Location(uri=a.uri, range=span_to_range(a.lines, symbol.selection, client.encoding)),
            container_name=symbol.detail or None)
        for a, symbol in found
    ]


# ---------------------------------------------------------------- folding

def folding_ranges(analysis: Analysis, client: Client) -> list[types.FoldingRange]:
    document = (analysis.native.document if analysis.native is not None
                else analysis.tags.document if analysis.tags is not None else None)
    if document is None:
        return []
    folds = entry_folds(document)
    if client.folding_limit is not None:
        folds = folds[:client.folding_limit]
    return [types.FoldingRange(start_line=start, end_line=end) for start, end in folds]


# ---------------------------------------------------------------- completion

_COMPLETION_KINDS = {
    completion_query.KEY: types.CompletionItemKind.Property,
    completion_query.DISPATCH_KEY: types.CompletionItemKind.EnumMember,
    completion_query.TAG: types.CompletionItemKind.Constant,
    completion_query.VARIANT: types.CompletionItemKind.Value,
    completion_query.OP: types.CompletionItemKind.Function,
    completion_query.TYPE: types.CompletionItemKind.TypeParameter,
}


def completion(analysis: Analysis, pos: types.Position, client: Client) -> types.CompletionList:
    line, col = from_position(analysis.lines, pos, client.encoding)
    if analysis.backend is not None:
        source = analysis.native_source
        candidates = backend_query.complete(analysis.lines, line, col, source.snapshot if source else None)
    elif analysis.native is not None:
        candidates = completion_query.complete(analysis.lines, line, col, analysis.native, analysis.tags)
    elif analysis.derivatives is not None:
        candidates = derivatives_lsp.candidates(analysis, line, col)
    else:
        return types.CompletionList(is_incomplete=False, items=[])
    items = []
    for c in candidates:
        items.append(types.CompletionItem(
            label=c.label,
            kind=_COMPLETION_KINDS[c.kind],
            detail=c.detail or None,
            documentation=client.markup(c.documentation, client.completion_markdown) if c.documentation else None,
            sort_text=c.sort_text,
            filter_text=c.label,
            text_edit=types.TextEdit(range=span_to_range(analysis.lines, c.replace, client.encoding),
                                     new_text=c.insert_text),
        ))
    return types.CompletionList(is_incomplete=False, items=items)


# ---------------------------------------------------------------- definition, references

def _file_location(path: str, line: int, col: int, length: int, client: Client,
                   kernels: KernelContext) -> types.Location:
    from pygls.uris import from_fs_path

    uri, text = kernels.text_of(path)
    lines = Lines(text or "")
    span = Span(line, col, line, col + length)
    return types.Location(uri=uri or from_fs_path(path) or path, range=span_to_range(lines, span, client.encoding))


def kernel_definition(analysis: Analysis, line: int, col: int, client: Client, kernels: KernelContext | None
                      ) -> list[types.Location] | None:
    """The C++ definitions of the kernel under the cursor (its declarations when it has none); None when
    the cursor is on no kernel."""
    ref = kernel_nav.kernel_at(analysis.native, line, col)  # type: ignore[arg-type]
    if ref is None:
        return None
    index = kernels.state.index if kernels is not None and kernels.state.roots else None
    if index is None:
        return []
    params = kernel_nav.kernel_parameters(analysis.native, ref)  # type: ignore[arg-type]
    definitions, declarations = kernel_nav.places(index, ref, params)
    # (none with its parameters: the overloads of its name, where one would go)
    hits = definitions or declarations or kernel_nav.places(index, ref)[0]
    return [_file_location(h.path, h.symbol.line, h.symbol.col, len(h.symbol.name), client, kernels)  # type: ignore[arg-type]
            for h in hits]


def definition(analysis: Analysis, pos: types.Position, client: Client, kernels: KernelContext | None = None
               ) -> types.Location | list[types.Location] | None:
    if analysis.backend is not None:
        source = analysis.native_source
        if source is None:
            return None
        line, col = from_position(analysis.lines, pos, client.encoding)
        span = backend_query.definition(analysis.backend, source.snapshot, line, col)
        if span is None:
            return None
        return types.Location(uri=source.uri, range=span_to_range(source.lines, span, client.encoding))
    if analysis.derivatives is not None:
        return derivatives_lsp.definition(analysis, pos, client)
    if analysis.native is None:
        return None
    line, col = from_position(analysis.lines, pos, client.encoding)
    in_cpp = kernel_definition(analysis, line, col, client, kernels)
    if in_cpp is not None:
        return in_cpp or None
    span = definition_query.definition(analysis.native, line, col)
    if span is None:
        return None
    return types.Location(uri=analysis.uri, range=span_to_range(analysis.lines, span, client.encoding))


def references(analysis: Analysis, pos: types.Position, include_declaration: bool, client: Client
               ) -> list[types.Location]:
    if analysis.derivatives is not None:
        return derivatives_lsp.references(analysis, pos, include_declaration, client)
    if analysis.native is None:
        return []
    line, col = from_position(analysis.lines, pos, client.encoding)
    spans = definition_query.references(analysis.native, line, col, include_declaration)
    return [types.Location(uri=analysis.uri, range=span_to_range(analysis.lines, s, client.encoding))
            for s in spans]


# ---------------------------------------------------------------- signature help

def signature_help(analysis: Analysis, pos: types.Position, client: Client) -> types.SignatureHelp | None:
    if analysis.native is None:
        return None
    line, col = from_position(analysis.lines, pos, client.encoding)
    found = signature_query.signature_at(analysis.lines, line, col)
    if found is None:
        return None
    label = found.label
    parameters = [types.ParameterInformation(label=(client.encoding.units(label[:a]), client.encoding.units(label[:b])))
                  for a, b in found.parameters]
    signature = types.SignatureInformation(
        label=label, parameters=parameters, active_parameter=found.active,
        documentation=client.markup(found.documentation, client.completion_markdown) if found.documentation else None)
    return types.SignatureHelp(signatures=[signature], active_signature=0, active_parameter=found.active)


# ---------------------------------------------------------------- code actions

def _append_edit(path: str, block: str, client: Client, kernels: KernelContext) -> tuple[str, types.TextEdit] | None:
    """(uri, edit) appending a block of C++ at the end of a file (its editor text when it is open)."""
    from pygls.uris import from_fs_path

    uri, text = kernels.text_of(path)
    if text is None:
        return None
    lines = Lines(text)
    line, col, separator = kernel_nav.append_point(lines)
    where = span_to_range(lines, Span.point(line, col), client.encoding)
    return uri or from_fs_path(path) or path, types.TextEdit(range=where, new_text=separator + block)


def _overlaps(a: Span, b: Span) -> bool:
    return (a.start_line, a.start_col) <= (b.end_line, b.end_col) and (b.start_line, b.start_col) <= (a.end_line, a.end_col)


def _stub_action(title: str, d, uri: str, edit: types.TextEdit, analysis: Analysis, client: Client
                 ) -> types.CodeAction:
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diagnostics(analysis.lines, [d], client.encoding)[0]],
                            edit=types.WorkspaceEdit(changes={uri: [edit]}))


def kernel_stub_actions(analysis: Analysis, span, client: Client, kernels: KernelContext | None
                        ) -> list[types.CodeAction]:
    """OPG600/OPG601: create the missing kernel (or meta function) as a stub in the configured file, else in
    the first file defining kernels of the same op family."""
    if kernels is None or analysis.native is None or kernels.state.index is None:
        return []
    out = []
    seen: set[tuple[str, str]] = set()  # a kernel shared by several keys (CPU, CUDA: name) is created once
    for d in analysis.diagnostics:
        if d.code not in ("OPG600", "OPG601") or not _overlaps(d.span, span):
            continue
        ref = kernel_nav.kernel_for_diagnostic(analysis.native, d.code, d.span)
        if ref is None:
            continue
        stub = kernel_nav.stub_for(ref, kernel_nav.kernel_declaration(analysis.native, ref))
        path = kernels.absolute(kernels.stub_file) if kernels.stub_file else \
            kernel_nav.stub_file(kernels.state.index, analysis.native, ref)
        if stub is None or path is None or (path, stub) in seen:
            continue
        seen.add((path, stub))
        found = _append_edit(path, stub, client, kernels)
        if found is None:
            continue
        shown = os.path.relpath(path, kernels.root) if kernels.root and path.startswith(kernels.root) else path
        what = ref.macro if ref.what == kernel_nav.META_FUNC else ref.qualified
        out.append(_stub_action(f"Create {what} in {shown}", d, found[0], found[1], analysis, client))
    return out


def backend_stub_actions(analysis: Analysis, span, client: Client, kernels: KernelContext | None
                         ) -> list[types.CodeAction]:
    """OPG530: insert the stub of the missing backend kernel into the implementation file (inside its
    namespace when the file closes it with `} // namespace <ns>`, else wrapped in one at the end)."""
    if kernels is None or analysis.backend is None:
        return []
    out = []
    for d in analysis.diagnostics:
        if d.code != "OPG530" or not _overlaps(d.span, span):
            continue
        data = dict(d.data)
        path, definition, wrapped, ns = data.get("impl_path"), data.get("definition"), data.get("stub"), \
            data.get("namespace")
        if not path or not definition or not wrapped:
            continue
        uri, text = kernels.text_of(path)
        if text is None:
            continue
        from pygls.uris import from_fs_path

        lines = Lines(text)
        close = kernel_nav.namespace_close(lines, ns or "")
        if close is not None:
            where = span_to_range(lines, Span.point(close, 0), client.encoding)
            edit = types.TextEdit(range=where, new_text=definition + "\n")
        else:
            line, col, separator = kernel_nav.append_point(lines)
            edit = types.TextEdit(range=span_to_range(lines, Span.point(line, col), client.encoding),
                                  new_text=separator + wrapped)
        out.append(_stub_action(f"Insert a stub of this kernel into {os.path.basename(path)}", d,
                                uri or from_fs_path(path) or path, edit, analysis, client))
    return out


def shape_declaration_actions(analysis: Analysis, span, client: Client, kernels: KernelContext | None
                              ) -> list[types.CodeAction]:
    """OPG535: declare the missing compute_shape_ function in the shape-inference header the yaml was checked
    against (its editor text when it is open), next to the other declarations."""
    header = analysis.shape_header
    if kernels is None or header is None:
        return []
    from pygls.uris import from_fs_path

    from ..analysis.lazy.check import wheel_shape_header

    wanted = [d for d in analysis.diagnostics if d.code == "OPG535" and _overlaps(d.span, span)]
    if not wanted:
        return []
    path = header.path
    wheel = wheel_shape_header()
    if wheel is not None and os.path.realpath(wheel) == os.path.realpath(path):
        return []  # the installed torch's copy: not the user's file to edit (a yaml newer than the wheel)
    uri, text = kernels.text_of(path)
    if text is None:
        return []
    lines = Lines(text)
    out = []
    seen: set[str] = set()
    for d in wanted:
        declaration = dict(d.data).get("declaration")
        function = shape_fix.shape_function(declaration) if declaration else None
        if declaration is None or function is None or declaration in seen:
            continue
        seen.add(declaration)
        found = shape_fix.insert_declaration(text, declaration)
        if found is None:  # declared since the check
            continue
        edit = types.TextEdit(range=span_to_range(lines, found[0], client.encoding), new_text=found[1])
        out.append(_stub_action(f"Declare {function} in {os.path.basename(path)}", d,
                                uri or from_fs_path(path) or path, edit, analysis, client))
    return out


def code_actions(analysis: Analysis, rng: types.Range, client: Client, kernels: KernelContext | None = None
                 ) -> list[types.CodeAction]:
    span = range_to_span(analysis.lines, rng, client.encoding)
    native_document = analysis.native.document if analysis.native is not None else None
    found = actions_query.fixes(analysis.lines, analysis.diagnostics, span, native=native_document,
                                backend=analysis.backend)
    out = []
    for fix in found:
        edits = [types.TextEdit(range=span_to_range(analysis.lines, s, client.encoding), new_text=t)
                 for s, t in fix.edits]
        out.append(types.CodeAction(
            title=fix.title, kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostics(analysis.lines, [fix.diagnostic], client.encoding)[0]],
            is_preferred=fix.preferred or None,
            edit=types.WorkspaceEdit(changes={analysis.uri: edits})))
    out.extend(kernel_stub_actions(analysis, span, client, kernels))
    out.extend(backend_stub_actions(analysis, span, client, kernels))
    out.extend(shape_declaration_actions(analysis, span, client, kernels))
    return out


# ---------------------------------------------------------------- semantic tokens

SEMANTIC_LEGEND = types.SemanticTokensLegend(token_types=list(semantic_query.TOKEN_TYPES), token_modifiers=[])
_TOKEN_INDEX = {t: i for i, t in enumerate(semantic_query.TOKEN_TYPES)}


def semantic_tokens(analysis: Analysis, client: Client) -> types.SemanticTokens:
    if analysis.native is None:
        return types.SemanticTokens(data=[])
    data: list[int] = []
    last_line, last_col = 0, 0
    lines = analysis.lines
    encoding = client.encoding
    for token in semantic_query.schema_tokens(analysis.native.document):
        text = lines.line(token.line)
        start = encoding.to_units(text, token.col)
        length = encoding.to_units(text, token.col + token.length) - start
        delta_line = token.line - last_line
        data += [delta_line, start - last_col if delta_line == 0 else start, length, _TOKEN_INDEX[token.type], 0]
        last_line, last_col = token.line, start
    return types.SemanticTokens(data=data)


# ---------------------------------------------------------------- code lens

def code_lenses(analysis: Analysis, external: dict[str, list[str]], client: Client) -> list[types.CodeLens]:
    if analysis.native is None:
        return []
    out = []
    for lens in lens_query.op_lenses(analysis.native, external):
        command = types.Command(title=lens.title, command=lens.command or "", tooltip=lens.tooltip)
        if lens.command is not None:
            command.arguments = [dict(lens.argument or {}, uri=analysis.uri)]
        out.append(types.CodeLens(range=span_to_range(analysis.lines, lens.span, client.encoding), command=command))
    return out
