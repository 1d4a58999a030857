"""The server's model of the open documents and their analyses.

- Every open document is classified (native_functions.yaml, tags.yaml, backend
  yaml, other) by name, then by its first entry; edits may change its kind.
- A native_functions.yaml is checked against a tags.yaml: the one in the
  `tagsPath` setting, else the one beside it, taken from the editor when it
  is open there and from disk otherwise.
- Each native document keeps one NativeParser for as long as it is open, so a
  re-check after an edit re-lowers only the entries the edit touched.
- A backend yaml is checked against a native_functions.yaml: the one in the
  `nativeFunctionsPath` setting, else an open one, else the one beside it, else
  aten/src/ATen/native/native_functions.yaml in the workspace, else the copy
  inside the installed torch. Open documents override files on disk; a file
  read from disk is cached by its modification time and size.
- An analysis is made for a key: the document's generation (bumped by every
  change) and, for native documents, where its tags come from and which
  version of them. An analysis whose key is not the document's current key is
  stale.

`analyse` does the heavy work and is meant to run on one worker thread; the
other methods are cheap and run on the event loop. Nothing here knows LSP.
"""

from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis import backend as backend_query
from ..analysis.check import (
    BACKEND,
    DEPRECATED,
    DERIVATIVES,
    NATIVE,
    SELECTION,
    TAGS,
    classify,
    installed_native_functions,
    own_file_diagnostics,
)
from ..analysis.lazy import checkout_shape_header
from ..analysis.shims import ShimCheck
from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..index.backend import BackendSnapshot, check_backend
from ..index.derivatives import DeprecatedParser, DerivativesParser, tree_native_functions
from ..index.documents import SharedEntries
from ..index.inputs import InputError, load_release
from ..index.native import NativeParser, NativeSnapshot, TagsParser, TagsSnapshot
from ..index.own_ops import own_backend_keys
from ..input_file import UnreadableFile, read_text
from ..model.selection import read_selection
from ..releases import (
    Fit,
    Release,
    Resolved,
    as_patched_by_backend,
    release_diagnostics,
    resolve_for,
    resolve_for_autograd,
)
from ..releases.tree_release import tree_diagnostics
from ..text import Span, as_python_reads
from .config import Settings
from .convert import Lines
from .derivatives import NativeDerivatives
from .kernels import KernelState, MissingKernels
from .retained import RetainedAnalyses

if TYPE_CHECKING:  # (loaded on first use)
    from ..analysis.autograd.load import DerivativesCheck, DerivativesChecker
    from ..analysis.lazy.shape import ShapeHeader


@record
class OpenDocument:
    uri: str
    path: str | None  # None for documents that are not files (untitled:...)
    kind: str  # analysis.check: native_functions / tags / backend / unknown
    text: str
    version: int | None
    generation: int


@record
class TagsInput:
    """Where a native document's tags come from, and a key that changes when they do."""

    key: tuple
    path: str | None  # the tags.yaml used or expected (None: no place to look)
    text: str | None = None  # the text of an open tags document


@record
class NativeInput:
    """Where a backend document's native_functions.yaml comes from, and a key that changes when it does."""

    key: tuple
    path: str | None
    uri: str | None  # an open document's uri (else the file's)
    why: str = ""  # when there is none: why


@dataclass(frozen=True)
class NativeSource:
    """The native_functions.yaml a backend document was checked against, with what it takes to point into it."""

    uri: str
    text: str
    snapshot: NativeSnapshot
    tags: TagsSnapshot | None

    @functools.cached_property
    def lines(self) -> Lines:
        return Lines(self.text)


@dataclass(frozen=True)
class Analysis:
    document: OpenDocument
    key: tuple
    diagnostics: tuple[Diagnostic, ...]
    native: NativeSnapshot | None = None
    # A native document: the tags it was checked against. A tags document: its own.
    tags: TagsSnapshot | None = None
    # A backend document: its snapshot and the native_functions.yaml it was checked against.
    backend: BackendSnapshot | None = None
    native_source: NativeSource | None = None
    # A lazy backend document: the shape-inference header it was checked against (None: none is known).
    shape_header: ShapeHeader | None = None
    # The opgen.lazy.preset the hover's generated lazy code follows.
    lazy_preset: str = "auto"
    # A derivatives.yaml: its check against native_source.
    derivatives: DerivativesCheck | None = None

    @functools.cached_property
    def lines(self) -> Lines:
        """The analysed text's lines, for converting columns to and from the client's encoding."""
        return Lines(self.document.text)

    @property
    def uri(self) -> str:
        return self.document.uri

    @property
    def version(self) -> int | None:
        return self.document.version


def _norm(path: str) -> str:
    return os.path.normcase(os.path.normpath(os.path.abspath(path)))


def _file_key(path: str) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


def _read_text(path: str) -> str | None:
    try:
        return read_text(path)
    except UnreadableFile:
        return None


# The place of native_functions.yaml inside a PyTorch checkout.
WORKSPACE_NATIVE = os.path.join("aten", "src", "ATen", "native", "native_functions.yaml")
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".mm")


class Workspace:
    def __init__(self, root: str | None = None, settings: Settings | None = None) -> None:
        self.root = root
        self.settings = settings or Settings()
        self._documents: dict[str, OpenDocument] = {}
        self._by_path: dict[str, str] = {}  # normalised path -> uri of open documents
        self._generations = itertools.count(1)
        self._native_parsers: dict[str, NativeParser] = {}
        # The entry caches the parsers of documents that lower entries alike share: copies of one file (or of
        # files that differ in a few entries) share one model. A cache goes with the last parser that uses it.
        self._shared_entries = SharedEntries()
        self._releases: dict[tuple, Resolved] = {}
        self._autograd_releases: dict[tuple, Resolved] = {}  # of derivatives.yaml / deprecated.yaml documents
        self._tree_checks: dict[tuple, tuple[Diagnostic, ...]] = {}  # (path, release) -> OPG965/966, read once like the release
        self._tags_parsers: dict[str, TagsParser] = {}  # by path (uri for documents that are not files)
        self._tags_snapshots: dict[str, tuple[tuple, TagsSnapshot | None, str | None]] = {}
        # The analyses of the most recently used documents, at most settings.retained_analyses of them.
        self._analyses: RetainedAnalyses[Analysis] = RetainedAnalyses(self.settings.retained_analyses)
        # native_functions.yaml files read from disk for backend documents: path -> (key, source).
        self._disk_natives: dict[str, tuple[tuple, NativeSource]] = {}
        # C++ files scanned for kernel definitions: (path, class) -> (file key, definitions).
        self._kernel_files: dict[tuple[str, str], tuple[tuple, dict[str, list[tuple[int, int]]]]] = {}
        # The kernel index of the workspace's C++ sources (missing kernels in native documents).
        self.kernels = KernelState()
        # Bumped when a C++ file is saved or changes on disk: backend documents re-check their kernels.
        self.cpp_generation = 0
        # Expected kernel declarations, memoized per (function, backend index) (the codegen is pure).
        self._declarations: dict[tuple, str] = {}
        # Missing kernels of each native document, remembered per op between re-checks.
        self._missing_kernels: dict[str, MissingKernels] = {}
        # What gen.py's AOTI shim generator fails on (OPG960), its verdicts kept per native document.
        self._shim_checks: dict[str, ShimCheck] = {}
        # Each open derivatives.yaml: its parser and checker (analysis.autograd.load), kept for incremental re-checks.
        self._derivatives: dict[str, tuple[DerivativesParser, DerivativesChecker]] = {}
        # The derivatives.yaml of a native document's tree, for its lenses and go to definition.
        self.native_derivatives = NativeDerivatives()
        # opgen.upgradeTarget's release files, read once: version -> its snapshot, or why there is none.
        self._target_releases: dict[str, NativeSnapshot | str] = {}

    # ------------------------------------------------------------ documents (event loop)

    def open(self, uri: str, path: str | None, text: str, version: int | None) -> OpenDocument:
        # As torchgen reads the file: a lone '\r' ends a line (the client's lines and columns are the same).
        text = as_python_reads(text)
        kind = classify(path or "", text)
        document = OpenDocument(uri, path, kind, text, version, next(self._generations))
        self._documents[uri] = document
        if path is not None:
            self._by_path[_norm(path)] = uri
        return document

    def change(self, uri: str, text: str, version: int | None) -> OpenDocument:
        old = self._documents.get(uri)
        return self.open(uri, old.path if old is not None else None, text, version)

    def close(self, uri: str) -> OpenDocument | None:
        document = self._documents.pop(uri, None)
        if document is not None and document.path is not None:
            self._by_path.pop(_norm(document.path), None)
        self._drop_analysis_state(uri)
        if document is not None:
            self._tags_parsers.pop(document.path or uri, None)
            self._forget_inputs(document)
        self._analyses.forget(uri)
        return document

    def _drop_analysis_state(self, uri: str) -> None:
        """What only speeds up the document's next analysis (its parser, its kept verdicts)."""
        self._native_parsers.pop(uri, None)
        self._missing_kernels.pop(uri, None)
        self._shim_checks.pop(uri, None)
        self._derivatives.pop(uri, None)

    def _forget_inputs(self, closed: OpenDocument) -> None:
        """What was read for a closed document and no open one uses: its release, its tree's check, its tags."""
        path = closed.path
        if path is not None:
            for memo in (self._releases, self._tree_checks, self._autograd_releases):
                for key in [k for k in list(memo) if k[0] == path]:  # list(): analyses add to it on their thread
                    del memo[key]
        used = {self.tags_location(d) for d in self.documents(NATIVE)} | {d.path or d.uri for d in self.documents(TAGS)}
        for tags_path in [p for p in list(self._tags_snapshots) if p not in used]:
            del self._tags_snapshots[tags_path]
            self._tags_parsers.pop(tags_path, None)

    def document(self, uri: str) -> OpenDocument | None:
        return self._documents.get(uri)

    def documents(self, kind: str | None = None) -> list[OpenDocument]:
        return [d for d in self._documents.values() if kind is None or d.kind == kind]

    # ------------------------------------------------------------ tags of a native document

    def tags_location(self, document: OpenDocument) -> str | None:
        configured = self.settings.tags_path
        if configured:
            path = os.path.expanduser(configured)
            if not os.path.isabs(path) and self.root:
                path = os.path.join(self.root, path)
            return path
        if document.path is None:
            return None
        return os.path.join(os.path.dirname(document.path), "tags.yaml")

    def tags_input(self, document: OpenDocument) -> TagsInput:
        path = self.tags_location(document)
        if path is None:
            # Not a file: use the one open tags document, if there is exactly one.
            open_tags = self.documents(TAGS)
            if len(open_tags) == 1:
                t = open_tags[0]
                return TagsInput(("open", t.uri, t.generation), t.path or t.uri, t.text)
            return TagsInput(("none",), None)
        uri = self._by_path.get(_norm(path))
        if uri is not None:
            t = self._documents[uri]
            return TagsInput(("open", uri, t.generation), path, t.text)
        try:
            stat = os.stat(path)
        except OSError:
            return TagsInput(("none", path), path)
        return TagsInput(("disk", path, stat.st_mtime_ns, stat.st_size), path)

    def _tags(self, source: TagsInput) -> tuple[TagsSnapshot | None, str | None]:
        """The tags snapshot for `source` and, when there is none, why."""
        if source.path is None:
            return None, ("no tags.yaml is known for this document (it is not a file on disk); open a "
                          "tags.yaml or set opgen.tagsPath so that tags can be checked")
        cached = self._tags_snapshots.get(source.path)
        if cached is not None and cached[0] == source.key:
            return cached[1], cached[2]
        snapshot, problem = None, None
        text = source.text
        if text is None and source.key[0] == "disk":
            try:
                text = read_text(source.path)
            except UnreadableFile as exc:
                problem = f"cannot read {exc}; tags cannot be checked"
        elif text is None:
            problem = f"no tags.yaml found at {source.path}; open one or set opgen.tagsPath so that tags can be checked"
        if text is not None:
            parser = self._tags_parsers.setdefault(source.path, TagsParser(self._shared_entries))
            snapshot = parser.parse(text)
        self._tags_snapshots[source.path] = (source.key, snapshot, problem)
        return snapshot, problem

    # ------------------------------------------------------------ the native_functions.yaml of a backend document

    def _absolute(self, path: str) -> str:
        path = os.path.expanduser(path)
        if not os.path.isabs(path) and self.root:
            path = os.path.join(self.root, path)
        return path

    absolute = _absolute

    def text_of(self, path: str) -> tuple[str | None, str | None]:
        """(uri of the open document, text) of a file: the editor's text when it is open, else the file's."""
        uri = self._by_path.get(_norm(path))
        if uri is not None:
            return uri, self._documents[uri].text
        return None, _read_text(path)

    def native_location(self, document: OpenDocument) -> tuple[str | None, str | None, str]:
        """(open uri, path, why-none) of the native_functions.yaml a backend document (or a derivatives.yaml
        outside a PyTorch tree) is checked against; a derivatives.yaml in a tree takes the tree's."""
        in_tree = tree_native_functions(document.path) \
            if document.kind in (DERIVATIVES, DEPRECATED) and document.path else None
        if in_tree is not None:
            return self._by_path.get(_norm(in_tree)), in_tree, ""
        configured = self.settings.native_functions_path
        if configured:
            path = self._absolute(configured)
            return self._by_path.get(_norm(path)), path, f"no native_functions.yaml at {path} (opgen.nativeFunctionsPath)"
        open_native = self.documents(NATIVE)
        if open_native:
            return open_native[0].uri, open_native[0].path, ""
        candidates = []
        if document.path is not None:
            candidates.append(os.path.join(os.path.dirname(document.path), "native_functions.yaml"))
        if self.root:
            candidates.append(os.path.join(self.root, WORKSPACE_NATIVE))
        for path in candidates:
            if os.path.isfile(path):
                return None, path, ""
        installed = installed_native_functions()
        if installed is not None:
            return None, installed[0], ""
        return None, None, ("no native_functions.yaml to resolve the op names against: open one, set "
                            "opgen.nativeFunctionsPath, or install torch (its torchgen ships one)")

    def native_input(self, document: OpenDocument) -> NativeInput:
        uri, path, why = self.native_location(document)
        if uri is not None:
            return NativeInput(("open", uri) + (self.key(uri) or ()), path, uri)
        if path is None:
            return NativeInput(("none",), None, None, why)
        key = _file_key(path)
        if key is None:
            return NativeInput(("none", path), path, None, why or f"cannot read {path}")
        tags_path = os.path.join(os.path.dirname(path), "tags.yaml")
        return NativeInput(("disk", path) + key + (_file_key(tags_path),), path, None)

    def _native_source(self, source: NativeInput) -> NativeSource | None:
        if source.uri is not None:
            document = self._documents.get(source.uri)
            if document is None or document.kind != NATIVE:
                return None
            analysis = self.current(source.uri) or self.analyse(source.uri)
            if analysis is None or analysis.native is None:
                return None
            return NativeSource(source.uri, document.text, analysis.native, analysis.tags)
        if source.path is None or source.key[0] != "disk":
            return None
        cached = self._disk_natives.get(source.path)
        if cached is not None and cached[0] == source.key:
            return cached[1]
        text = _read_text(source.path)
        if text is None:
            return None
        tags_text = _read_text(os.path.join(os.path.dirname(source.path), "tags.yaml"))
        tags = TagsParser().parse(tags_text) if tags_text is not None else None
        parser = NativeParser(release=self.release_for(source.path).release)
        snapshot = parser.parse(text, tags.names if tags is not None else frozenset())
        from pygls.uris import from_fs_path  # a file uri, the way the client spells them
        made = NativeSource(from_fs_path(source.path) or source.path, text, snapshot, tags)
        self._disk_natives[source.path] = (source.key, made)
        return made

    # ------------------------------------------------------------ kernel definitions of a backend

    def impl_files(self, document: OpenDocument) -> list[str] | None:
        """The C++ files that hold the backend's kernels (None: none are known)."""
        roots = [self._absolute(p) for p in self.settings.impl_paths]
        if not roots and document.path is not None:
            roots = [os.path.dirname(document.path)]
        files: list[str] = []
        for root in roots:
            if os.path.isfile(root):
                files.append(root)
            elif os.path.isdir(root):
                top = not self.settings.impl_paths  # the yaml's own folder: not its subfolders
                for folder, dirs, names in os.walk(root):
                    dirs[:] = [] if top else sorted(d for d in dirs if not d.startswith("."))
                    files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(CPP_SUFFIXES))
        return files or None

    def kernel_places(self, document: OpenDocument, class_name: str, kernel: str
                      ) -> list[backend_query.KernelDefinition] | None:
        files = self.impl_files(document)
        if files is None:
            return None
        out: list[backend_query.KernelDefinition] = []
        for path in files:
            uri = self._by_path.get(_norm(path))
            if uri is not None:  # open in the editor: its text there
                text: str | None = self._documents[uri].text
                key: tuple | None = ("open", self._documents[uri].generation)
            else:
                key = _file_key(path)
                text = None
            if key is None:
                continue
            cached = self._kernel_files.get((path, class_name))
            if cached is None or cached[0] != key:
                text = text if text is not None else _read_text(path)
                if text is None:
                    continue
                cached = (key, backend_query.kernel_definitions(text, class_name))
                self._kernel_files[(path, class_name)] = cached
            out.extend(backend_query.KernelDefinition(path, line, col) for line, col in cached[1].get(kernel, ()))
        return out

    # ------------------------------------------------------------ warming up

    def warm(self, uri: str, path: str) -> bool:
        """Parse a native_functions.yaml on disk before it is opened (worker thread), with the parser its
        document will use: opening it then re-checks only the entries that differ. False when it is open
        already or cannot be read."""
        if uri in self._documents or uri in self._native_parsers:
            return False
        text = _read_text(path)
        if text is None:
            return False
        placeholder = OpenDocument(uri, path, NATIVE, text, None, 0)
        tags, _ = self._tags(self.tags_input(placeholder))
        parser = NativeParser(release=self.release_for(path).release, shared=self._shared_entries)
        parser.parse(text, tags.names if tags is not None else frozenset())
        # Opened meanwhile or not: analyses run on this same thread, so none has made a parser for it yet.
        self._native_parsers.setdefault(uri, parser)
        return True

    # ------------------------------------------------------------ the torch release

    def release_for(self, path: str | None) -> Resolved:
        """The torch release of a native_functions.yaml: opgen.torchVersion, else detected from its path
        (looked up once per path and setting)."""
        key = (path, self.settings.torch_version)
        found = self._releases.get(key)
        if found is None:
            found = self._releases[key] = resolve_for(path, self.settings.torch_version, "opgen.torchVersion")
        return found

    def autograd_release(self, document: OpenDocument) -> Resolved:
        """The torch release of a derivatives.yaml or deprecated.yaml: opgen.torchVersion, else its tree's,
        else that of the native_functions.yaml it is checked against."""
        native_path = self.native_location(document)[1]
        key = (document.path, native_path, self.settings.torch_version)
        found = self._autograd_releases.get(key)
        if found is None:
            found = self._autograd_releases[key] = resolve_for_autograd(
                document.path, native_path, self.settings.torch_version, "opgen.torchVersion")
        return found

    def _tree_diagnostics(self, path: str | None, resolved: Resolved) -> tuple[Diagnostic, ...]:
        """OPG965 / OPG966 when the tree's own files disagree with its release (looked up once per path and release)."""
        key = (path, resolved)
        found = self._tree_checks.get(key)
        if found is None:
            found = self._tree_checks[key] = tree_diagnostics(path, resolved)
        return found

    # ------------------------------------------------------------ analyses

    def key(self, uri: str) -> tuple | None:
        """The key an up-to-date analysis of the document has (None: the document is not open)."""
        document = self._documents.get(uri)
        if document is None:
            return None
        if document.kind == NATIVE:
            return (document.generation, self.tags_input(document).key, self.release_for(document.path)
                    ) + self.kernels.key()
        if document.kind == BACKEND:
            return self._backend_key(document, self.native_input(document))
        if document.kind in (DERIVATIVES, DEPRECATED):
            return (document.generation, self.native_input(document).key, self.autograd_release(document))
        return (document.generation,)

    def latest(self, uri: str) -> Analysis | None:
        """The last analysis made of the document, up to date or not."""
        return self._analyses.get(uri)

    def current(self, uri: str) -> Analysis | None:
        """The last analysis of the document if it is up to date."""
        analysis = self._analyses.get(uri)
        return analysis if analysis is not None and analysis.key == self.key(uri) else None

    def dropped(self, uri: str) -> bool:
        """The document's analysis was made for its current inputs, then dropped (beyond the bound on them)."""
        return self._analyses.get(uri, touch=False) is None and self._analyses.dropped_key(uri) == self.key(uri)

    def stale(self, kind: str | None = None) -> list[str]:
        """Open documents (of a kind) whose last analysis is out of date or missing (one made for the same key but
        no longer kept is not stale: it is made again when a request needs it)."""
        out = []
        for d in self.documents(kind):
            kept, key = self._analyses.get(d.uri, touch=False), self.key(d.uri)
            if (kept.key if kept is not None else self._analyses.dropped_key(d.uri)) != key:
                out.append(d.uri)
        return out

    def analyse(self, uri: str) -> Analysis | None:
        """Analyse the document as it is now (the heavy part; run it on one thread at a time)."""
        document = self._documents.get(uri)
        if document is None:
            return None
        if document.kind == NATIVE:
            source = self.tags_input(document)
            tags, problem = self._tags(source)
            resolved = self.release_for(document.path)
            backend_keys = own_backend_keys(document.text)  # a backend's own operator file: its patched torchgen
            release = as_patched_by_backend(resolved.release, backend_keys)
            parser = self._native_parsers.get(uri)
            if parser is None or parser.release is not release:
                parser = self._native_parsers[uri] = NativeParser(release=release, shared=self._shared_entries)
            native = parser.parse(document.text, tags.names if tags is not None else frozenset())
            # A release older than those known: its rules are not known, so the one diagnostic that says so.
            diagnostics = release_diagnostics(resolved) + self._tree_diagnostics(document.path, resolved) + (
                () if resolved.fit is Fit.OLDER else native.diagnostics)
            if backend_keys and resolved.fit is not Fit.OLDER:
                diagnostics += tuple(own_file_diagnostics(native, resolved.release.version))
            if problem is not None:
                diagnostics = (diag("OPG900", Span.point(0, 0), problem),) + diagnostics
            if document.path is not None and resolved.fit is not Fit.OLDER and not release.parse_only:
                diagnostics += tuple(self._shim_checks.setdefault(uri, ShimCheck())(document.path, native))
            kernels = self.kernels
            key = (document.generation, source.key, resolved) + kernels.key()
            if kernels.active:
                check = self._missing_kernels.setdefault(uri, MissingKernels())
                diagnostics += check(native, kernels.index, kernels.generation, kernels.severity,  # type: ignore[arg-type]
                                     lambda f, backend: self.declaration(f, backend, native.release),
                                     lambda f, backend: self.kernel_parameters(f, backend, native.release))
            analysis = Analysis(document, key, diagnostics, native, tags)
        elif document.kind == TAGS:
            tags_parser = self._tags_parsers.setdefault(document.path or uri, TagsParser(self._shared_entries))
            tags = tags_parser.parse(document.text)
            analysis = Analysis(document, (document.generation,), tags.diagnostics, None, tags)
        elif document.kind == BACKEND:
            analysis = self._analyse_backend(document)
        elif document.kind in (DERIVATIVES, DEPRECATED):
            analysis = self._analyse_derivatives(document)
        elif document.kind == SELECTION:
            analysis = Analysis(document, (document.generation,), tuple(read_selection(document.text)[1]))
        else:
            analysis = Analysis(document, (document.generation,), ())
        if self._documents.get(uri) is not None:
            self._analyses.limit = self.settings.retained_analyses
            for dropped in self._analyses.put(uri, analysis):
                self._drop_analysis_state(dropped)
        return analysis

    def _backend_key(self, document: OpenDocument, source: NativeInput) -> tuple:
        """What a backend document's analysis depends on: one definition for `key` and `_analyse_backend` (a
        mismatch makes every analysis look stale, and the server never publishes it)."""
        return (document.generation, source.key, self.cpp_generation, self.lazy_key(document),
                self.settings.upgrade_target)

    def _analyse_backend(self, document: OpenDocument) -> Analysis:
        source = self.native_input(document)
        native = self._native_source(source)
        key = self._backend_key(document, source)
        if native is None:
            why = source.why or f"cannot read the native_functions.yaml at {source.path}"
            return Analysis(document, key, (diag("OPG900", Span.point(0, 0), why),))
        snapshot = check_backend(document.text, native.snapshot, document.path or document.uri)
        diagnostics = snapshot.diagnostics + self._backend_kernels(document, snapshot, native) \
            + self._upgrade_check(document, snapshot, native)
        header, lazy = self._lazy_check(document, snapshot, native)
        return Analysis(document, key, diagnostics + lazy, backend=snapshot, native_source=native,
                        shape_header=header, lazy_preset=self.settings.lazy.preset)

    def target_release(self, version: str) -> NativeSnapshot | str:
        """opgen.upgradeTarget's release: its own native_functions.yaml, read once; or why it is not at hand."""
        found = self._target_releases.get(version)
        if found is None:
            try:
                found = load_release(version)
            except InputError as exc:
                found = str(exc)
            self._target_releases[version] = found
        return found

    def _upgrade_check(self, document: OpenDocument, snapshot: BackendSnapshot, native: NativeSource
                       ) -> tuple[Diagnostic, ...]:
        """OPG975 on each op that changes from the yaml's release to opgen.upgradeTarget's (OPG976: that release
        is not at hand)."""
        version = self.settings.upgrade_target
        if version is None or (snapshot.yaml is None and snapshot.vendor is None):
            return ()
        anchor = snapshot.yaml.anchor if snapshot.yaml is not None else _vendor_anchor(snapshot)
        target = self.target_release(version)
        if isinstance(target, str):
            return (diag("OPG976", anchor, f"opgen.upgradeTarget: {target}"),)
        if target.release is native.snapshot.release:
            return ()
        from ..analysis.upgrade import upgrade_diagnostics, upgrade_report  # loaded on first use

        report = upgrade_report(document.text, native.snapshot, target, document.path or document.uri)
        if report.problem and snapshot.vendor is not None:  # a vendor format not compared: said, not silent
            return (diag("OPG976", anchor, f"opgen.upgradeTarget: cannot compare: {report.problem}"),)
        return upgrade_diagnostics(report)

    def _analyse_derivatives(self, document: OpenDocument) -> Analysis:
        """A derivatives.yaml (deprecated.yaml) against its native_functions.yaml: what torchgen's autograd loader
        (Python binding generator) rejects."""
        from ..analysis.autograd.load import DerivativesChecker  # loaded on first use

        source = self.native_input(document)
        resolved = self.autograd_release(document)
        key = (document.generation, source.key, resolved)
        noted = release_diagnostics(resolved)
        if resolved.fit is Fit.OLDER:  # as for a native_functions.yaml: the one diagnostic that says so
            return Analysis(document, key, noted)
        native = self._native_source(source)
        why = source.why or f"cannot read the native_functions.yaml at {source.path}"
        if document.kind == DEPRECATED:
            found = DeprecatedParser(resolved.release).check(document.text, native.snapshot.functions) \
                if native is not None else (diag("OPG900", Span.point(0, 0), why),)
            return Analysis(document, key, noted + found, native_source=native)
        parser, checker = self._derivatives.setdefault(document.uri, (DerivativesParser(), DerivativesChecker()))
        parsed = parser.parse(document.text)
        if native is None:
            return Analysis(document, key, noted + (diag("OPG900", Span.point(0, 0), why),) + parsed.diagnostics)
        check = checker.check(parsed, native.snapshot.functions, resolved.release)  # type: ignore[attr-defined]
        return Analysis(document, key, noted + check.diagnostics, native_source=native, derivatives=check)

    # ------------------------------------------------------------ lazy backends (gen_lazy_tensor)

    def _configured_shape_header(self) -> str | None:
        configured = self.settings.lazy.shape_inference_header
        return self._absolute(configured) if configured else None

    def _checkout_folders(self, document: OpenDocument) -> list[str]:
        """Where a PyTorch checkout holding the document may be: the workspace root, the document's folder."""
        return [f for f in (self.root, os.path.dirname(document.path) if document.path else None) if f]

    def lazy_key(self, document: OpenDocument) -> tuple:
        """Changes with the lazy settings and with a header the lazy check may read (the setting's, the
        checkout's; the wheel's does not change)."""
        header = self._configured_shape_header() or checkout_shape_header(self._checkout_folders(document))
        return (self.settings.lazy, header, header and self._open_or_file_key(header))

    def _open_or_file_key(self, path: str) -> tuple | None:
        uri = self._by_path.get(_norm(path))
        return ("open", self._documents[uri].generation) if uri is not None else _file_key(path)

    def _lazy_check(self, document: OpenDocument, snapshot: BackendSnapshot, native: NativeSource
                    ) -> tuple[ShapeHeader | None, tuple[Diagnostic, ...]]:
        """The shape-inference header (when known) and what gen_lazy_tensor rejects (OPG535-537)."""
        resolved = snapshot.resolved
        if resolved is None or snapshot.has_errors:
            return None, ()
        from ..analysis.lazy.check import is_lazy_yaml, lazy_diagnostics, shape_header_path
        from ..analysis.lazy.shape import parse_shape_header

        if not is_lazy_yaml(resolved):
            return None, ()
        path = shape_header_path(resolved, self._configured_shape_header(), self._checkout_folders(document))
        header = None
        found: tuple[Diagnostic, ...] = ()
        if path is not None:
            text = self.text_of(path)[1]
            if text is None:
                found = (diag("OPG900", resolved.yaml.anchor, f"cannot read the shape-inference header {path} "
                              "(opgen.lazy.shapeInferenceHeader); compute_shape_ functions are not checked"),)
            else:
                header = parse_shape_header(path, text)
        return header, found + lazy_diagnostics(document.text, snapshot, native.snapshot.functions.groups, header,
                                                native.snapshot.release)

    def _backend_kernels(self, document: OpenDocument, snapshot: BackendSnapshot, native: NativeSource
                         ) -> tuple[Diagnostic, ...]:
        """Missing kernels of the backend (OPG530/531, on the yaml), as `generate-backend --impl-path` reports
        them, against the implementation files (open documents override the files on disk)."""
        if snapshot.resolved is None or snapshot.has_errors:
            return ()
        files = self.impl_files(document)
        if not files:
            return ()
        from ..analysis.backend_kernels import ImplFile, check_kernels  # loaded on first use

        impls = []
        for path in files:
            uri = self._by_path.get(_norm(path))
            text = self._documents[uri].text if uri is not None else _read_text(path)
            if text is not None:
                impls.append(ImplFile(path, text))
        found = check_kernels(snapshot.resolved, native.snapshot.functions, document.path or document.uri, impls,
                              native.snapshot.release.cpp_spelling)
        return tuple(d.diagnostic for d in found if d.path == (document.path or document.uri))

    def kernel_parameters(self, f, backend, release: Release) -> tuple[str, ...] | None:
        """The parameter types of that declaration in a release (the missing-kernel check tells overloads apart
        by them)."""
        from ..pieces.dest.native_declarations import kernel_parameter_types

        return kernel_parameter_types(f, backend, release.cpp_spelling)

    def declaration(self, f, backend, release: Release) -> str:
        """The kernel declaration the codegen gives the function for a backend (NativeFunctions.h) in a release."""
        key = (f, backend.dispatch_key, backend.external, release)
        found = self._declarations.get(key)
        if found is None:
            from ..pieces.dest.native_declarations import compute_native_function_declaration

            try:
                found = "\n".join(compute_native_function_declaration(f, backend, release))
            except Exception:  # a model the codegen cannot declare: no hint rather than no diagnostic
                found = ""
            if len(self._declarations) > 4096:
                self._declarations.clear()
            self._declarations[key] = found
        return found


def _vendor_anchor(snapshot: BackendSnapshot) -> Span:
    """Where a vendor file's upgrade note goes: its first key (a list-shaped file: its start)."""
    assert snapshot.vendor is not None
    keys = snapshot.vendor.yaml.keys
    return keys[0][1] if keys else Span.point(0, 0)
