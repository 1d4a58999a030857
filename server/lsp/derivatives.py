"""derivatives.yaml in the server: hover, completion, navigation, symbols and the lenses on native entries.

A derivatives.yaml document's analysis carries its check (Analysis.derivatives) and the native
functions it was checked against (Analysis.native_source). A native_functions.yaml document finds the
derivatives.yaml of its tree (open in the editor, else on disk) through NativeDerivatives, which checks
it against the document's own snapshot, once per snapshot.
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types

from ..analysis import cursor
from ..analysis import derivatives as query
from ..analysis.completion import Candidate
from ..analysis.definition import declaration_span
from ..index.derivatives import DerivativesParser
from ..index.documents import DERIVATIVES_YAML
from ..model.native_function import NativeFunction
from ..text import Span
from .convert import Lines, from_position, span_to_range

# Where PyTorch keeps derivatives.yaml, from the folder of native_functions.yaml.
TREE_DERIVATIVES = (os.path.join("..", "..", "..", "..", "tools", "autograd", DERIVATIVES_YAML),  # a checkout
                    os.path.join("..", "..", "autograd", DERIVATIVES_YAML))  # torchgen/packaged


def hover(analysis, pos: types.Position, client) -> types.Hover | None:
    line, col = from_position(analysis.lines, pos, client.encoding)
    found = query.hover(analysis.derivatives, line, col)
    if found is None:
        return None
    return types.Hover(contents=client.markup(found.markdown, client.hover_markdown),
                       range=span_to_range(analysis.lines, found.span, client.encoding))


def candidates(analysis, line: int, col: int) -> list[Candidate]:
    lines = analysis.document.text.split("\n")
    return query.complete(analysis.derivatives, lines, line, col)


def symbols(analysis) -> list:
    return query.symbols(analysis.derivatives)


def _native_location(source, f: NativeFunction, client) -> types.Location | None:
    op = next((o for o in source.snapshot.functions.ops if o.function is f), None)
    span = declaration_span(source.snapshot, op) if op is not None and not op.generated else None
    if span is None and op is not None:
        span = Span.point(op.line, 0)
    if span is None:
        return None
    return types.Location(uri=source.uri, range=span_to_range(source.lines, span, client.encoding))


def definition(analysis, pos: types.Position, client) -> types.Location | None:
    """From an entry's name: to the op's entry in native_functions.yaml."""
    source = analysis.native_source
    line, col = from_position(analysis.lines, pos, client.encoding)
    f = query.function_at(analysis.derivatives, line, col)
    return _native_location(source, f, client) if f is not None and source is not None else None


def references(analysis, pos: types.Position, include_declaration: bool, client) -> list[types.Location]:
    """On an entry's name: the op in native_functions.yaml (as its declaration) and every entry whose
    formulas the op uses."""
    source = analysis.native_source
    line, col = from_position(analysis.lines, pos, client.encoding)
    f = query.function_at(analysis.derivatives, line, col)
    if f is None or source is None:
        return []
    out = []
    if include_declaration and (declared := _native_location(source, f, client)) is not None:
        out.append(declared)
    for found in query.formula_sources(analysis.derivatives).get(id(f), ()):
        out.append(types.Location(uri=analysis.uri, range=span_to_range(analysis.lines, found.span, client.encoding)))
    return out


# ---------------------------------------------------------------- from native_functions.yaml

class NativeDerivatives:
    """The derivatives.yaml of a native document's tree, checked against that document's snapshot."""

    def __init__(self) -> None:
        self._parser = DerivativesParser()
        self._checker: Any = None
        self._last: tuple[tuple, Any] | None = None

    def check(self, workspace, analysis) -> tuple[str, str, Any] | None:
        """(uri, text, check) of the tree's derivatives.yaml, or None when there is none."""
        path = self.path(analysis.document.path)
        if path is None or analysis.native is None:
            return None
        uri, text = workspace.text_of(path)
        if text is None:
            return None
        from pygls.uris import from_fs_path

        from ..analysis.autograd.load import DerivativesChecker

        # The snapshot itself is kept in the key (not its id, which a later snapshot may reuse).
        release = workspace.release_for(analysis.document.path).release  # the native document's
        key = (path, text, release, analysis.native)
        if self._last is not None and self._last[0][:3] == key[:3] and self._last[0][3] is key[3]:
            return self._last[1]
        self._checker = self._checker or DerivativesChecker()
        check = self._checker.check(self._parser.parse(text), analysis.native.functions, release)
        made = (uri or from_fs_path(path) or path, text, check)
        self._last = (key, made)
        return made

    @staticmethod
    def path(native_path: str | None) -> str | None:
        if native_path is None:
            return None
        for relative in TREE_DERIVATIVES:
            candidate = os.path.normpath(os.path.join(os.path.dirname(native_path), relative))
            if os.path.isfile(candidate):
                return candidate
        return None


def _function_on(analysis, line: int) -> tuple[NativeFunction, Span] | None:
    entry = cursor.entry_at(analysis.native.document, line)
    lowered = entry.result.value if entry is not None else None
    f = getattr(lowered, "function", None)
    span = cursor.op_name_span(entry) if entry is not None else None
    return (f, span) if f is not None and span is not None else None


def native_lenses(workspace, analysis, client) -> list[types.CodeLens]:
    """On each native entry with formulas: where they are (its own entry, or the overload it shares them with)."""
    if analysis.native is None:
        return []
    found = workspace.native_derivatives.check(workspace, analysis)
    if found is None:
        return []
    check = found[2]
    sources = query.formula_sources(check)
    out = []
    for entry in analysis.native.document.entries:
        lowered = entry.result.value
        f = getattr(lowered, "function", None)
        span = cursor.op_name_span(entry)
        if f is None or span is None or id(f) not in sources:
            continue
        source = sources[id(f)][-1]  # torchgen keeps the last entry for a function
        nodes = [n.op for n in query.nodes_of(check, source.span.start_line)]
        title = (f"∂ derivatives.yaml:{source.span.start_line + 1}" + (f" ({', '.join(nodes)})" if nodes else "")
                 if source.own else f"∂ formulas of {source.specification.split('(', 1)[0]} "
                                    f"(derivatives.yaml:{source.span.start_line + 1})")
        # Informative, as the other lenses: go to definition on the name leads there.
        out.append(types.CodeLens(range=span_to_range(analysis.lines, span, client.encoding),
                                  command=types.Command(title=title, command="")))
    return out


def native_definition(workspace, analysis, pos: types.Position, client) -> list[types.Location] | None:
    """From a native entry's func: name to the derivatives.yaml entries whose formulas it uses."""
    if analysis.native is None:
        return None
    line, col = from_position(analysis.lines, pos, client.encoding)
    on = _function_on(analysis, line)
    if on is None or not on[1].contains(line, col):
        return None
    found = workspace.native_derivatives.check(workspace, analysis)
    if found is None:
        return None
    uri, text, check = found
    lines = Lines(text)
    places = query.formula_sources(check).get(id(on[0]), ())
    return [types.Location(uri=uri, range=span_to_range(lines, s.span, client.encoding)) for s in places] or None
