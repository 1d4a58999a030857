"""An index of C++ kernel definitions: which names are defined, declared, TORCH_IMPL_FUNC'd, where.

Built from source folders (aten/src/ATen/native by default), one scan per file,
in parallel on a cold start, cached across runs (keyed by file size and mtime),
and updated one file at a time when a source changes. A file invoking a macro
that a header of the tree defines (and that may define functions) is scanned
again with that header's macros when the index is linked.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .documents import paused_gc
from ..input_file import UnreadableFile, read_text
from ..syntax import cpp_scan
from ..syntax.cpp_scan import MACRO, MACRO_USE, CppSymbol, file_macros, scan

SOURCE_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".cu", ".cuh", ".mm", ".h", ".hpp", ".hh"})
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".cuh")


def scanner_fingerprint(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()[:16]


def _scanner_source() -> bytes:
    try:
        return Path(cpp_scan.__file__).read_bytes()
    except OSError:  # pragma: no cover - an installation without the source file
        return b""


# Bump the number when the cache's format changes. The scanner's own source is part of the version, so a
# cache written by another scanner (which may find other symbols in the same files) is never reused.
CACHE_VERSION = f"4-{scanner_fingerprint(_scanner_source())}"


@dataclass(frozen=True, slots=True)
class FileSymbols:
    path: str
    size: int
    mtime_ns: int
    symbols: tuple[CppSymbol, ...]


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    symbol: CppSymbol


def source_files(roots: list[str]) -> list[str]:
    out = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            out.extend(os.path.join(folder, f) for f in sorted(files) if os.path.splitext(f)[1] in SOURCE_SUFFIXES)
    return out


def _read(path: str) -> str | None:
    try:
        return read_text(path, errors="replace")
    except UnreadableFile:
        return None


def scan_file(path: str) -> FileSymbols | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    text = _read(path)
    return None if text is None else FileSymbols(path, stat.st_size, stat.st_mtime_ns, scan(text))


def macro_headers(files: dict[str, FileSymbols]) -> dict[str, list[str]]:
    """Each macro that may define functions, mapped to the headers defining it."""
    out: dict[str, list[str]] = {}
    for f in files.values():
        if f.path.endswith(HEADER_SUFFIXES):
            for s in f.symbols:
                if s.kind == MACRO:
                    out.setdefault(s.name, []).append(f.path)
    return out


def linked_symbols(f: FileSymbols, headers: dict[str, list[str]]) -> tuple[CppSymbol, ...]:
    """f's symbols, the macros it takes from the tree's headers expanded (by scanning it again with them)."""
    wanted = {s.name for s in f.symbols if s.kind == MACRO_USE and s.name in headers}
    if not wanted:
        return f.symbols
    known = {}
    for path in sorted({p for name in wanted for p in headers[name]}):
        known.update(file_macros(_read(path) or ""))
    text = _read(f.path)
    return f.symbols if text is None else scan(text, known)


def _scan_many(paths: list[str]) -> list[FileSymbols | None]:
    return [scan_file(p) for p in paths]


def default_cache_path(roots: list[str]) -> Path:
    key = hashlib.sha1("\0".join(os.path.abspath(r) for r in roots).encode()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opgen" / f"kernels-{key}.json"


def _load_cache(path: Path | None) -> dict[str, FileSymbols]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if data.get("version") != CACHE_VERSION:
        return {}
    out = {}
    for file, (size, mtime, symbols) in data.get("files", {}).items():
        out[file] = FileSymbols(file, size, mtime, tuple(CppSymbol(*s) for s in symbols))
    return out


def _save_cache(path: Path | None, files: dict[str, FileSymbols]) -> None:
    if path is None:
        return
    data = {"version": CACHE_VERSION,
            "files": {f.path: [f.size, f.mtime_ns, [[s.name, s.kind, s.namespace, s.line, s.col] for s in f.symbols]]
                      for f in files.values()}}
    tmp = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")  # (the server builds in threads)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:  # a cache that cannot be written only costs time; a partial one must not stay (full disk)
        try:
            tmp.unlink()
        except OSError:
            pass


@dataclass
class KernelIndex:
    roots: list[str]
    files: dict[str, FileSymbols] = field(default_factory=dict)
    by_name: dict[str, list[Located]] = field(default_factory=dict)
    headers: dict[str, list[str]] = field(default_factory=dict)  # macro name -> the headers defining it
    linked: dict[str, tuple[CppSymbol, ...]] = field(default_factory=dict)  # path -> its symbols, macros expanded
    uses: dict[str, set[str]] = field(default_factory=dict)  # macro name -> the files invoking it unresolved

    @staticmethod
    def build(roots: list[str], *, cache: Path | None = None, workers: int | None = None) -> KernelIndex:
        """Scan the roots, reusing cached results of files whose size and mtime did not change."""
        with paused_gc():  # tens of thousands of small acyclic objects: collector passes only cost time
            return KernelIndex._build(roots, cache, workers)

    @staticmethod
    def _build(roots: list[str], cache: Path | None, workers: int | None) -> KernelIndex:
        cached = _load_cache(cache)
        files: dict[str, FileSymbols] = {}
        todo = []
        for path in source_files(roots):
            hit = cached.get(path)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            if hit is not None and hit.size == stat.st_size and hit.mtime_ns == stat.st_mtime_ns:
                files[path] = hit
            else:
                todo.append(path)
        for result in _scan_all(todo, workers):
            if result is not None:
                files[result.path] = result
        index = KernelIndex(list(roots), files)
        index._link()
        if todo or len(files) != len(cached):
            _save_cache(cache, files)
        return index

    def _link(self) -> None:
        self.headers = macro_headers(self.files)
        self.uses = {}
        self.by_name, self.linked = {}, {}
        for f in self.files.values():
            self._note_uses(f, add=True)
            self._add(f)

    def _note_uses(self, f: FileSymbols, *, add: bool) -> None:
        for s in f.symbols:
            if s.kind == MACRO_USE:
                users = self.uses.setdefault(s.name, set())
                (users.add if add else users.discard)(f.path)

    def _add(self, f: FileSymbols) -> None:
        symbols = self.linked[f.path] = linked_symbols(f, self.headers)
        for s in symbols:
            self.by_name.setdefault(s.name, []).append(Located(f.path, s))

    def _remove(self, path: str) -> None:
        for name in {s.name for s in self.linked.pop(path, ())}:
            self.by_name[name] = [e for e in self.by_name.get(name, ()) if e.path != path]

    def update(self, path: str) -> None:
        """Re-scan one file (changed, created or deleted); when it is a header giving kernel-defining macros,
        the files using them are linked again too."""
        result = scan_file(path) if os.path.exists(path) else None
        old = self.files.pop(path, None)
        if old is not None:
            self._note_uses(old, add=False)
        if result is not None:
            self.files[path] = result
            self._note_uses(result, add=True)
        given = {s.name for f in (old, result) if f is not None for s in f.symbols if s.kind == MACRO} \
            if path.endswith(HEADER_SUFFIXES) else set()
        if given:
            self.headers = macro_headers(self.files)
        users = {user for name in given for user in self.uses.get(name, ())} - {path}
        for changed in (path, *sorted(users)):
            self._remove(changed)
            if changed in self.files:
                self._add(self.files[changed])

    def find(self, name: str, kinds: tuple[str, ...]) -> list[Located]:
        return [e for e in self.by_name.get(name, ()) if e.symbol.kind in kinds]


def _scan_all(paths: list[str], workers: int | None) -> list[FileSymbols | None]:
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(paths) < 64:
        return _scan_many(paths)
    chunks = [paths[i::workers * 4] for i in range(workers * 4)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [r for chunk in pool.map(_scan_many, chunks) for r in chunk]
