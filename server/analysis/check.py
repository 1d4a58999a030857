"""`opgen check`: find what each input file is, analyse it, collect placed diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..diagnostics import Diagnostic, diag
from ..index.backend import BackendSnapshot, check_backend
from ..index.native import NativeParser, NativeSnapshot, TagsParser, TagsSnapshot
from ..releases import Fit, Resolved, release_diagnostics, resolve_for
from ..report import FileDiagnostic
from ..text import Span

NATIVE = "native_functions"
TAGS = "tags"
BACKEND = "backend"
UNKNOWN = "unknown"

# Top-level keys of a backend yaml (gen_backend_stubs' input); a file starting with one is a backend yaml.
BACKEND_KEYS = tuple(f"{k}:" for k in ("backend", "cpp_namespace", "supported", "class_name", "use_out_as_primary",
                                         "device_guard", "full_codegen", "autograd", "symint", "ir_gen", "non_native"))


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
        if line.startswith(BACKEND_KEYS):
            return BACKEND
        break
    return UNKNOWN


@dataclass
class CheckResult:
    items: list[FileDiagnostic] = field(default_factory=list)
    # Messages about the run itself (unreadable files, skipped inputs), for stderr.
    notes: list[str] = field(default_factory=list)
    usage_error: bool = False
    # Each native_functions.yaml read (checked, or resolved against by backend yamls) and its torch release.
    releases: dict[str, Resolved] = field(default_factory=dict)

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


def _is_backend_yaml(path: str) -> bool:
    """A `*_functions.yaml` with a top-level `backend:` key (read only as far as that line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return any(line.startswith("backend:") for line in f)
    except (OSError, UnicodeDecodeError):
        return False


def expand(paths: list[str]) -> list[str]:
    """Files given, plus the operator yaml files (and backend yamls) inside directories given."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
            out.extend(os.path.join(root, f) for f in sorted(files)
                       if f in ("native_functions.yaml", "tags.yaml")
                       or f.endswith("_functions.yaml") and _is_backend_yaml(os.path.join(root, f)))
    return out


def installed_package_dir(name: str) -> str | None:
    """The folder of an installed package, found without importing it (torch takes seconds to import)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def installed_native_functions() -> tuple[str, str] | None:
    """native_functions.yaml and tags.yaml as packaged with the installed torch's torchgen, if any."""
    package = installed_package_dir("torchgen")
    if package is None:
        return None
    native = os.path.join(package, "packaged", "ATen", "native")
    paths = (os.path.join(native, "native_functions.yaml"), os.path.join(native, "tags.yaml"))
    return paths if os.path.isfile(paths[0]) else None


def check_paths(paths: list[str], tags_path: str | None = None, native_path: str | None = None,
                native_extra: Callable[[NativeSnapshot], list[Diagnostic]] | None = None,
                backend_extra: Callable[[str, str, BackendSnapshot, NativeSnapshot], Sequence[Diagnostic]] | None = None,
                torch_version: str | None = None) -> CheckResult:
    """native_extra: more checks of each native_functions.yaml (e.g. kernels missing from C++ sources).
    backend_extra(path, text, snapshot, native): more checks of each backend yaml (e.g. what gen_lazy_tensor rejects).
    torch_version: the torch release whose rules apply (default: detected per file, see releases.resolve_for)."""
    result = CheckResult()
    tags_cache: dict[str, TagsSnapshot] = {}
    # The native_functions.yaml that backend yamls are resolved against: parsed once, on first need.
    backend_native: list[NativeSnapshot | None] = []

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
            resolved = resolve_for(path, torch_version)
            result.items.extend(FileDiagnostic(path, d) for d in release_diagnostics(resolved))
            result.releases[path] = resolved
            if resolved.note is not None:
                result.notes.append(f"opgen: {path}: {resolved.note}")
            if resolved.fit is Fit.OLDER:
                continue
            native = NativeParser(release=resolved.release).parse(text, valid_tags)
            result.items.extend(FileDiagnostic(path, d) for d in native.diagnostics)
            if native_extra is not None:
                result.items.extend(FileDiagnostic(path, d) for d in native_extra(native))
        elif kind == BACKEND:
            if not backend_native:
                backend_native.append(_native_for_backends(native_path, tags_path, tags_for, result, torch_version))
            native_snapshot = backend_native[0]
            if native_snapshot is None:
                why = (f"cannot read {native_path}, the native_functions.yaml given with --native-functions"
                       if native_path else "no native_functions.yaml to resolve the op names against: pass "
                       "--native-functions F (or install torch 2.13, whose torchgen ships one)")
                result.items.append(FileDiagnostic(path, diag("OPG900", Span.point(0, 0), why)))
                continue
            backend = check_backend(text, native_snapshot)
            result.items.extend(FileDiagnostic(path, d) for d in backend.diagnostics)
            if backend_extra is not None:
                result.items.extend(FileDiagnostic(path, d) for d in backend_extra(path, text, backend, native_snapshot))
        else:
            result.notes.append(f"opgen: {path}: not an operator yaml file (expected native_functions.yaml, "
                                "tags.yaml or a backend yaml)")
            result.usage_error = True
    return result


def _native_for_backends(native_path: str | None, tags_path: str | None, tags_for, result: CheckResult,
                         torch_version: str | None) -> NativeSnapshot | None:
    """--native-functions (with --tags or the tags.yaml beside it), else the installed torchgen's copy."""
    if native_path is None:
        installed = installed_native_functions()
        if installed is None:
            return None
        native_path, default_tags = installed
    else:
        default_tags = os.path.join(os.path.dirname(native_path), "tags.yaml")
    text = _read(native_path, result)
    if text is None:
        return None
    tags_file = tags_path or default_tags
    valid_tags: frozenset[str] = frozenset()
    if os.path.exists(tags_file):
        snapshot = tags_for(tags_file)
        valid_tags = snapshot.names if snapshot is not None else frozenset()
    else:
        result.notes.append(f"opgen: no tags.yaml found at {tags_file}; pass --tags so that {native_path} "
                            "is read with its tags")
    resolved = resolve_for(native_path, torch_version)
    result.releases[native_path] = resolved
    if resolved.note is not None:
        result.notes.append(f"opgen: {native_path}: {resolved.note}")
    return NativeParser(release=resolved.release).parse(text, valid_tags)
