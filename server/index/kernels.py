"""An index of C++ kernel definitions: which names are defined, declared, TORCH_IMPL_FUNC'd, where.

Built from source folders (a PyTorch checkout's root stands for its aten/src/ATen), one scan
per file, in parallel on a cold start, cached across runs (keyed by file size and mtime), and
updated one file at a time when a source changes. The function-like macros of the headers
are collected too, from the source folders and from the folders of the PyTorch tree holding
them (aten/src/ATen and c10: X-macro lists such as AT_FORALL_SCALAR_TYPES live in c10): a file
invoking a macro that a header defines is scanned again, when the index is linked, with that
macro and the ones its expansion invokes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..cache.root import KERNEL_INDEX_PREFIX, prune_kernel_indexes, user_cache_root
from ..frozen import record
from ..input_file import UnreadableFile, read_text
from ..syntax import cpp_macros, cpp_scan, cpp_types
from ..syntax.cpp_macros import Macro
from ..syntax.cpp_scan import MACRO_USE, Branch, CppSymbol, file_macros, scan, scan_with_macros
from ..worker_process import start_worker
from .documents import paused_gc

SOURCE_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".cu", ".cuh", ".mm", ".h", ".hpp", ".hh"})
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".cuh")
ATEN = os.path.join("aten", "src", "ATen")


def scanner_fingerprint(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()[:16]


def _scanner_source(module: ModuleType) -> bytes:
    if module.__file__ is None:  # pragma: no cover - a module without a file
        return b""
    try:
        return Path(module.__file__).read_bytes()
    except OSError:  # pragma: no cover - an installation without the source file
        return b""


# Bump the number when the cache's format changes. The scanner's own source is part of the version, so a
# cache written by another scanner (which may find other symbols in the same files) is never reused.
CACHE_VERSION = (f"6-{scanner_fingerprint(_scanner_source(cpp_scan))}"
                 f"-{scanner_fingerprint(_scanner_source(cpp_macros))}"
                 f"-{scanner_fingerprint(_scanner_source(cpp_types))}")


@record
class FileSymbols:
    path: str
    size: int
    mtime_ns: int
    symbols: tuple[CppSymbol, ...]
    macros: tuple[Macro, ...] = ()  # a header's function-like macros


@record
class Located:
    path: str
    symbol: CppSymbol


def tree_sources(root: str) -> str:
    """The folder to index for root: a PyTorch checkout's aten/src/ATen, any other folder itself."""
    aten = os.path.join(root, ATEN)
    return os.path.normpath(aten) if os.path.isdir(aten) else root


def header_roots(folder: str) -> tuple[str, ...]:
    """The folders of the PyTorch tree holding folder whose headers give macros: a checkout's aten/src/ATen
    and c10, or an include folder's ATen and c10 (an installed wheel's); none outside such a tree."""
    here = os.path.abspath(folder)
    while True:
        for aten in (os.path.join(here, ATEN), os.path.join(here, "ATen")):
            c10 = os.path.join(here, "c10")
            if os.path.isdir(aten) and os.path.isdir(c10):
                return aten, c10
        parent = os.path.dirname(here)
        if parent == here:
            return ()
        here = parent


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def covered(path: str, roots: Sequence[str], header_roots: Sequence[str]) -> bool:
    """Whether a change to path can change an index of roots: a source under them, or a header under them or
    the header folders of their tree."""
    if os.path.splitext(path)[1] not in SOURCE_SUFFIXES:
        return False
    folders = (*roots, *header_roots) if path.endswith(HEADER_SUFFIXES) else tuple(roots)
    return _inside(os.path.abspath(path), tuple(os.path.abspath(f) for f in folders))


def source_files(roots: list[str], suffixes: tuple[str, ...] | frozenset[str] = SOURCE_SUFFIXES) -> list[str]:
    out: list[str] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            out.extend(os.path.join(folder, f) for f in sorted(files) if os.path.splitext(f)[1] in suffixes)
    return out


def _read(path: str) -> str | None:
    try:
        return read_text(path, errors="replace")
    except UnreadableFile:
        return None


def scan_file(path: str, *, macros_only: bool = False) -> FileSymbols | None:
    """A file's symbols and (a header's) macros; macros_only: a header outside the source folders."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    text = _read(path)
    if text is None:
        return None
    header = path.endswith(HEADER_SUFFIXES)
    if macros_only:
        return FileSymbols(path, stat.st_size, stat.st_mtime_ns, (), tuple(file_macros(text).values()))
    symbols, macros = scan_with_macros(text)
    return FileSymbols(path, stat.st_size, stat.st_mtime_ns, symbols, tuple(macros.values()) if header else ())


MacroTable = dict[str, list[tuple[str, Macro]]]  # macro name -> (header, definition) for each header defining it
_IDENT = re.compile(r"[A-Za-z_]\w*")


def macro_table(files: dict[str, FileSymbols]) -> MacroTable:
    out: MacroTable = {}
    for f in files.values():
        for m in f.macros:
            out.setdefault(m.name, []).append((f.path, m))
    return out


def _nearest(definitions: list[tuple[str, Macro]], near: str) -> Macro:
    """Of several headers defining a macro, the one sharing the longest folder with `near` (then by path)."""
    if len(definitions) == 1:
        return definitions[0][1]
    here = os.path.abspath(near)

    def key(item: tuple[str, Macro]) -> tuple[int, str]:
        return -len(os.path.commonpath([here, os.path.abspath(item[0])])), item[0]

    return min(definitions, key=key)[1]


def macros_for(names: set[str], table: MacroTable, near: str) -> dict[str, Macro]:
    """The definitions of names, and of every macro of the table their bodies name, transitively (an X-macro
    list invoked with a macro defined in yet another header)."""
    chosen: dict[str, Macro] = {}
    todo = sorted(names)
    while todo:
        name = todo.pop()
        if name in chosen or name not in table:
            continue
        macro = chosen[name] = _nearest(table[name], near)
        todo.extend(n for n in set(_IDENT.findall(macro.body)) if n in table and n not in chosen)
    return chosen


@record
class Linked:
    """A file scanned again with the macros it takes from the tree's headers."""

    key: str  # of the file's size and mtime and of those macros: the same key, the same symbols
    symbols: tuple[CppSymbol, ...]
    macros: frozenset[str]


def _link_key(f: FileSymbols, known: dict[str, Macro]) -> str:
    digest = hashlib.sha1(f"{f.size}:{f.mtime_ns}".encode())
    for name in sorted(known):
        m = known[name]
        digest.update(f"\0{name}({','.join(m.params)}){m.body}".encode())
    return digest.hexdigest()[:20]


def linked(f: FileSymbols, table: MacroTable, memo: Linked | None = None) -> Linked | None:
    """f scanned again with the macros it takes from the tree's headers (memo, when its key is still the same),
    or None when it takes none."""
    wanted = {s.name for s in f.symbols if s.kind == MACRO_USE and s.name in table}
    if not wanted:
        return None
    known = macros_for(wanted, table, f.path)
    key = _link_key(f, known)
    if memo is not None and memo.key == key:
        return memo
    text = _read(f.path)
    return Linked(key, f.symbols if text is None else scan(text, known), frozenset(known))


def _scan_many(paths: list[tuple[str, bool]]) -> list[FileSymbols | None]:
    return [scan_file(p, macros_only=macros_only) for p, macros_only in paths]


def default_cache_path(roots: list[str]) -> Path:
    key = hashlib.sha1("\0".join(os.path.abspath(r) for r in roots).encode()).hexdigest()[:16]
    return Path(user_cache_root()) / f"{KERNEL_INDEX_PREFIX}{key}.json"  # (KERNEL_INDEX_NAME: `opgen cache clear`)


def _symbol(row: list[Any]) -> CppSymbol:
    name, kind, namespace, line, col = row[:5]
    branches = tuple(Branch(tuple(lines), taken) for lines, taken in row[6]) if len(row) > 6 else ()
    return CppSymbol(name, kind, namespace, line, col, row[5] if len(row) > 5 else None, branches)


def _symbols(rows: Iterable[list[Any]]) -> tuple[CppSymbol, ...]:
    return tuple(_symbol(row) for row in rows)


def _rows(symbols: tuple[CppSymbol, ...]) -> list[list[Any]]:
    """A symbol as a JSON row; the parameters and branches only when it has them (most symbols have neither)."""
    rows: list[list[Any]] = []
    for s in symbols:
        row: list[Any] = [s.name, s.kind, s.namespace, s.line, s.col]
        if s.params is not None or s.branches:
            row.append(s.params)
        if s.branches:
            row.append([[list(b.directives), b.taken] for b in s.branches])
        rows.append(row)
    return rows


def _load_cache(path: Path | None) -> tuple[dict[str, FileSymbols], dict[str, Linked]]:
    if path is None:
        return {}, {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}, {}
    files, relinked = {}, {}
    try:
        for file, (size, mtime, symbols, macros) in data.get("files", {}).items():
            files[file] = FileSymbols(file, size, mtime, _symbols(symbols),
                                      tuple(Macro(name, tuple(params), body, offset)
                                            for name, params, body, offset in macros))
        for file, (key, symbols, names) in data.get("linked", {}).items():
            relinked[file] = Linked(key, _symbols(symbols), frozenset(names))
    except (AttributeError, TypeError, ValueError):  # a cache edited by hand or cut short: only a cold start
        return {}, {}
    return files, relinked


def _save_cache(path: Path | None, files: dict[str, FileSymbols], relinked: dict[str, Linked]) -> None:
    if path is None:
        return
    data = {"version": CACHE_VERSION,
            "files": {f.path: [f.size, f.mtime_ns, _rows(f.symbols),
                               [[m.name, list(m.params), m.body, m.offset] for m in f.macros]]
                      for f in files.values()},
            "linked": {p: [k.key, _rows(k.symbols), sorted(k.macros)] for p, k in relinked.items() if p in files}}
    tmp = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")  # (the server builds in threads)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, path)
        prune_kernel_indexes(str(path.parent))
    except OSError:  # a cache that cannot be written only costs time; a partial one must not stay (full disk)
        try:
            tmp.unlink()
        except OSError:
            pass


def _changed_macros(old: FileSymbols | None, new: FileSymbols | None) -> set[str]:
    """The macros a header's edit defines, undefines or redefines."""
    before = {m.name: (m.params, m.body) for m in old.macros} if old is not None else {}
    after = {m.name: (m.params, m.body) for m in new.macros} if new is not None else {}
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


@dataclass
class KernelIndex:
    roots: list[str]  # where definitions count
    files: dict[str, FileSymbols] = field(default_factory=dict)
    by_name: dict[str, list[Located]] = field(default_factory=dict)
    # The PyTorch tree's header folders outside the roots: only their macros are read.
    header_roots: tuple[str, ...] = ()
    macros: MacroTable = field(default_factory=dict)
    linked: dict[str, tuple[CppSymbol, ...]] = field(default_factory=dict)  # path -> its symbols, macros expanded
    relinked: dict[str, Linked] = field(default_factory=dict)  # path -> the file scanned again (kept in the cache)
    uses: dict[str, set[str]] = field(default_factory=dict)  # macro name -> the files invoking it unresolved
    dependents: dict[str, set[str]] = field(default_factory=dict)  # macro name -> the files scanned again with it

    @staticmethod
    def build(roots: list[str], *, cache: Path | None = None, workers: int | None = None) -> KernelIndex:
        """Scan the roots (and the macros of their tree's headers), reusing cached results of files whose size
        and mtime did not change."""
        with paused_gc():  # tens of thousands of small acyclic objects: collector passes only cost time
            return KernelIndex._build([tree_sources(r) for r in roots], cache, workers)

    @staticmethod
    def _build(roots: list[str], cache: Path | None, workers: int | None) -> KernelIndex:
        cached, relinked = _load_cache(cache)
        index = KernelIndex(list(roots), header_roots=tree_header_roots(roots), relinked=relinked)
        files: dict[str, FileSymbols] = {}
        todo: list[tuple[str, bool]] = []
        wanted = [(p, False) for p in source_files(roots)] + \
            [(p, True) for p in source_files(list(index.header_roots), HEADER_SUFFIXES) if not index._is_source(p)]
        for path, macros_only in wanted:
            hit = cached.get(path)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            if hit is not None and hit.size == stat.st_size and hit.mtime_ns == stat.st_mtime_ns:
                files[path] = hit
            else:
                todo.append((path, macros_only))
        for result in _scan_all(todo, workers):
            if result is not None:
                files[result.path] = result
        index.files = files
        before = dict(index.relinked)
        index._link()
        if todo or len(files) != len(cached) or index.relinked != before:
            _save_cache(cache, files, index.relinked)
        return index

    def _is_source(self, path: str) -> bool:
        return _inside(os.path.abspath(path), tuple(os.path.abspath(r) for r in self.roots))

    def covers(self, path: str) -> bool:
        return covered(path, self.roots, self.header_roots)

    def _link(self) -> None:
        self.macros = macro_table(self.files)
        self.uses, self.dependents = {}, {}
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
        if not f.symbols:
            return
        again = linked(f, self.macros, self.relinked.get(f.path))
        if again is None:
            self.relinked.pop(f.path, None)
            symbols = f.symbols
        else:
            self.relinked[f.path] = again
            symbols = again.symbols
            for name in again.macros:
                self.dependents.setdefault(name, set()).add(f.path)
        self.linked[f.path] = symbols
        for s in symbols:
            self.by_name.setdefault(s.name, []).append(Located(f.path, s))

    def _remove(self, path: str) -> None:
        for name in {s.name for s in self.linked.pop(path, ())}:
            self.by_name[name] = [e for e in self.by_name.get(name, ()) if e.path != path]
        for users in self.dependents.values():
            users.discard(path)

    def update(self, path: str) -> None:
        """Re-scan one file (changed, created or deleted); when it is a header whose macros changed, the files
        using them are linked again too. A file the index does not cover is left alone."""
        if not self.covers(path):
            return
        source = self._is_source(path)
        result = scan_file(path, macros_only=not source) if os.path.exists(path) else None
        old = self.files.pop(path, None)
        if old is not None:
            self._note_uses(old, add=False)
        if result is not None:
            self.files[path] = result
            self._note_uses(result, add=True)
        changed = _changed_macros(old, result)
        if changed:
            self.macros = macro_table(self.files)
        users = {user for name in changed for user in (*self.uses.get(name, ()), *self.dependents.get(name, ()))}
        for again in (path, *sorted(users - {path})):
            self._remove(again)
            if again in self.files:
                self._add(self.files[again])
            else:
                self.relinked.pop(again, None)

    def find(self, name: str, kinds: tuple[str, ...]) -> list[Located]:
        return [e for e in self.by_name.get(name, ()) if e.symbol.kind in kinds]


def tree_header_roots(roots: list[str]) -> tuple[str, ...]:
    """The header folders of the trees holding roots, each once, but for those inside the roots (indexed anyway)."""
    inside = tuple(os.path.abspath(r) for r in roots)
    out: list[str] = []
    for root in roots:
        out.extend(r for r in header_roots(root) if r not in out and not _inside(r, inside))
    return tuple(out)


def _scan_all(paths: list[tuple[str, bool]], workers: int | None) -> list[FileSymbols | None]:
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(paths) < 64:
        return _scan_many(paths)
    chunks = [paths[i::workers * 4] for i in range(workers * 4)]
    with ProcessPoolExecutor(max_workers=workers, initializer=start_worker) as pool:
        return [r for chunk in pool.map(_scan_many, chunks) for r in chunk]
