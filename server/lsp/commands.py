"""The server's commands: opgen.generate and opgen.showGenerated.

opgen.generate runs the full emitter for the workspace on a worker thread (the server's generators,
lsp/generators.py: given by whoever built the server),
reports `$/progress` (begin, a report per file, end) when the client accepts
server-initiated progress, and stops between files when the progress is
cancelled (window/workDoneProgress/cancel) or the request is ($/cancelRequest).
It writes only inside the output folder: the `outputDir` setting, or by default a folder of
its own for each input yaml (default_output_dir), so that two native_functions.yaml of one
workspace never overwrite each other's files; and outside the workspace folders only where the
user (not a workspace) set it (trust.py).

opgen.showGenerated returns the generated code of one op (the opgen explain
pieces) or of one whole generated file as
`{"uri": "opgen:/generated/...", "title": ..., "text": ...}`. The text is kept
under that uri for `workspace/textDocumentContent`, and clients that support it
are asked to show it (window/showDocument); other clients use `text`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Executor
from typing import Any, Protocol

from lsprotocol import types
from pygls.workspace import Workspace as OpenDocuments

from ..analysis.check import BACKEND, NATIVE
from . import trust
from .convert import fs_path
from .features import Client
from .generators import BackendRequest, Counts, Generators, NativeRequest
from .host import Host
from .workspace import Analysis, OpenDocument, Workspace

GENERATE = "opgen.generate"
SHOW_GENERATED = "opgen.showGenerated"
COMMANDS = [GENERATE, SHOW_GENERATED]
SCHEME = "opgen"
MAX_VIRTUAL_DOCUMENTS = 32
# At most this long a command waits for the client's workspace/configuration answer (as analyses do).
SETTINGS_WAIT = 5.0


class CommandError(Exception):
    """A command that cannot run as asked; its message goes back to the user."""


class VirtualDocuments:
    """The read-only documents opgen.showGenerated made, by uri (the latest few)."""

    def __init__(self) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()

    def put(self, uri: str, text: str) -> None:
        self._texts[uri] = text
        self._texts.move_to_end(uri)
        while len(self._texts) > MAX_VIRTUAL_DOCUMENTS:
            self._texts.popitem(last=False)

    def get(self, uri: str) -> str | None:
        return self._texts.get(uri)


class CommandHost(Host, Protocol):
    """The server as the commands see it: the workspace and its analyses, the client, and a thread for the
    generator."""

    @property
    def model(self) -> Workspace: ...

    @property
    def client(self) -> Client: ...

    @property
    def workspace(self) -> OpenDocuments: ...  # pygls' (the workspace folders)

    @property
    def initialization_options(self) -> Any: ...

    @property
    def virtual_documents(self) -> VirtualDocuments: ...

    @property
    def command_executor(self) -> Executor: ...

    @property
    def generators(self) -> Generators: ...  # given by whoever built the server

    async def analysis(self, uri: str) -> Analysis | None: ...

    def window_show_message(self, params: types.ShowMessageParams) -> None: ...

    async def window_show_document_async(self, params: types.ShowDocumentParams) -> types.ShowDocumentResult: ...


def _argument(args: tuple[Any, ...]) -> dict:
    if not args:
        return {}
    first = args[0]
    if isinstance(first, dict):
        return first
    if isinstance(first, str):  # opgen.showGenerated "add.Tensor"
        return {"op": first}
    raise CommandError(f"expected an object argument, not {first!r}")


def _native_path(server: CommandHost, uri: str | None) -> str:
    """The native_functions.yaml a command works on: the given document's (or the one it is checked against)."""
    model = server.model
    document = model.document(uri) if uri else None
    if document is not None and document.kind == NATIVE and document.path:
        return document.path
    if document is not None and document.kind == BACKEND:
        _, path, why = model.native_location(document)
        if path:
            return path
        raise CommandError(why)
    natives = [d.path for d in model.documents(NATIVE) if d.path]
    if natives:
        return natives[0]
    candidates = []
    if server.settings.native_functions_path:
        candidates.append(model._absolute(server.settings.native_functions_path))
    if model.root:
        candidates.append(os.path.join(model.root, "aten", "src", "ATen", "native", "native_functions.yaml"))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise CommandError("no native_functions.yaml in the workspace: open one or set opgen.nativeFunctionsPath")


def default_output_dir(root: str | None, source: str) -> str:
    """Where a yaml generates when opgen.outputDir is not set: build/ + its source folder's path in the workspace.

    A native_functions.yaml's source folder is the one holding native/ (gen.py's --source-path), else its own
    folder: PyTorch's aten/src/ATen/native/native_functions.yaml generates into build/aten/src/ATen, where
    PyTorch's build puts gen.py's files, and one at the workspace root into build/. A backend yaml's is its
    own path without `.yaml`. A yaml outside the workspace gets build/outside/<folder name>-<hash of its path>."""
    source = os.path.realpath(source)
    if os.path.basename(source) == "native_functions.yaml":
        folder = os.path.dirname(source)
        folder = os.path.dirname(folder) if os.path.basename(folder) == "native" else folder
    else:
        folder = os.path.splitext(source)[0]
    if root:
        relative = os.path.relpath(folder, os.path.realpath(root))
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return os.path.normpath(os.path.join("build", relative))
    digest = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return os.path.join("build", "outside", f"{os.path.basename(folder)}-{digest}")


def output_dir(server: CommandHost, source: str, value: str | None = None) -> str:
    """The real path of the output folder for generating from `source` (a native_functions.yaml or a backend
    yaml): opgen.outputDir (or value, spelled as the setting is), else default_output_dir."""
    setting = server.settings.output_dir if value is None else value
    path = os.path.expanduser(setting) if setting else default_output_dir(server.model.root, source)
    if not os.path.isabs(path):
        if not server.model.root:
            raise CommandError("opgen.outputDir is relative and the workspace has no root folder")
        path = os.path.join(server.model.root, path)
    return os.path.realpath(path)


def workspace_folders(server: CommandHost) -> list[str]:
    """The real paths of the workspace folders (and of the root, for clients that give only a root)."""
    paths = [fs_path(folder.uri) for folder in server.workspace.folders.values()] + [server.model.root]
    return list(dict.fromkeys(os.path.realpath(p) for p in paths if p))


async def write_dir(server: CommandHost, source: str) -> str:
    """output_dir for source, when the server may write there (see trust.py); else the client is shown why, and the
    command fails with it. Waits for the settings first (a generate sent right after start must not write
    where the initializationOptions said while workspace/configuration says otherwise)."""
    if not server.configured.is_set():
        try:
            await asyncio.wait_for(server.configured.wait(), SETTINGS_WAIT)
        except TimeoutError:
            pass  # the server's own wait gives up too, and the settings it has are checked all the same
    path = output_dir(server, source)
    user_value = trust.user_setting(server.initialization_options, "outputDir")
    folders = workspace_folders(server)
    refusal = trust.write_refusal("opgen.outputDir", path, folders,
                                  trust.user_folder(user_value, server.model.root, folders) if user_value else None)
    if refusal is not None:
        try:
            server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=refusal))
        except Exception:  # no connection: the command's error says it too  # noqa: BLE001
            pass
        raise CommandError(refusal)
    return path


def _native_request(server: CommandHost, native: str, output: str) -> NativeRequest:
    return NativeRequest(native, output, per_operator_headers=server.settings.per_operator_headers,
                         torch_version=server.settings.torch_version)


def _target(server: CommandHost, args: dict) -> str:
    target = args.get("target") or server.settings.generate_target
    if target == "auto":
        has_native = bool(server.model.documents(NATIVE)) or (
            server.model.root and os.path.isfile(os.path.join(server.model.root, "aten", "src", "ATen", "native",
                                                              "native_functions.yaml")))
        target = "backend" if server.model.documents(BACKEND) and not has_native else "native"
    return target


async def generate(server: CommandHost, *args: Any) -> dict:
    arg = _argument(args)
    target = _target(server, arg)
    if target == "backend":
        return await generate_backend(server, arg)
    if target != "native":
        raise CommandError(f"unknown target {target!r}: use \"native\" or \"backend\"")
    native = _native_path(server, arg.get("uri"))
    job = _native_request(server, native, await write_dir(server, native))
    cancel = threading.Event()
    token = await server.begin_progress("generate", types.WorkDoneProgressBegin(
        title="opgen: generating", cancellable=True, message=job.output_dir, percentage=0))
    if token is not None:
        future = server.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
    loop = asyncio.get_running_loop()

    delay = server.settings.testing.generate_delay_ms / 1000

    def progress(counts: Counts, path: str) -> None:
        if delay:
            time.sleep(delay)
        if token is not None:  # the counts as `opgen generate` shows them on a terminal, then the file begun
            message = f"{counts.text()}: {path}" if path else counts.text()
            loop.call_soon_threadsafe(server.work_done_progress.report, token, types.WorkDoneProgressReport(
                message=message, percentage=counts.percentage, cancellable=True))

    work = loop.run_in_executor(server.command_executor, server.generators.generate_native, job, progress,
                                cancel.is_set)
    try:
        result = await asyncio.shield(work)
    except asyncio.CancelledError:  # $/cancelRequest: stop the job between files, then give up
        cancel.set()
        raise
    finally:
        if token is not None:
            done = work.done() and not work.cancelled() and work.exception() is None
            message = work.result().summary() if done else "cancelled"
            server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            server.work_done_progress.tokens.pop(token, None)
    server.log(f"opgen.generate into {job.output_dir}: {result.summary()}")
    return {"outputDir": job.output_dir, "written": len(result.written), "unchanged": len(result.unchanged),
            "missing": result.missing, "notGenerated": result.not_generated(), "errors": result.errors, "cancelled": result.cancelled,
            "summary": result.summary()}


def _backend_document(server: CommandHost, uri: str | None) -> tuple[OpenDocument, str]:
    """The backend yaml a command works on (the given document, else the first one open) and its path."""
    model = server.model
    document = model.document(uri) if uri else None
    if document is not None and document.kind == BACKEND and document.path:
        return document, document.path
    backends = [(d, d.path) for d in model.documents(BACKEND) if d.path]
    if not backends:
        raise CommandError("no backend yaml is open: open the backend yaml (backend:, cpp_namespace:, supported:) "
                           "to generate its files")
    return backends[0]


async def generate_backend(server: CommandHost, arg: dict) -> dict:
    """gen_backend_stubs' files (<Key>NativeFunctions.h, Register<Key>.cpp, ...) for a backend yaml as saved on
    disk, checked against its native_functions.yaml, written into the output directory (opgen generate-backend)."""
    document, path = _backend_document(server, arg.get("uri"))
    _, native_path, why = server.model.native_location(document)
    if native_path is None:
        raise CommandError(why)
    out = await write_dir(server, path)
    request = BackendRequest(path, out, native_functions=native_path,
                             release=server.model.release_for(native_path).release)
    token = await server.begin_progress("generate", types.WorkDoneProgressBegin(
        title="opgen: generating the backend's files", cancellable=False, message=out, percentage=0))
    loop = asyncio.get_running_loop()
    summary = "failed"
    try:
        result = await loop.run_in_executor(server.command_executor, server.generators.generate_backend, request)
        errors = list(result.errors) + [
            f"{os.path.basename(d.path)}:{d.diagnostic.span.start_line + 1}: {d.diagnostic.message}"
            for d in result.diagnostics if d.diagnostic.is_error]
        written = result.written
        summary = (f"{len(written.written)} file(s) written, {len(written.unchanged)} unchanged" if written is not None
                   else "nothing written")
        if errors:
            summary += f", {len(errors)} error(s): {errors[0]}"
    finally:
        if token is not None:
            server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
            server.work_done_progress.tokens.pop(token, None)
    server.log(f"opgen.generate (backend {os.path.basename(document.path or '')}) into {out}: {summary}")
    return {"outputDir": out, "target": "backend",
            "written": len(written.written) if written is not None else 0,
            "unchanged": len(written.unchanged) if written is not None else 0,
            "missing": [], "errors": errors, "cancelled": False, "summary": summary}


async def show_generated(server: CommandHost, *args: Any) -> dict:
    from ..index.inputs import InputError

    arg = _argument(args)
    uri = arg.get("uri")
    if arg.get("op"):
        text, title = await _op_code(server, uri, str(arg["op"]), arg.get("backend"))
        virtual = f"{SCHEME}:/generated/op/{arg['op']}.md"
    elif arg.get("file"):
        native = _native_path(server, uri)
        job = _native_request(server, native, output_dir(server, native))
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(server.command_executor, server.generators.render_native_file, job,
                                               str(arg["file"]))
        except (InputError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        if found is None:
            raise CommandError(f"opgen does not generate a file called {arg['file']!r} (or cannot yet)")
        title, text = found
        virtual = f"{SCHEME}:/generated/file/{title}"
    else:
        raise CommandError("opgen.showGenerated needs {\"op\": \"name.overload\"} or {\"file\": \"Functions.h\"}")
    server.virtual_documents.put(virtual, text)
    if server.client.text_document_content and server.client.show_document:
        try:
            await asyncio.wait_for(server.window_show_document_async(
                types.ShowDocumentParams(uri=virtual, take_focus=True)), 5)
        except Exception as exc:  # the text is in the result anyway
            server.log(f"opgen: cannot show {virtual}: {exc}", types.MessageType.Warning)
    return {"uri": virtual, "title": title, "text": text}


async def _op_code(server: CommandHost, uri: str | None, op: str, backend: str | None) -> tuple[str, str]:
    analysis = None
    if uri:
        analysis = await server.analysis(uri)
    if analysis is None:
        natives = server.model.documents(NATIVE)
        analysis = await server.analysis(natives[0].uri) if natives else None
    snapshot = None
    if analysis is not None:
        snapshot = analysis.native if analysis.native is not None else (
            analysis.native_source.snapshot if analysis.native_source is not None else None)
    if snapshot is None:
        raise CommandError("no native_functions.yaml is open to explain the op from")
    explainer = snapshot.explainer
    snippets = explainer.explain(op, backend)
    if not snippets:
        near = explainer.closest(op)
        raise CommandError(f"no operator {op!r}" + (f"; did you mean {', '.join(near)}?" if near else ""))
    text = f"# {op}: generated code\n\n" + "\n\n".join(
        f"## {s.title} ({s.file})\n\n```cpp\n{s.code}\n```" for s in snippets) + "\n"
    return text, op
