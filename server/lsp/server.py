"""The pygls server: document sync, debounced diagnostics, and the feature handlers.

Threading: documents are updated on the event loop; analyses (parsing and
checking) run on one worker thread, one at a time, so the loop keeps answering
while a large file loads. A request awaits the analysis of the document as it
is now; diagnostics are published (or pulled) for the analysed version only
and results for a version that has been superseded are dropped.

Every handler is guarded: an exception is logged (server log and
window/logMessage), the handler answers empty, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from ..analysis.check import BACKEND, DEPRECATED, DERIVATIVES, NATIVE, SELECTION, TAGS
from ..analysis.pytorch_format import LoadFailure
from ..releases import server_version_text
from . import commands, convert, editing, features, kernels, navigation, scaffold, transport, watchdog
from . import derivatives as derivatives_lsp
from . import rename as rename_lsp
from .analyses import Scheduler
from .config import SECTION, Settings, settings_from
from .convert import Encoding, fs_path, usable_path, use_client_lines
from .generators import Generators
from .protocol import OpgenProtocol, one_line
from .retained import release_freed_memory
from .workspace import Analysis, Workspace

logger = logging.getLogger(__name__)

COMPLETION_TRIGGERS = [" ", ",", "("]
SIGNATURE_TRIGGERS = ["(", ","]
# Files read from disk that the server asks the client to watch.
WATCHED = ["**/native_functions.yaml", "**/tags.yaml", "**/*.{cpp,cc,cxx,cu,cuh,mm,h,hpp}"]
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".mm", ".h", ".hpp", ".hh")
# The kinds of documents that are checked, and those checked against a native_functions.yaml.
CHECKED_KINDS = (NATIVE, TAGS, BACKEND, DERIVATIVES, DEPRECATED, SELECTION)
AGAINST_NATIVE = (BACKEND, DERIVATIVES, DEPRECATED)
# The server's notification of the torch release a native_functions.yaml is checked as ({uri, version, profile,
# source, fit, label, note}; see Resolved.status), for the client's status item.
RELEASE_NOTIFICATION = "opgen/release"
# How long analyses wait for the client's answer to workspace/configuration after `initialized`.
CONFIGURATION_TIMEOUT = 5.0
# A request gives up on an analysis that takes this long (a stuck one): it is answered empty, and logged.
# The real native_functions.yaml takes about 1 s cold on a loaded 2-core machine.
ANALYSIS_TIMEOUT = 120.0


# Distinct warnings remembered (each shown once); beyond it they are forgotten and may be shown again.
WARNED_LIMIT = 1000
# A second after the last document closed, what the closed documents used is given back to the system.
RELEASE_DELAY_S = 1.0

def _nothing() -> None:
    """A job that only marks its place in an executor's queue."""


class OpgenLanguageServer(LanguageServer):
    def __init__(self, generators: Generators) -> None:
        super().__init__("opgen-lsp", server_version_text(), text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=OpgenProtocol)
        self.model = Workspace()
        self.client = features.Client()
        self.settings = Settings()
        self.initialization_options: Any = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opgen-analysis")
        # Commands (generate) run apart from the analyses, so that diagnostics keep flowing meanwhile.
        self.command_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opgen-command")
        self.generators = generators  # what the commands generate with (lsp/ imports no generator)
        # The kernel index is built apart from the analyses too (one-file updates run with the analyses).
        self.kernel_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opgen-kernels")
        self.virtual_documents = commands.VirtualDocuments()
        self.editing = editing.EditingChecks()  # the lint's round trip and compatibility, on open and save
        self.analyses = Scheduler(self._executor, self.model.analyse, self.model.key, self.model.latest,
                                  ANALYSIS_TIMEOUT)
        self._pending: dict[str, asyncio.Task] = {}
        self._published: set[str] = set()
        self._announced: dict[str, dict[str, str]] = {}  # uri -> the opgen/release last sent for it
        self._warned: set[str] = set()
        self._release: asyncio.TimerHandle | None = None  # memory given back once closing stops
        # Set once the settings are known (workspace/configuration answered, or not supported), so that
        # no document is checked with the wrong settings first (e.g. against the wrong tags.yaml).
        self.configured = asyncio.Event()

    # ------------------------------------------------------------ connection (our reader: transport.py)

    def start_io(self, stdin=None, stdout=None) -> None:
        transport.start_io(self, stdin, stdout, on_end=lambda: watchdog.exit_after(code=self.exit_code))

    def start_tcp(self, host: str, port: int) -> None:
        transport.start_tcp(self, host, port)

    @property
    def exit_code(self) -> int:
        """As the LSP asks: 0 after a shutdown request, 1 otherwise."""
        return 0 if self.protocol._shutdown else 1

    # ------------------------------------------------------------ messages

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # no connection (yet, or any more): the server log has it
            logger.debug("cannot send window/logMessage", exc_info=True)

    def warn(self, message: str) -> None:
        """A warning for the user, once per distinct message."""
        logger.warning("%s", message)
        if message not in self._warned:
            if len(self._warned) >= WARNED_LIMIT:  # settings sent again and again, each wrong anew: no growth
                self._warned.clear()
            self._warned.add(message)
            self.log(message, types.MessageType.Warning)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' report of an error it met: logged in one line (pygls showed the user "Error in server: ...")."""
        logger.error("opgen-lsp: %s", one_line(error))

    def report_failure(self, what: str, exc: BaseException) -> None:
        logger.error("opgen: %s failed", what, exc_info=exc)
        self.log(f"opgen: {what} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)

    # ------------------------------------------------------------ settings

    def apply_settings(self, *sources: object) -> None:
        settings = settings_from(*sources, warn=self.warn)
        self.settings = settings
        self.model.settings = settings
        kernels.configure(self)
        self.recheck_stale()
        for document in self.model.documents(NATIVE):
            self.announce_release(document.uri)

    def announce_release(self, uri: str) -> None:
        """Tell the client the torch release a native_functions.yaml is checked as (opgen/release: the status
        item shows it), when it is new or changed (a setting, the document's kind)."""
        document = self.model.document(uri)
        if document is None or document.kind != NATIVE:
            return
        params = {"uri": uri, **self.model.release_for(document.path).status()}
        if self._announced.get(uri) != params:
            self._announced[uri] = params
            self.protocol.notify(RELEASE_NOTIFICATION, params)

    async def pull_configuration(self) -> None:
        if not self.client.configuration:
            return
        try:
            result = await asyncio.wait_for(self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])), CONFIGURATION_TIMEOUT)
        except TimeoutError:
            self.warn(f"opgen: the client did not answer workspace/configuration within {CONFIGURATION_TIMEOUT:g} s; "
                      "using the initializationOptions")
            return
        self.apply_settings(self.initialization_options, result[0] if result else None)

    async def watch_files(self) -> None:
        """Ask the client to report changes of the files read from disk: tags, native_functions.yaml, C++."""
        if not self.client.watch_files:
            return
        patterns = set(WATCHED)
        for configured in (self.settings.tags_path, self.settings.native_functions_path):
            if configured:
                patterns.add("**/" + os.path.basename(configured))
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=p) for p in sorted(patterns)])
        try:
            await asyncio.wait_for(self.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(id="opgen-watch-tags", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                   register_options=options)])), CONFIGURATION_TIMEOUT)
        except Exception as exc:  # the server works without it: files on disk are re-read on save and edit
            logger.info("cannot watch files: %s", exc)

    async def register_virtual_documents(self) -> None:
        """Serve opgen.showGenerated's documents through workspace/textDocumentContent (LSP 3.18)."""
        if not self.client.text_document_content:
            return
        try:
            await asyncio.wait_for(self.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(id="opgen-virtual-documents", method=types.WORKSPACE_TEXT_DOCUMENT_CONTENT,
                                   register_options=types.TextDocumentContentRegistrationOptions(
                                       schemes=[commands.SCHEME]))])), CONFIGURATION_TIMEOUT)
        except Exception as exc:
            logger.info("cannot register virtual documents: %s", exc)

    # ------------------------------------------------------------ analyses

    @property
    def analysis_executor(self) -> ThreadPoolExecutor:
        return self._executor

    def kernel_context(self) -> features.KernelContext:
        return features.KernelContext(self.model.kernels, self.model.root, self.settings.kernel_stub_file,
                                      self.model.absolute, self.model.text_of)

    def warm_up(self) -> None:
        """In a PyTorch checkout, parse aten/src/ATen/native/native_functions.yaml from disk in the background,
        so that opening it later costs a re-check (tens of ms) rather than a first parse (about 0.25 s)."""
        from pygls.uris import from_fs_path

        from .workspace import WORKSPACE_NATIVE

        root = self.model.root
        path = os.path.join(root, WORKSPACE_NATIVE) if root else None
        if path is None or not os.path.isfile(path):
            return
        uri = from_fs_path(path)
        if uri is None:
            return
        def said(future: asyncio.Future[bool]) -> None:
            if not future.cancelled() and future.exception() is not None:
                logger.info("warming up %s failed: %s", path, future.exception())

        asyncio.get_running_loop().run_in_executor(self._executor, self.model.warm, uri, path).add_done_callback(said)

    async def files_changed(self, paths: list[str]) -> None:
        """C++ files saved or changed on disk: the kernel index and the backends' kernel checks follow."""
        cpp = [p for p in paths if p.endswith(CPP_SUFFIXES)]
        if cpp:
            self.model.cpp_generation += 1
            await kernels.files_changed(self, cpp)
        self.recheck_stale()

    async def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document as it is now (made on the worker thread when needed; see analyses.py)."""
        if not self.configured.is_set():
            try:  # a client that never sends `initialized` must not stall every request
                await asyncio.wait_for(self.configured.wait(), CONFIGURATION_TIMEOUT)
            except TimeoutError:
                self.configured.set()
        return await self.analyses.get(uri)

    @property
    def pulls(self) -> bool:
        """Whether diagnostics go by pull. A client that pulls but cannot be told to pull again (Neovim 0.11
        has no workspace/diagnostic/refresh) would keep a stale list after tags.yaml, native_functions.yaml
        or a C++ source changes; it gets pushed diagnostics instead, and empty answers to its pulls."""
        return self.client.pull_diagnostics and self.client.diagnostic_refresh

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Re-check the document after the debounce delay and publish its diagnostics (push clients)."""
        if self.pulls:
            return
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        wait = self.settings.debounce_ms / 1000 if delay is None else delay
        self._pending[uri] = asyncio.ensure_future(self._check(uri, wait))

    async def _check(self, uri: str, delay: float) -> None:
        me = asyncio.current_task()
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            for _ in range(3):
                analysis = await self.analysis(uri)
                if analysis is None or self._pending.get(uri) is not me:
                    return  # closed, or a newer check replaced this one
                if analysis.key == self.model.key(uri):
                    self.publish(analysis)
                    return
                # Stale (tags changed on disk meanwhile) and no newer check is coming: go again.
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.report_failure(f"checking {uri}", exc)
        finally:
            if self._pending.get(uri) is me:
                del self._pending[uri]

    def publish(self, analysis: Analysis) -> None:
        uri = analysis.uri
        if analysis.document.kind not in CHECKED_KINDS and uri not in self._published:
            return
        items = features.diagnostic_items(analysis, self.client) + self.editing_items(analysis)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=analysis.version))
        if items or analysis.document.kind in CHECKED_KINDS:
            self._published.add(uri)
        else:
            self._published.discard(uri)

    def editing_items(self, analysis: Analysis) -> list[types.Diagnostic]:
        found = self.editing.diagnostics_for(analysis.uri, analysis.document.text)
        return convert.diagnostics(analysis.lines, found, self.client.encoding) if found else []

    def run_editing_checks(self, uri: str) -> None:
        """The lint's round trip and the compatibility of schemas for the document as it is (open, save)."""
        document = self.model.document(uri)
        settings = self.settings
        base = None if settings.compatibility_base == "off" else settings.compatibility_base
        if document is None or document.kind != NATIVE or (not settings.pytorch_format_check and base is None):
            return
        text = document.text
        work = self.editing.submit(uri, editing.run_checks, text, document.path, settings.pytorch_format_check, base)
        asyncio.ensure_future(self._editing_checked(uri, asyncio.wrap_future(work)))

    async def _editing_checked(self, uri: str, work: asyncio.Future) -> None:
        try:
            result = await work
        except Exception as exc:  # a worker that died: the other diagnostics go on
            self.report_failure(f"checking {uri}'s format and compatibility", exc)
            return
        document = self.model.document(uri)
        if document is None or document.text != result.text or not self.editing.store(uri, result):
            return
        if self.pulls:
            self.workspace_diagnostic_refresh(None)
        else:
            self.schedule(uri, 0)

    async def begin_progress(self, kind: str, begin: types.WorkDoneProgressBegin) -> str | None:
        """A work-done progress token (opgen-<kind>-...) begun with `begin`; None when the client takes none."""
        if not self.client.work_done_progress:
            return None
        token = f"opgen-{kind}-{uuid.uuid4().hex[:8]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
        except Exception:  # the client refused: the work goes on without progress
            return None
        self.work_done_progress.begin(token, begin)
        return token

    def recheck_stale(self, kinds: tuple[str, ...] = (NATIVE, *AGAINST_NATIVE)) -> None:
        """After tags, native_functions.yaml, files on disk or settings changed: re-check the documents of
        these kinds whose inputs changed."""
        stale = [uri for kind in kinds for uri in self.model.stale(kind)]
        if not stale:
            return
        if self.client.inlay_hint_refresh and any(getattr(self.model.document(uri), "kind", None) == NATIVE
                                                  for uri in stale):
            # (a kernel's "missing" may have changed; a client that answers with an error: nothing to do)
            self.workspace_inlay_hint_refresh(None).add_done_callback(lambda f: f.cancelled() or f.exception())
        if self.pulls:
            self.workspace_diagnostic_refresh(None)
            return
        for uri in stale:
            self.schedule(uri)

    # ------------------------------------------------------------ documents

    def sync(self, uri: str, opened: bool) -> None:
        document = self.workspace.get_text_document(uri)
        old = self.model.document(uri)
        if opened or old is None:
            new = self.model.open(uri, fs_path(uri), document.source, document.version)
        else:
            new = self.model.change(uri, document.source, document.version)
        self.schedule(uri, 0 if opened else None)
        self.announce_release(uri)
        kinds = (new.kind, old.kind if old is not None else None)
        if TAGS in kinds:
            self.recheck_stale()
        elif NATIVE in kinds or BACKEND not in kinds:
            # Another file a backend check reads from the editor (a lazy yaml's shape-inference header): the
            # backends whose analysis it changed (no other: C++ sources count when saved).
            self.recheck_stale(AGAINST_NATIVE)

    def closed(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.analyses.forget(uri)
        self.editing.forget(uri)
        document = self.model.close(uri)
        self._announced.pop(uri, None)
        if uri in self._published and not self.pulls:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self._published.discard(uri)
        self._release_memory_later()
        if document is not None and document.kind in (TAGS, NATIVE):
            self.recheck_stale()
        elif document is not None and document.kind != BACKEND:  # its file's text counts again (see sync)
            self.recheck_stale(AGAINST_NATIVE)

    def _release_memory_later(self) -> None:
        """After the last of a run of closes (a second without one), give what they freed back to the system."""
        if self._release is not None:
            self._release.cancel()
        try:
            self._release = asyncio.get_running_loop().call_later(RELEASE_DELAY_S, self._release_memory)
        except RuntimeError:  # no event loop (a test driving the server directly)
            self._release_memory()

    def _release_memory(self) -> None:
        """Release once the analysis thread has finished what was queued before (an analysis of a document closed
        meanwhile frees its model only when it ends, and what it frees after the trim stays in the heap)."""
        self._release = None
        try:
            barrier = asyncio.get_running_loop().run_in_executor(self._executor, _nothing)
        except RuntimeError:  # no event loop (a test driving the server directly), or the executor is shut down
            self._release_now()
            return
        # (its callbacks run on the loop after those of the analyses queued before it, which drop their results)
        barrier.add_done_callback(lambda _: self._release_now())

    def _release_now(self) -> None:
        # (none open: the process-wide memos go too, since they would keep the first documents' values for good)
        release_freed_memory(no_document_open=not self.model.documents())

    def shutdown_work(self) -> None:
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()
        if self.model.kernels.task is not None:
            self.model.kernels.task.cancel()
        self.kernel_executor.shutdown(wait=False, cancel_futures=True)
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.command_executor.shutdown(wait=False, cancel_futures=True)
        self.editing.shutdown()

    def external_backends(self) -> dict[str, list[str]]:
        """Op name -> the backends whose open backend yaml lists it (from their latest analyses)."""
        out: dict[str, list[str]] = {}
        for document in self.model.documents(BACKEND):
            analysis = self.model.latest(document.uri)
            backend = analysis.backend if analysis is not None else None
            if backend is None or backend.yaml is None or not isinstance(backend.yaml.backend.value, str):
                continue
            name = backend.yaml.backend.value
            for item in backend.yaml.forward:
                if item.text:
                    out.setdefault(item.text, []).append(name)
            for item in backend.yaml.autograd:
                if item.text:
                    out.setdefault(item.text, []).append(f"Autograd{name}")
        return out


Handler = Callable[[Any], Any]


def guarded(server: OpgenLanguageServer, what: str, empty: Callable[[], Any] = lambda: None
            ) -> Callable[[Handler], Handler]:
    """Run a handler so that an exception is logged and answered with `empty()` instead of failing."""
    def wrap(fn: Handler) -> Handler:
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(params: Any) -> Any:
                try:
                    return await fn(params)
                except JsonRpcException:  # an answer of its own (a rename refused, with the reason)
                    raise
                except Exception as exc:
                    server.report_failure(what, exc)
                    return empty()
            return run_async

        @functools.wraps(fn)
        def run(params: Any) -> Any:
            try:
                return fn(params)
            except JsonRpcException:
                raise
            except Exception as exc:
                server.report_failure(what, exc)
                return empty()
        return run
    return wrap


def create_server(generators: Generators) -> OpgenLanguageServer:
    """The server with its handlers: the lifecycle, document sync, the queries of one document, the rest; its
    generation commands run `generators` (opgen_lsp.serve gives codegen's)."""
    server = OpgenLanguageServer(generators)
    _register_lifecycle(server)
    _register_sync(server)
    for query in DOCUMENT_QUERIES:
        server.feature(query.method, query.options)(guarded(server, query.what, query.empty)(
            _document_query(server, query.answer, query.empty)))
    _register_workspace_requests(server)
    _register_commands(server)
    return server


def _register_lifecycle(server: OpgenLanguageServer) -> None:
    feature = server.feature

    @feature(types.INITIALIZE)
    @guarded(server, "initialize")
    def initialize(params: types.InitializeParams) -> None:
        if not use_client_lines(server.workspace):  # edits placed on LSP lines, not str.splitlines's
            server.warn("opgen: this pygls cannot be told how the LSP ends lines; edits after a form feed, NEL or "
                        "LS character may land in the wrong place")
        watchdog.watch(params.process_id)
        server.client = features.Client.of(params.capabilities, Encoding.of(server.workspace.position_encoding),
                                           params.initialization_options)
        server.model.root = usable_path(server.workspace.root_path)
        server.initialization_options = params.initialization_options
        server.apply_settings(params.initialization_options)

    @feature(types.INITIALIZED)
    @guarded(server, "initialized")
    async def initialized(params: types.InitializedParams) -> None:
        try:
            await server.pull_configuration()
        finally:
            server.configured.set()
        kernels.configure(server)
        kernels.start(server)
        server.warm_up()
        await server.watch_files()
        await server.register_virtual_documents()

    @feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded(server, "configuration change")
    async def configuration_changed(params: types.DidChangeConfigurationParams) -> None:
        if server.client.configuration:
            await server.pull_configuration()
        elif isinstance(params.settings, dict):
            server.apply_settings(server.initialization_options, params.settings.get(SECTION))

    @feature(types.SHUTDOWN)
    @guarded(server, "shutdown")
    def shutdown(params: None) -> None:
        server.shutdown_work()


def _register_sync(server: OpgenLanguageServer) -> None:
    """Document sync, and the diagnostics of the documents as they are now (pulled; else pushed: `schedule`)."""
    feature = server.feature

    @feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded(server, "didOpen")
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        server.sync(params.text_document.uri, opened=True)
        server.run_editing_checks(params.text_document.uri)

    @feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(server, "didChange")
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.sync(params.text_document.uri, opened=False)

    @feature(types.TEXT_DOCUMENT_DID_SAVE)
    @guarded(server, "didSave")
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        # A tags.yaml read from disk may have changed; a saved C++ file may define kernels.
        await server.files_changed([p for p in [fs_path(params.text_document.uri)] if p])
        server.run_editing_checks(params.text_document.uri)

    @feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded(server, "didChangeWatchedFiles")
    async def watched_files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        await server.files_changed([p for p in map(fs_path, (c.uri for c in params.changes)) if p])

    @feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded(server, "didClose")
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.closed(params.text_document.uri)

    @feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
             types.DiagnosticOptions(identifier="opgen", inter_file_dependencies=True, workspace_diagnostics=False))
    @guarded(server, "diagnostics", lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    async def pull_diagnostics(params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        if not server.pulls:  # this client's diagnostics are pushed (see `pulls`): one list, not two
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        analysis = await server.analysis(params.text_document.uri)
        extra = server.editing_items(analysis) if analysis is not None else []
        return features.diagnostic_report(analysis, params.previous_result_id, server.client, extra)


# ------------------------------------------------------------ queries of one document's analysis

Answer = Callable[[OpgenLanguageServer, Analysis, Any], Any]


class DocumentQuery(NamedTuple):
    """A request about one document: answered from its analysis, `empty()` when it has none (closed)."""

    method: str
    what: str  # as the log names it when it fails
    empty: Callable[[], Any]
    answer: Answer
    options: Any = None  # the capability's options, when it has some


def _document_query(server: OpgenLanguageServer, answer: Answer, empty: Callable[[], Any]) -> Handler:
    async def handler(params: Any) -> Any:
        analysis = await server.analysis(params.text_document.uri)
        if analysis is None:
            return empty()
        found = answer(server, analysis, params)
        return await found if inspect.isawaitable(found) else found  # (answers that read many files: off the loop)
    return handler


def _hover(server: OpgenLanguageServer, analysis: Analysis, params: types.HoverParams) -> types.Hover | None:
    if server.settings.testing.fail_hover:
        raise RuntimeError("hover failed on purpose (testing.failHover)")
    document = analysis.document
    return features.hover(analysis, params.position, server.client,
                          lambda cls, kernel: server.model.kernel_places(document, cls, kernel),
                          server.kernel_context(), server.model.release_for(document.path).label)


def _definition(server: OpgenLanguageServer, analysis: Analysis, params: types.DefinitionParams
                ) -> types.Location | list[types.Location] | None:
    return features.definition(analysis, params.position, server.client, server.kernel_context()) \
        or derivatives_lsp.native_definition(server.model, analysis, params.position, server.client)


async def _references(server: OpgenLanguageServer, analysis: Analysis, params: types.ReferenceParams
                      ) -> list[types.Location]:
    """Workspace-wide for an operator, overload or kernel (the files are read on the analysis thread); else (a
    derivatives formula's users) the document's own."""
    found = await asyncio.wrap_future(server.analysis_executor.submit(
        rename_lsp.references, server.model, analysis, params.position, params.context.include_declaration,
        server.client.encoding))
    if found is not None:
        return found
    return features.references(analysis, params.position, params.context.include_declaration, server.client)


async def _rename(server: OpgenLanguageServer, analysis: Analysis, params: types.RenameParams
                  ) -> types.WorkspaceEdit:
    return await asyncio.wrap_future(server.analysis_executor.submit(
        rename_lsp.rename, server.model, analysis, params.position, params.new_name, server.client.encoding))


def _code_lens(server: OpgenLanguageServer, analysis: Analysis, params: types.CodeLensParams
               ) -> list[types.CodeLens]:
    if not server.settings.code_lens:
        return []
    return features.code_lenses(analysis, server.external_backends(), server.client) \
        + derivatives_lsp.native_lenses(server.model, analysis, server.client)


def _no_completions() -> types.CompletionList:
    return types.CompletionList(is_incomplete=False, items=[])


def _no_tokens() -> types.SemanticTokens:
    return types.SemanticTokens(data=[])


def _none() -> None:
    return None


DOCUMENT_QUERIES = (
    DocumentQuery(types.TEXT_DOCUMENT_HOVER, "hover", _none, _hover),
    DocumentQuery(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, "documentSymbol", list,
                  lambda server, analysis, params: features.document_symbols(analysis, server.client)),
    DocumentQuery(types.TEXT_DOCUMENT_FOLDING_RANGE, "foldingRange", list,
                  lambda server, analysis, params: features.folding_ranges(analysis, server.client)),
    DocumentQuery(types.TEXT_DOCUMENT_COMPLETION, "completion", _no_completions,
                  lambda server, analysis, params: features.completion(analysis, params.position, server.client),
                  types.CompletionOptions(trigger_characters=COMPLETION_TRIGGERS)),
    DocumentQuery(types.TEXT_DOCUMENT_DEFINITION, "definition", _none, _definition),
    DocumentQuery(types.TEXT_DOCUMENT_REFERENCES, "references", list, _references),
    DocumentQuery(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, "documentHighlight", list,
                  lambda server, analysis, params: rename_lsp.highlights(analysis, params.position,
                                                                         server.client.encoding)),
    DocumentQuery(types.TEXT_DOCUMENT_PREPARE_RENAME, "prepareRename", _none,
                  lambda server, analysis, params: rename_lsp.prepare(analysis, params.position,
                                                                      server.client.encoding)),
    DocumentQuery(types.TEXT_DOCUMENT_RENAME, "rename", _none, _rename, types.RenameOptions(prepare_provider=True)),
    DocumentQuery(types.TEXT_DOCUMENT_INLAY_HINT, "inlayHint", list,
                  lambda server, analysis, params: navigation.inlay_hints(
                      analysis, params.range, server.model.kernels, server.model.root, server.client.encoding),
                  types.InlayHintOptions(resolve_provider=False)),
    DocumentQuery(types.TEXT_DOCUMENT_SELECTION_RANGE, "selectionRange", list,
                  lambda server, analysis, params: navigation.selection_ranges(analysis, params.positions,
                                                                               server.client.encoding)),
    DocumentQuery(types.TEXT_DOCUMENT_DOCUMENT_LINK, "documentLink", list,
                  lambda server, analysis, params: navigation.document_links(analysis, server.model.kernels,
                                                                             server.client.encoding),
                  types.DocumentLinkOptions(resolve_provider=False)),
    DocumentQuery(types.TEXT_DOCUMENT_SIGNATURE_HELP, "signatureHelp", _none,
                  lambda server, analysis, params: features.signature_help(analysis, params.position, server.client),
                  types.SignatureHelpOptions(trigger_characters=SIGNATURE_TRIGGERS, retrigger_characters=[" "])),
    DocumentQuery(types.TEXT_DOCUMENT_CODE_ACTION, "codeAction", list,
                  lambda server, analysis, params: features.code_actions(analysis, params.range, server.client,
                                                                         server.kernel_context())
                  + editing.code_actions(analysis.uri, analysis.lines, analysis.document.text,
                                         server.editing.result(analysis.uri), params.range, server.client.encoding)
                  + scaffold.code_actions(analysis, params.range, server.client),
                  types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix,
                                                             types.CodeActionKind.RefactorRewrite])),
    DocumentQuery(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, "semanticTokens", _no_tokens,
                  lambda server, analysis, params: features.semantic_tokens(analysis, server.client),
                  features.SEMANTIC_LEGEND),
    DocumentQuery(types.TEXT_DOCUMENT_CODE_LENS, "codeLens", list, _code_lens,
                  types.CodeLensOptions(resolve_provider=False)),
)


def _register_workspace_requests(server: OpgenLanguageServer) -> None:
    feature = server.feature

    @feature(types.TEXT_DOCUMENT_FORMATTING, types.DocumentFormattingOptions())
    @guarded(server, "formatting", list)
    async def formatting(params: types.DocumentFormattingParams) -> list[types.TextEdit]:
        """native_functions.yaml as PyTorch's NATIVEFUNCTIONS lint would replace it (other files: no edits)."""
        uri = params.text_document.uri
        document = server.model.document(uri)
        if document is None or document.kind != NATIVE:
            return []
        text = document.text
        formatted = server.editing.formatted_for(uri, text)
        if formatted is None:
            formatted = await asyncio.wrap_future(server.editing.executor().submit(editing.format_only, text))
        if isinstance(formatted, LoadFailure):
            server.warn(f"opgen: ruamel.yaml cannot read {document.path or uri}, so PyTorch's NATIVEFUNCTIONS lint "
                        f"fails on it: {formatted.message}")
            return []
        current = server.model.document(uri)
        if current is None or current.text != text:  # edited meanwhile: these edits would land on other lines
            return []
        return editing.edits(convert.Lines(text), text, formatted, server.client.encoding)

    @feature(types.WORKSPACE_SYMBOL)
    @guarded(server, "workspaceSymbol", list)
    async def workspace_symbols(params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        # Documents whose analysis was dropped (beyond opgen.retainedAnalyses) are not parsed again for a search.
        analyses = [await server.analysis(d.uri) for d in server.model.documents(NATIVE) if not server.model.dropped(d.uri)]
        return features.workspace_symbols([a for a in analyses if a is not None], params.query,
                                          server.settings.max_workspace_symbols, server.client)

    @feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT)
    @guarded(server, "textDocumentContent", lambda: types.TextDocumentContentResult(text=""))
    def text_document_content(params: types.TextDocumentContentParams) -> types.TextDocumentContentResult:
        return types.TextDocumentContentResult(text=server.virtual_documents.get(params.uri) or "")


def _register_commands(server: OpgenLanguageServer) -> None:
    def command(name: str, run: Callable[Concatenate[OpgenLanguageServer, ...], Awaitable[dict[str, Any]]]) -> None:
        async def handler(ls: OpgenLanguageServer, *args: Any) -> dict[str, Any]:
            try:
                return await run(server, *args)
            except commands.CommandError as exc:
                server.warn(f"opgen: {name}: {exc}")
                return {"error": str(exc)}
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                server.report_failure(name, exc)
                return {"error": f"{type(exc).__name__}: {exc}"}
        server.command(name)(handler)

    command(commands.GENERATE, commands.generate)
    command(commands.SHOW_GENERATED, commands.show_generated)
    command(scaffold.SCAFFOLD, scaffold.run)
