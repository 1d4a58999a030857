"""An index of C++ kernel definitions: which names are defined, declared, TORCH_IMPL_FUNC'd, where.

Built from source folders (aten/src/ATen/native by default), one scan per file,
in parallel on a cold start, cached across runs (keyed by file size and mtime),
and updated one file at a time when a source changes.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..syntax.cpp_scan import CppSymbol, scan

SOURCE_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".cu", ".cuh", ".mm", ".h", ".hpp", ".hh"})
CACHE_VERSION = 2  # bump when the scanner finds other symbols in the same files


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


def scan_file(path: str) -> FileSymbols | None:
    try:
        stat = os.stat(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return FileSymbols(path, stat.st_size, stat.st_mtime_ns, scan(text))


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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


@dataclass
class KernelIndex:
    roots: list[str]
    files: dict[str, FileSymbols] = field(default_factory=dict)
    by_name: dict[str, list[Located]] = field(default_factory=dict)

    @staticmethod
    def build(roots: list[str], *, cache: Path | None = None, workers: int | None = None) -> KernelIndex:
        """Scan the roots, reusing cached results of files whose size and mtime did not change."""
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
        by_name: dict[str, list[Located]] = {}
        for f in self.files.values():
            for s in f.symbols:
                by_name.setdefault(s.name, []).append(Located(f.path, s))
        self.by_name = by_name

    def update(self, path: str) -> None:
        """Re-scan one file (changed, created or deleted)."""
        result = scan_file(path) if os.path.exists(path) else None
        old = self.files.pop(path, None)
        if old is not None:
            for s in old.symbols:
                entries = self.by_name.get(s.name, [])
                self.by_name[s.name] = [e for e in entries if e.path != path]
        if result is not None:
            self.files[path] = result
            for s in result.symbols:
                self.by_name.setdefault(s.name, []).append(Located(path, s))

    def find(self, name: str, kinds: tuple[str, ...]) -> list[Located]:
        return [e for e in self.by_name.get(name, ()) if e.symbol.kind in kinds]


def _scan_all(paths: list[str], workers: int | None) -> list[FileSymbols | None]:
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(paths) < 64:
        return _scan_many(paths)
    chunks = [paths[i::workers * 4] for i in range(workers * 4)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [r for chunk in pool.map(_scan_many, chunks) for r in chunk]
