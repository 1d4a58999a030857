"""The server's model of the open documents and their analyses.

- Every open document is classified (native_functions.yaml, tags.yaml, backend
  yaml, other) by name, then by its first entry; edits may change its kind.
- A native_functions.yaml is checked against a tags.yaml: the one in the
  `tagsPath` setting, else the one beside it, taken from the editor when it
  is open there and from disk otherwise.
- Each native document keeps one NativeParser for as long as it is open, so a
  re-check after an edit re-lowers only the entries the edit touched.
- An analysis is made for a key: the document's generation (bumped by every
  change) and, for native documents, where its tags come from and which
  version of them. An analysis whose key is not the document's current key is
  stale.

`analyse` does the heavy work and is meant to run on one worker thread; the
other methods are cheap and run on the event loop. Nothing here knows LSP.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
from dataclasses import dataclass

from ..analysis.check import NATIVE, TAGS, classify
from ..diagnostics import Diagnostic, diag
from ..index.native import NativeParser, NativeSnapshot, TagsParser, TagsSnapshot
from ..text import Span
from .config import Settings
from .convert import Lines

# After the first analysis of a document this long, the heap is collected and frozen once:
# the engine's steady ~20 ms re-checks rely on the collector not walking the loaded model.
LARGE_DOCUMENT_LINES = 5000


@dataclass(frozen=True, slots=True)
class OpenDocument:
    uri: str
    path: str | None  # None for documents that are not files (untitled:...)
    kind: str  # analysis.check: native_functions / tags / backend / unknown
    text: str
    version: int | None
    generation: int


@dataclass(frozen=True, slots=True)
class TagsInput:
    """Where a native document's tags come from, and a key that changes when they do."""

    key: tuple
    path: str | None  # the tags.yaml used or expected (None: no place to look)
    text: str | None = None  # the text of an open tags document


@dataclass(frozen=True)
class Analysis:
    document: OpenDocument
    key: tuple
    diagnostics: tuple[Diagnostic, ...]
    native: NativeSnapshot | None = None
    # A native document: the tags it was checked against. A tags document: its own.
    tags: TagsSnapshot | None = None

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


class Workspace:
    def __init__(self, root: str | None = None, settings: Settings | None = None) -> None:
        self.root = root
        self.settings = settings or Settings()
        self._documents: dict[str, OpenDocument] = {}
        self._by_path: dict[str, str] = {}  # normalised path -> uri of open documents
        self._generations = itertools.count(1)
        self._native_parsers: dict[str, NativeParser] = {}
        self._tags_parsers: dict[str, TagsParser] = {}  # by path (uri for documents that are not files)
        self._tags_snapshots: dict[str, tuple[tuple, TagsSnapshot | None, str | None]] = {}
        self._analyses: dict[str, Analysis] = {}
        self.heap_frozen = False

    # ------------------------------------------------------------ documents (event loop)

    def open(self, uri: str, path: str | None, text: str, version: int | None) -> OpenDocument:
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
        self._native_parsers.pop(uri, None)
        if document is not None:
            self._tags_parsers.pop(document.path or uri, None)
        self._analyses.pop(uri, None)
        return document

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
                with open(source.path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as exc:
                problem = f"cannot read {source.path}: {exc}; tags cannot be checked"
        elif text is None:
            problem = f"no tags.yaml found at {source.path}; open one or set opgen.tagsPath so that tags can be checked"
        if text is not None:
            parser = self._tags_parsers.setdefault(source.path, TagsParser())
            snapshot = parser.parse(text)
        self._tags_snapshots[source.path] = (source.key, snapshot, problem)
        return snapshot, problem

    # ------------------------------------------------------------ analyses

    def key(self, uri: str) -> tuple | None:
        """The key an up-to-date analysis of the document has (None: the document is not open)."""
        document = self._documents.get(uri)
        if document is None:
            return None
        if document.kind == NATIVE:
            return (document.generation, self.tags_input(document).key)
        return (document.generation,)

    def latest(self, uri: str) -> Analysis | None:
        """The last analysis made of the document, up to date or not."""
        return self._analyses.get(uri)

    def current(self, uri: str) -> Analysis | None:
        """The last analysis of the document if it is up to date."""
        analysis = self._analyses.get(uri)
        return analysis if analysis is not None and analysis.key == self.key(uri) else None

    def stale(self, kind: str | None = None) -> list[str]:
        """Open documents (of a kind) whose last analysis is out of date or missing."""
        return [d.uri for d in self.documents(kind) if self.current(d.uri) is None]

    def analyse(self, uri: str) -> Analysis | None:
        """Analyse the document as it is now (the heavy part; run it on one thread at a time)."""
        document = self._documents.get(uri)
        if document is None:
            return None
        if document.kind == NATIVE:
            source = self.tags_input(document)
            tags, problem = self._tags(source)
            parser = self._native_parsers.setdefault(uri, NativeParser())
            native = parser.parse(document.text, tags.names if tags is not None else frozenset())
            diagnostics = native.diagnostics
            if problem is not None:
                diagnostics = (diag("OPG900", Span.point(0, 0), problem),) + diagnostics
            analysis = Analysis(document, (document.generation, source.key), diagnostics, native, tags)
        elif document.kind == TAGS:
            parser = self._tags_parsers.setdefault(document.path or uri, TagsParser())
            tags = parser.parse(document.text)
            analysis = Analysis(document, (document.generation,), tags.diagnostics, None, tags)
        else:
            analysis = Analysis(document, (document.generation,), ())
        if self._documents.get(uri) is not None:
            self._analyses[uri] = analysis
        self._freeze_once(document)
        return analysis

    def _freeze_once(self, document: OpenDocument) -> None:
        if self.heap_frozen or document.kind not in (NATIVE, TAGS):
            return
        if document.text.count("\n") < LARGE_DOCUMENT_LINES:
            return
        self.heap_frozen = True
        gc.collect()
        gc.freeze()
