"""A new operator, scaffolded in the editor: the `opgen.scaffold` command and its code actions.

- Code actions on a functional `func:` entry that names no kernels yet (analysis.scaffold.entry_without_kernels):
  "Scaffold kernels..." and, when the op has an out= variant, "Scaffold structured kernels...". Each runs the
  command for that entry: the entry keeps its keys and gets its dispatch table (or structured_delegate); the
  in-place and out= entries follow it.
- `opgen.scaffold {schema, ...}` from anywhere: the entries are appended to the workspace's native_functions.yaml.

Either way the command computes the edits (analysis.scaffold), sends them to the client as one
workspace/applyEdit (a new kernel file is a CreateFile), and answers what it did. Arguments (one object):
`schema` or `uri` + `line`; `structured`, `tags`, `dispatch` ("CPU, CUDA"), `kernelFile` (default: a new file
named after the op beside native_functions.yaml), `derivatives` (true: the checkout's derivatives.yaml, or a
path), `backendYaml` (a path: the op is added to its supported: list), `backendKernelFile` (with backendYaml: the backend's
kernel stub is appended to it), `apply` (default true; false: only answer
the edit).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.uris import from_fs_path

from ..analysis import scaffold as sc
from ..analysis.check import NATIVE
from ..text import Span
from .commands import CommandError, CommandHost
from .convert import Lines, range_to_span, span_to_range
from .features import Client
from .workspace import Analysis

SCAFFOLD = "opgen.scaffold"
TITLE = "Scaffold kernels..."
TITLE_STRUCTURED = "Scaffold structured kernels..."
_CONVERTER = get_converter()


class ScaffoldHost(CommandHost, Protocol):
    """The server as the scaffold sees it: the commands' view, and workspace/applyEdit."""

    async def workspace_apply_edit_async(self, params: types.ApplyWorkspaceEditParams
                                         ) -> types.ApplyWorkspaceEditResult: ...


def code_actions(analysis: Analysis, rng: types.Range, client: Client) -> list[types.CodeAction]:
    """The scaffold's actions for the entry under the range's start (none elsewhere)."""
    if analysis.native is None:
        return []
    line = range_to_span(analysis.lines, rng, client.encoding).start_line
    found = sc.entry_without_kernels(analysis.native, line)
    if found is None:
        return []
    titles = [(TITLE, False)]
    try:
        if sc.can_be_structured(sc.parse_functional(found.schema)):
            titles.append((TITLE_STRUCTURED, True))
    except sc.ScaffoldError:  # (the command then says why; the other actions of this answer stay)
        pass
    return [types.CodeAction(title=title, kind=types.CodeActionKind.RefactorRewrite,
                             command=types.Command(title=title, command=SCAFFOLD, arguments=[
                                 {"uri": analysis.uri, "line": line, "structured": structured}]))
            for title, structured in titles]


def _argument(args: tuple[Any, ...]) -> dict:
    if len(args) == 1 and isinstance(args[0], dict):
        return args[0]
    if len(args) == 1 and isinstance(args[0], str):  # opgen.scaffold "my_op(Tensor self) -> Tensor"
        return {"schema": args[0]}
    raise CommandError("expected one argument: a schema string or an object with schema (or uri and line)")


def _native_uri(server: ScaffoldHost, arg: dict) -> str:
    """The native_functions.yaml to scaffold into: the given document, else the workspace's (opened if need be)."""
    model = server.model
    uri = arg.get("uri")
    if isinstance(uri, str):
        document = model.document(uri)
        if document is None or document.kind != NATIVE:
            raise CommandError(f"{uri} is not an open native_functions.yaml")
        return uri
    natives = model.documents(NATIVE)
    if natives:
        return natives[0].uri
    raise CommandError("open the native_functions.yaml the new operator goes into")


def _path(server: ScaffoldHost, value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise CommandError(f"{what}: expected a path")
    return server.model.absolute(value)


def _request(arg: dict, schema: str, tags: tuple[str, ...]) -> sc.ScaffoldRequest:
    dispatch = arg.get("dispatch") or ", ".join(sc.DEFAULT_DISPATCH)
    if not isinstance(dispatch, str):
        raise CommandError("dispatch: expected a string such as \"CPU, CUDA\"")
    asked = arg.get("tags") or ()
    if not isinstance(asked, (list, tuple)) or not all(isinstance(t, str) for t in asked):
        raise CommandError("tags: expected a list of tag names")
    return sc.ScaffoldRequest(schema, bool(arg.get("structured")), tuple(asked) or tags,
                              tuple(k.strip() for k in dispatch.split(",") if k.strip()),
                              bool(arg.get("derivatives")), bool(arg.get("backendYaml")))


def _tree(server: ScaffoldHost, analysis: Analysis, arg: dict, schema: str,
          entry: sc.EntryWithoutKernels | None) -> sc.TreeTexts:
    native_path = analysis.document.path
    if native_path is None:
        raise CommandError("native_functions.yaml is not a file")
    model = server.model
    kernel_path = _path(server, arg["kernelFile"], "kernelFile") if arg.get("kernelFile") else \
        sc.default_kernel_path(native_path, sc.op_base(schema))
    derivatives = arg.get("derivatives")
    derivatives_path = (_path(server, derivatives, "derivatives") if isinstance(derivatives, str)
                        else sc.default_derivatives_path(native_path)) if derivatives else None
    backend_path = _path(server, arg["backendYaml"], "backendYaml") if arg.get("backendYaml") else None
    backend_text = model.text_of(backend_path)[1] if backend_path else None
    if backend_path and backend_text is None:
        raise CommandError(f"backendYaml: cannot read {backend_path}")
    backend_kernel_path = _path(server, arg["backendKernelFile"], "backendKernelFile") \
        if arg.get("backendKernelFile") and backend_path else None
    tags = analysis.tags.names if analysis.tags is not None else frozenset[str]()
    return sc.TreeTexts(native_path, analysis.document.text, tags, kernel_path, model.text_of(kernel_path)[1],
                        derivatives_path, model.text_of(derivatives_path)[1] if derivatives_path else None,
                        backend_path, backend_text, backend_kernel_path,
                        model.text_of(backend_kernel_path)[1] if backend_kernel_path else None,
                        entry_end=entry.end if entry is not None else None)


def workspace_edit(server: ScaffoldHost, result: sc.Scaffold, encoding: Any) -> types.WorkspaceEdit:
    """The insertions as one WorkspaceEdit: a CreateFile before the text of a new file, a TextDocumentEdit each."""
    changes: list[types.TextDocumentEdit | types.CreateFile] = []
    for path in dict.fromkeys(i.path for i in result.insertions):
        uri, text = server.model.text_of(path)
        uri = uri or from_fs_path(path) or path
        lines = Lines(text or "")
        edits = []
        for i in (i for i in result.insertions if i.path == path):
            if i.create:
                changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)))
            end = (i.end_line, i.end_col or 0) if i.end_line is not None else (i.line, i.col)
            edits.append(types.TextEdit(range=span_to_range(lines, Span(i.line, i.col, *end), encoding),
                                        new_text=i.text))
        changes.append(types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=edits))
    return types.WorkspaceEdit(document_changes=changes)


async def run(server: ScaffoldHost, *args: Any) -> dict[str, Any]:
    """opgen.scaffold: compute the edits, apply them through the client (unless apply is false), say what was done."""
    arg = _argument(args)
    uri = _native_uri(server, arg)
    analysis = await server.analysis(uri)
    if analysis is None or analysis.native is None:
        raise CommandError(f"{uri} could not be read")
    entry = None
    if "line" in arg:
        if not isinstance(arg["line"], int):
            raise CommandError("line: expected a line number")
        entry = sc.entry_without_kernels(analysis.native, arg["line"])
        if entry is None:
            raise CommandError(f"no functional entry without kernels at line {arg['line'] + 1}")
        schema = entry.schema
    elif isinstance(arg.get("schema"), str):
        schema = arg["schema"]
    else:
        raise CommandError("give a schema (or the uri and line of an entry)")
    request = _request(arg, schema, entry.tags if entry is not None else ())
    tree = _tree(server, analysis, arg, schema, entry)
    loop = asyncio.get_running_loop()
    try:
        result = await loop.run_in_executor(server.analysis_executor, sc.scaffold, request, tree,
                                            analysis.native.release)
    except sc.ScaffoldError as exc:
        raise CommandError(str(exc)) from None
    edit = workspace_edit(server, result, server.client.encoding)
    applied = False
    if arg.get("apply", True):
        answer = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=edit, label=f"Scaffold {result.op}"))
        applied = bool(answer.applied)
        if not applied:
            raise CommandError(f"the editor did not apply the edits: {answer.failure_reason or 'no reason given'}")
    return {"op": result.op, "entries": list(result.entries), "applied": applied, "edit": _CONVERTER.unstructure(edit),
            "files": list(dict.fromkeys(i.path for i in result.insertions)),
            "created": [i.path for i in result.insertions if i.create]}

