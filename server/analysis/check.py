"""`opgen check`: find what each input file is, analyse it, collect placed diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..diagnostics import diag
from ..index.native import NativeParser, TagsParser, TagsSnapshot
from ..report import FileDiagnostic
from ..text import Span

NATIVE = "native_functions"
TAGS = "tags"
BACKEND = "backend"
UNKNOWN = "unknown"


def classify(path: str, text: str) -> str:
    """What kind of operator yaml a file is, by name first and then by its first entry."""
    name = os.path.basename(path)
    if name == "native_functions.yaml":
        return NATIVE
    if name == "tags.yaml":
        return TAGS
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        if line.startswith("- func:"):
            return NATIVE
        if line.startswith("- tag:"):
            return TAGS
        if line.startswith(("backend:", "cpp_namespace:", "supported:")):
            return BACKEND
        break
    return UNKNOWN


@dataclass
class CheckResult:
    items: list[FileDiagnostic] = field(default_factory=list)
    # Messages about the run itself (unreadable files, skipped inputs), for stderr.
    notes: list[str] = field(default_factory=list)
    usage_error: bool = False

    @property
    def has_errors(self) -> bool:
        return any(i.diagnostic.is_error for i in self.items)


def _read(path: str, result: CheckResult) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        result.notes.append(f"opgen: {path}: no such file")
    except IsADirectoryError:
        result.notes.append(f"opgen: {path}: is a directory")
    except UnicodeDecodeError as exc:
        result.items.append(FileDiagnostic(path, diag("OPG006", Span.point(0, 0), f"not UTF-8 text: {exc.reason}")))
        return None
    except OSError as exc:
        result.notes.append(f"opgen: {path}: {exc.strerror}")
    result.usage_error = True
    return None


def expand(paths: list[str]) -> list[str]:
    """Files given, plus the operator yaml files inside directories given."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
            out.extend(os.path.join(root, f) for f in sorted(files) if f in ("native_functions.yaml", "tags.yaml"))
    return out


def check_paths(paths: list[str], tags_path: str | None = None) -> CheckResult:
    result = CheckResult()
    tags_cache: dict[str, TagsSnapshot] = {}

    def tags_for(path: str) -> TagsSnapshot | None:
        if path not in tags_cache:
            text = _read(path, result)
            if text is None:
                return None
            tags_cache[path] = TagsParser().parse(text)
        return tags_cache[path]

    for path in expand(paths):
        text = _read(path, result)
        if text is None:
            continue
        kind = classify(path, text)
        if kind == TAGS:
            snapshot = tags_for(path)
            if snapshot is not None:
                result.items.extend(FileDiagnostic(path, d) for d in snapshot.diagnostics)
        elif kind == NATIVE:
            tags_file = tags_path or os.path.join(os.path.dirname(path), "tags.yaml")
            valid_tags: frozenset[str] = frozenset()
            if os.path.exists(tags_file):
                snapshot = tags_for(tags_file)
                valid_tags = snapshot.names if snapshot is not None else frozenset()
            else:
                result.items.append(FileDiagnostic(path, diag("OPG900", Span.point(0, 0),
                    f"no tags.yaml found at {tags_file}; pass --tags so that tags can be checked")))
            native = NativeParser().parse(text, valid_tags)
            result.items.extend(FileDiagnostic(path, d) for d in native.diagnostics)
        elif kind == BACKEND:
            result.notes.append(f"opgen: {path}: backend yaml files are not checked yet")
        else:
            result.notes.append(f"opgen: {path}: not an operator yaml file (expected native_functions.yaml, "
                                "tags.yaml or a backend yaml)")
            result.usage_error = True
    return result
