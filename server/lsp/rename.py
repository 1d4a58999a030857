"""Rename, references and highlights of operators, overloads and kernels, across the workspace's files.

The files an operator lives in: the native_functions.yaml (the document's own, or the one a derivatives,
deprecated or backend yaml was checked against), the derivatives.yaml and deprecated.yaml of its tree and
those open in the editor, the backend yamls of the workspace (open, or found under its root), and the C++
sources of the kernel index. analysis.rename finds the places; this module gathers the texts and converts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..analysis import rename as query
from ..analysis.check import BACKEND, DEPRECATED, DERIVATIVES, NATIVE, classify
from ..index.documents import DEPRECATED_YAML
from ..index.native import NativeSnapshot
from ..input_file import UnreadableFile, read_text
from ..text import Span
from .convert import Encoding, Lines, from_position, fs_path, span_to_range
from .derivatives import NativeDerivatives
from .workspace import Analysis, OpenDocument, Workspace

# LSP's RequestFailed: the request was valid but could not be done (the reason is the message).
REQUEST_FAILED = int(types.LSPErrorCodes.RequestFailed)
# Folders never searched for backend yamls, and how many files a search looks at before it stops.
SKIPPED_FOLDERS = frozenset({".git", "build", "third_party", "node_modules", "__pycache__", ".venv", "venv"})
SEARCH_LIMIT = 20000
KINDS = {DERIVATIVES: query.DERIVATIVES, DEPRECATED: query.DEPRECATED, BACKEND: query.BACKEND}


class Refused(JsonRpcException):
    """A rename that cannot be done, answered as an error with the reason."""

    CODE = REQUEST_FAILED


@dataclass(frozen=True)
class Found:
    """The target under the cursor and the native_functions.yaml it is resolved in."""

    target: query.Target
    snapshot: NativeSnapshot
    native_uri: str
    native_path: str | None
    native_text: str


def _uri(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(path) or path


def target_at(analysis: Analysis, pos: types.Position, encoding: Encoding) -> Found | None:
    line, col = from_position(analysis.lines, pos, encoding)
    document = analysis.document
    if document.kind == NATIVE and analysis.native is not None:
        target = query.native_target(analysis.native, line, col)
        if target is None:
            return None
        return Found(target, analysis.native, analysis.uri, document.path, document.text)
    source = analysis.native_source
    kind = KINDS.get(document.kind)
    if kind is None or source is None:
        return None
    target = query.yaml_target(kind, document.text, line, col)
    if target is None:
        return None
    target = query.derived(source.snapshot, target)
    return Found(target, source.snapshot, source.uri, fs_path(source.uri), source.text)


def _yaml_files(workspace: Workspace, found: Found) -> Iterator[tuple[str, str, str]]:
    """(kind, uri, text) of every yaml besides native_functions.yaml that may name the target."""
    seen: set[str] = set()
    tree = NativeDerivatives.path(found.native_path)
    candidates = [(DERIVATIVES, tree), (DEPRECATED, os.path.join(os.path.dirname(tree), DEPRECATED_YAML) if tree else None)]
    for kind, path in candidates:
        if path is None or not os.path.isfile(path):
            continue
        uri, text = workspace.text_of(path)
        if text is not None:
            seen.add(os.path.normpath(path))
            yield kind, uri or _uri(path), text
    for document in workspace.documents():
        if document.kind in KINDS and (document.path is None or os.path.normpath(document.path) not in seen):
            seen.add(os.path.normpath(document.path) if document.path else document.uri)
            yield document.kind, document.uri, document.text
    for path in backend_yamls(workspace.root):
        if os.path.normpath(path) in seen:
            continue
        uri, text = workspace.text_of(path)
        if text is not None:
            yield BACKEND, uri or _uri(path), text


def backend_yamls(root: str | None) -> list[str]:
    """The backend yamls under the workspace root (a yaml with a top-level `backend:` key and op lists)."""
    if not root or not os.path.isdir(root):
        return []
    out: list[str] = []
    looked = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        for name in sorted(files):
            looked += 1
            if looked > SEARCH_LIMIT:
                return out
            if not name.endswith((".yaml", ".yml")) or name in ("native_functions.yaml", "tags.yaml"):
                continue
            path = os.path.join(folder, name)
            try:
                text = read_text(path)
            except UnreadableFile:
                continue
            if "backend:" in text and classify(path, text) == BACKEND:
                out.append(path)
    return out


def _backend_kernels(workspace: Workspace, uri: str, text: str, names: frozenset[str], target: query.Target
                     ) -> Iterator[tuple[str, str, list[Span]]]:
    """(uri, text, spans) of the backend's implementation files (opgen.implPaths, else the C++ files beside the
    yaml) defining the operator's kernels."""
    class_name = query.backend_class(text)
    document = workspace.document(uri) or OpenDocument(uri, fs_path(uri), BACKEND, text, None, 0)
    if class_name is None:
        return
    for path in workspace.impl_files(document) or ():
        cpp_uri, cpp_text = workspace.text_of(path)
        spans = query.backend_cpp_occurrences(cpp_text, class_name, names, target) if cpp_text else []
        if spans and cpp_text is not None:
            yield cpp_uri or _uri(path), cpp_text, spans


def occurrences(workspace: Workspace, found: Found) -> dict[str, tuple[str, list[Span]]]:
    """uri -> (text, spans naming the target), over every file of the workspace that may name it."""
    out: dict[str, tuple[str, list[Span]]] = {}
    native = query.native_occurrences(found.snapshot, found.target)
    if native:
        out[found.native_uri] = (found.native_text, native)
    backend_names = query.backend_kernel_names(found.snapshot, found.target)
    for kind, yaml_uri, yaml_text in _yaml_files(workspace, found):
        spans = query.yaml_occurrences(KINDS[kind], yaml_text, found.target)
        if spans and yaml_uri not in out:
            out[yaml_uri] = (yaml_text, spans)
        if kind == BACKEND and backend_names and spans:
            for cpp_uri, cpp_text, cpp_spans in _backend_kernels(workspace, yaml_uri, yaml_text, backend_names,
                                                                 found.target):
                out.setdefault(cpp_uri, (cpp_text, []))[1].extend(cpp_spans)
    index = workspace.kernels.index if workspace.kernels.roots else None
    if index is not None:
        texts: dict[str, str | None] = {}

        def text_of(path: str) -> str | None:
            texts[path] = workspace.text_of(path)[1]
            return texts[path]

        names = query.cpp_names(found.snapshot, found.target)
        for path, spans in query.cpp_occurrences(index, names, found.target, text_of).items():
            uri = workspace.text_of(path)[0] or _uri(path)
            text = texts.get(path)
            if text is not None:
                out.setdefault(uri, (text, []))[1].extend(spans)
    return out


def references(workspace: Workspace, analysis: Analysis, pos: types.Position, include_declaration: bool,
               encoding: Encoding) -> list[types.Location] | None:
    """Every place naming the operator, overload or kernel under the cursor; None when the cursor is on none."""
    found = target_at(analysis, pos, encoding)
    if found is None:
        return None
    declared = query.declaration(found.snapshot, found.target)
    out = []
    for uri, (text, spans) in occurrences(workspace, found).items():
        lines = Lines(text)
        for span in sorted(set(spans)):
            if not include_declaration and uri == found.native_uri and span == declared:
                continue
            out.append(types.Location(uri=uri, range=span_to_range(lines, span, encoding)))
    return out


def highlights(analysis: Analysis, pos: types.Position, encoding: Encoding) -> list[types.DocumentHighlight]:
    """The places of this document naming the target under the cursor (its declaration as a write)."""
    found = target_at(analysis, pos, encoding)
    if found is None:
        return []
    kind = KINDS.get(analysis.document.kind)
    if analysis.document.kind == NATIVE:
        spans = query.native_occurrences(found.snapshot, found.target)
        declared = query.declaration(found.snapshot, found.target)
    elif kind is not None:
        spans, declared = query.yaml_occurrences(kind, analysis.document.text, found.target), None
    else:
        return []
    return [types.DocumentHighlight(range=span_to_range(analysis.lines, s, encoding),
                                    kind=types.DocumentHighlightKind.Write if s == declared
                                    else types.DocumentHighlightKind.Read) for s in spans]


def prepare(analysis: Analysis, pos: types.Position, encoding: Encoding) -> types.PrepareRenamePlaceholder:
    found = target_at(analysis, pos, encoding)
    if found is None:
        raise Refused("opgen renames operators, overloads and kernels: put the cursor on one (a func: name, a "
                      "structured_delegate or autogen value, a dispatch kernel, a derivatives or backend yaml entry)")
    return types.PrepareRenamePlaceholder(range=span_to_range(analysis.lines, found.target.span, encoding),
                                          placeholder=found.target.name)


def rename(workspace: Workspace, analysis: Analysis, pos: types.Position, new_name: str, encoding: Encoding
           ) -> types.WorkspaceEdit:
    """One WorkspaceEdit replacing the target's name everywhere; Refused with the reason where it cannot."""
    found = target_at(analysis, pos, encoding)
    if found is None:
        prepare(analysis, pos, encoding)  # (raises with the reason)
        raise Refused("nothing to rename here")
    if workspace.kernels.roots and workspace.kernels.index is None:  # (its C++ would be left behind)
        raise Refused(f"the kernel index of {', '.join(workspace.kernels.roots)} is still being built; rename once "
                      "it is there, so that the C++ kernels are renamed too")
    index = workspace.kernels.index if workspace.kernels.roots else None
    problem = query.rename_problem(found.snapshot, index, found.target, new_name)
    if problem is not None:
        raise Refused(f"cannot rename {found.target.describe()} to {new_name!r}: {problem}")
    changes: dict[str, list[types.TextEdit]] = {}
    for uri, (text, spans) in occurrences(workspace, found).items():
        lines = Lines(text)
        changes[uri] = [types.TextEdit(range=span_to_range(lines, s, encoding), new_text=new_name)
                        for s in sorted(set(spans))]
    return types.WorkspaceEdit(changes=changes)
