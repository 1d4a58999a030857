"""`opgen check`: find what each input file is, analyse it, collect placed diagnostics."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, diag
from ..index.yaml_names import DEPRECATED_YAML, DERIVATIVES_YAML
from ..input_file import NOT_UTF8, SPECIAL, TOO_LARGE, UnreadableFile, read_text
from ..model.selection_keys import TOP_LEVEL_KEYS
from ..releases import (
    Fit,
    Release,
    Resolved,
    as_patched_by_backend,
    parse_version,
    release_diagnostics,
    release_tags,
    resolve,
    resolve_for,
    resolve_for_autograd,
)
from ..releases.tree_release import tree_diagnostics
from ..report import FileDiagnostic
from ..text import Span, as_python_reads
from .check_memo import CheckMemo, NativeVerdict, RecordSlot, TagsVerdict

if TYPE_CHECKING:  # the backend and autograd readers load for those files only (a native check needs neither), and
    # the parser of native_functions.yaml when a verdict is not in the persistent memo (check_memo.py)
    from ..index.backend import BackendSnapshot
    from ..index.derivatives import DerivativesDocument
    from ..index.native import NativeSnapshot

NATIVE = "native_functions"
TAGS = "tags"
BACKEND = "backend"
DERIVATIVES = "derivatives"
DEPRECATED = "deprecated"
SELECTION = "selection"
UNKNOWN = "unknown"

# Top-level keys of a backend yaml (gen_backend_stubs' input); a file starting with one is a backend yaml.
BACKEND_KEYS = tuple(f"{k}:" for k in ("backend", "cpp_namespace", "supported", "class_name", "use_out_as_primary",
                                         "device_guard", "full_codegen", "autograd", "symint", "ir_gen", "non_native"))

# Top-level keys of an operator selection yaml (gen.py's --op-selection-yaml-path).
SELECTION_KEYS = tuple(f"{k}:" for k in TOP_LEVEL_KEYS)


# The first line of a derivatives.yaml entry: `- name: op.overload(...`, not any list of named things.
_DERIVATIVE_NAME = re.compile(r"- name:\s*['\"]?\w+(\.\w+)?\(")


def classify(path: str, text: str) -> str:
    """What kind of operator yaml a file is, by name first and then by its first entry."""
    name = os.path.basename(path)
    if name == "native_functions.yaml":
        return NATIVE
    if name == "tags.yaml":
        return TAGS
    if name == DERIVATIVES_YAML:
        return DERIVATIVES
    if name == DEPRECATED_YAML:  # a common name: only PyTorch's, in an autograd folder
        return DEPRECATED if os.path.basename(os.path.dirname(path)) == "autograd" else UNKNOWN
    from ..model.vendor_formats import vendor_format  # (not for a native_functions.yaml or tags.yaml)

    if vendor_format(path, text) is not None:  # a vendor's dialect of the backend yaml, read by its own reader
        return BACKEND
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        if line.startswith("- func:"):
            return NATIVE
        if line.startswith("- tag:"):
            return TAGS
        if _DERIVATIVE_NAME.match(line):
            return DERIVATIVES
        if line.startswith(BACKEND_KEYS):
            return BACKEND
        if line.startswith(SELECTION_KEYS):
            return SELECTION
        break
    return UNKNOWN


class CheckResult:
    """What a check_paths call found, filled in as it goes (a plain class: a dataclass costs every check half a
    millisecond to make)."""

    __slots__ = ("checked", "items", "notes", "releases", "usage_error")

    def __init__(self) -> None:
        self.items: list[FileDiagnostic] = []
        # Messages about the run itself (unreadable files, skipped inputs), for stderr.
        self.notes: list[str] = []
        self.usage_error = False
        # The files read as operator yaml (for the summary line).
        self.checked: list[str] = []
        # Each native_functions.yaml read (checked, or resolved against by backend yamls) and its torch release.
        self.releases: dict[str, Resolved] = {}

    @property
    def has_errors(self) -> bool:
        return any(i.diagnostic.is_error for i in self.items)


def _read(path: str, result: CheckResult) -> str | None:
    """The file's text; None after saying why not (a diagnostic for a file that is not text: too large, not
    UTF-8, a FIFO or a device; a note and a usage error for a missing or unreadable one)."""
    try:
        return as_python_reads(read_text(path))
    except UnreadableFile as exc:
        if exc.kind in (TOO_LARGE, NOT_UTF8, SPECIAL):
            where = Span.point(*exc.position) if exc.position else Span.point(0, 0)
            message = exc.why if exc.kind == NOT_UTF8 else f"this file {exc.why}"
            result.items.append(FileDiagnostic(path, diag("OPG006", where, message)))
            return None
        result.notes.append(f"opgen: {exc}")
    result.usage_error = True
    return None


def _is_backend_yaml(path: str) -> bool:
    """A `*_functions.yaml` with a top-level `backend:` key (read with the bounded reader: no FIFO is waited on)."""
    try:
        return any(line.startswith("backend:") for line in read_text(path).splitlines())
    except UnreadableFile:
        return False


# What expand looks for in a folder (said when it finds nothing).
SEARCHED = ("native_functions.yaml, tags.yaml, derivatives.yaml, autograd/deprecated.yaml and *_functions.yaml "
            "backend yamls (with a top-level backend: key)")


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
                       if f in ("native_functions.yaml", "tags.yaml", DERIVATIVES_YAML)
                       or f == DEPRECATED_YAML and os.path.basename(root) == "autograd"
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


NativeExtra = Callable[[str, "NativeSnapshot"], list[Diagnostic]]
BackendExtra = Callable[[str, str, "BackendSnapshot", "NativeSnapshot"], Sequence[Diagnostic]]
DerivativesRules = Callable[["DerivativesDocument", "NativeSnapshot", Release], Sequence[Diagnostic]]


def check_paths(paths: list[str], tags_path: str | None = None, native_path: str | None = None,
                native_extra: NativeExtra | None = None, backend_extra: BackendExtra | None = None,
                derivatives_check: DerivativesRules | None = None, torch_version: str | None = None,
                memo: CheckMemo | None = None) -> CheckResult:
    """native_extra(path, native): more checks of each native_functions.yaml (e.g. kernels missing from C++ sources).
    backend_extra(path, text, snapshot, native): more checks of each backend yaml (e.g. what gen_lazy_tensor rejects).
    derivatives_check(document, native, release): the rules of a derivatives.yaml against its native_functions.yaml
    (what the release's autograd loader rejects; without it, only what each entry shows on its own).
    torch_version: the torch release whose rules apply (default: detected per file, see releases.resolve_for).
    memo: verdicts kept from earlier runs (check_memo.py); only for a native_extra that is the AOTI shim check alone
    (its verdict is keyed by the fallback_ops.py it reads, nothing else)."""
    run = _Run(tags_path, native_path, native_extra, backend_extra, derivatives_check, torch_version, memo)
    for given in paths:
        found = expand([given])
        if not found:  # a folder with nothing to check: a mistyped folder must not pass as clean
            run.result.notes.append(f"opgen: {given}: no operator yaml in this folder (searched it for {SEARCHED})")
            run.result.usage_error = True
        for path in found:
            run.check(path)
    return run.result


class _Run:
    """One check_paths call: its options, the result so far, and the files several inputs share, parsed once."""

    def __init__(self, tags_path: str | None, native_path: str | None, native_extra: NativeExtra | None,
                 backend_extra: BackendExtra | None, derivatives_check: DerivativesRules | None,
                 torch_version: str | None, memo: CheckMemo | None = None) -> None:
        self.tags_path, self.native_path, self.torch_version = tags_path, native_path, torch_version
        self.memo = memo
        self.native_extra, self.backend_extra, self.derivatives_check = native_extra, backend_extra, derivatives_check
        self.result = CheckResult()
        self._tags: dict[str, TagsVerdict] = {}
        # The native_functions.yaml that backend yamls are resolved against: parsed once, on first need.
        self._backend_native: list[NativeSnapshot | None] = []
        self._backend_releases: list[Resolved] = []  # the release of that native_functions.yaml, once read
        # The native_functions.yaml of each derivatives.yaml / deprecated.yaml (by path; None: torch's), parsed once.
        self._autograd_natives: dict[str | None, NativeSnapshot | None] = {}
        self._release_natives: dict[str, NativeSnapshot | None] = {}

    def tags_for(self, path: str) -> TagsVerdict | None:
        if path not in self._tags:
            text = _read(path, self.result)
            if text is None:
                return None
            self._tags[path] = _tags_verdict(text) if self.memo is None else self.memo.tags(
                text, lambda: _tags_verdict(text))
        return self._tags[path]

    def _report(self, path: str, diagnostics: Iterable[Diagnostic]) -> None:
        self.result.items.extend(FileDiagnostic(path, d) for d in diagnostics)

    def check(self, path: str) -> None:
        text = _read(path, self.result)
        if text is None:
            return
        kind = classify(path, text)
        if kind != UNKNOWN:
            self.result.checked.append(path)
        if kind == TAGS:
            snapshot = self.tags_for(path)
            if snapshot is not None:
                self._report(path, snapshot.diagnostics)
        elif kind == NATIVE:
            self._native(path, text)
        elif kind in (DERIVATIVES, DEPRECATED):
            self._autograd(path, text, kind)
        elif kind == BACKEND:
            self._backend(path, text)
        elif kind == SELECTION:
            from ..model.selection import read_selection

            self._report(path, read_selection(text)[1])
        else:
            self.result.notes.append(f"opgen: {path}: not an operator yaml file (expected native_functions.yaml, "
                                     "tags.yaml, derivatives.yaml, a backend yaml or an operator selection yaml)")
            self.result.usage_error = True

    def _native(self, path: str, text: str) -> None:
        resolved = resolve_for(path, self.torch_version, text=text)
        tags_file = self.tags_path or os.path.join(os.path.dirname(path), "tags.yaml")
        valid_tags: frozenset[str] = frozenset()
        known = release_tags(resolved)
        if os.path.exists(tags_file):
            snapshot = self.tags_for(tags_file)
            valid_tags = snapshot.names if snapshot is not None else frozenset()
        elif self.tags_path is None and known is not None:  # a file copied alone, of a release found
            valid_tags = known
            self.result.notes.append(f"opgen: {path}: no tags.yaml beside it: its tags are checked against those "
                                     f"of {resolved.release}'s tags.yaml")
        else:
            self._report(path, [diag("OPG900", Span.point(0, 0),
                                     f"no tags.yaml found at {tags_file}; pass --tags so that tags can be checked")])
        self._report(path, release_diagnostics(resolved) + tree_diagnostics(path, resolved))
        self.result.releases[path] = resolved
        if resolved.note is not None:
            self.result.notes.append(f"opgen: {path}: {resolved.note}")
        if resolved.fit is Fit.OLDER:
            return
        backend_keys = _own_backend_keys(text)  # a backend's own operator file: read as its patched torchgen does
        if self.memo is not None and not backend_keys and not resolved.release.writes_native_aot_stubs:
            release = resolved.release
            verdict = self.memo.native(path, text, valid_tags, release,
                                       lambda slot: self._native_computed(path, text, valid_tags, release, slot))
            self._report(path, verdict.diagnostics)
            self._report(path, verdict.extra)
            return
        from ..index.native import NativeParser

        native = NativeParser(release=as_patched_by_backend(resolved.release, backend_keys)).parse(text, valid_tags)
        self._report(path, native.diagnostics)
        if backend_keys:
            self._report(path, own_file_diagnostics(native, resolved.release.version))
        if self.native_extra is not None:
            self._report(path, self.native_extra(path, native))

    def _native_computed(self, path: str, text: str, valid_tags: frozenset[str], release: Release,
                         slot: RecordSlot) -> NativeVerdict:
        """The verdict on an upstream-style file not in the memo: from the record of the last run on its path where
        the edit path can answer (check_edit.py), else by the full check."""
        record = slot.get()
        if record is not None:
            from .check_edit import edit_verdict  # (loads the parser: a verdict found in the memo needs none)

            try:
                found = edit_verdict(path, text, valid_tags, release, record, self.native_extra)  # type: ignore[arg-type]
            except (KeyError, TypeError, ValueError, IndexError):  # a record this opgen did not write: not used
                found = None
            except Exception as exc:  # a fault of the edit path itself: said, and the full check answers
                self.result.notes.append(f"opgen: note: {path}: the cached re-check failed ({type(exc).__name__}: "
                                         f"{exc}); checked in full")
                found = None
            if found is not None:
                slot.put(found[1])  # type: ignore[arg-type]
                return found[0]
        return self._native_verdict(path, text, valid_tags, release, slot)

    def _native_verdict(self, path: str, text: str, valid_tags: frozenset[str], release: Release,
                        slot: RecordSlot | None = None) -> NativeVerdict:
        """What _native reports of an upstream-style file (not a backend's own), for the memo; slot: where to keep
        the record the next run's edit path reads."""
        from ..index.native import NativeParser

        native = NativeParser(release=release).parse(text, valid_tags)
        extra = self.native_extra(path, native) if self.native_extra is not None else ()
        if slot is not None:
            from .check_edit import fallback_names, record_of

            record = record_of(native, extra, fallback_names(path, release))
            if record is not None:
                slot.put(record)  # type: ignore[arg-type]
        return NativeVerdict(tuple(native.diagnostics), tuple(extra))

    def _release_native(self, series: str) -> NativeSnapshot | None:
        """A torch line's own native_functions.yaml (op-plugin's version ranges), parsed once per run; None when
        neither the torchgen cache nor the installed torch has it. Only the release given with --torch-version
        (or the file given with --native-functions) when there is one."""
        default = self._backend_native[0] if self._backend_native else None
        if self.native_path is not None or self.torch_version is not None:
            given = parse_version(self.torch_version) if self.torch_version else None
            return self._vendor_native(default) if given in (None, parse_version(series)) else None
        if default is not None and default.release.series == series:
            return default
        return self._cached_release(series)

    def _cached_release(self, series: str) -> NativeSnapshot | None:
        if series not in self._release_natives:
            self._release_natives[series] = _release_snapshot(series)
        return self._release_natives[series]

    def _vendor_native(self, native: NativeSnapshot | None) -> NativeSnapshot | None:
        """What a vendor file is resolved against: with --torch-version and no --native-functions, that release's own
        native_functions.yaml when it is at hand (a vendor file lists the ops of the release it targets)."""
        if self.native_path is None and self.torch_version is not None:
            found = parse_version(self.torch_version)
            own = self._cached_release(f"{found[0]}.{found[1]}") if found else None
            return own or native
        return native

    def _autograd(self, path: str, text: str, kind: str) -> None:
        from ..index.derivatives import tree_native_functions

        native_file = tree_native_functions(path) or self.native_path
        installed = installed_native_functions() if native_file is None else None
        resolved = resolve_for_autograd(path, native_file or (installed[0] if installed else None), self.torch_version)
        self.result.releases[path] = resolved
        self._report(path, release_diagnostics(resolved))
        if resolved.fit is Fit.OLDER:  # as for a native_functions.yaml: nothing else is checked (nor read)
            self.result.notes.append(f"opgen: {path}: {resolved.note}")
            return
        if native_file not in self._autograd_natives:
            self._autograd_natives[native_file] = _native_to_resolve_against(
                native_file, self.tags_path, self.tags_for, self.result, self.torch_version)[0]
        self._report(path, _autograd_diagnostics(path, text, kind, native_file, self._autograd_natives[native_file],
                                                 self.derivatives_check, resolved.release))

    def _backend(self, path: str, text: str) -> None:
        from ..index.backend import check_backend

        if not self._backend_native:
            native, resolved = _native_to_resolve_against(self.native_path, self.tags_path, self.tags_for,
                                                          self.result, self.torch_version)
            self._backend_native.append(native)
            self._backend_releases = [resolved] if resolved is not None else []
        native = self._backend_native[0]
        older = [r for r in self._backend_releases if r.fit is Fit.OLDER]
        if older:  # as generate-backend refuses it: an error, and nothing else checked against that yaml
            self._report(path, release_diagnostics(older[0]))
            return
        if native is None:
            why = (f"cannot read {self.native_path}, the native_functions.yaml given with --native-functions"
                   if self.native_path else "no native_functions.yaml to resolve the op names against: pass "
                   "--native-functions F (or install torch 2.13, whose torchgen ships one)")
            self._report(path, [diag("OPG900", Span.point(0, 0), why)])
            return
        from ..model.vendor_formats import vendor_format

        if vendor_format(path, text) is not None:
            native = self._vendor_native(native) or native
        backend = check_backend(text, native, path, self._release_native)
        self._report(path, backend.diagnostics)
        if backend.vendor is not None:
            return
        if self.backend_extra is not None:
            self._report(path, self.backend_extra(path, text, backend, native))


def _tags_verdict(text: str) -> TagsVerdict:
    from ..index.native import TagsParser

    snapshot = TagsParser().parse(text)
    return TagsVerdict(snapshot.names, tuple(snapshot.diagnostics))


def _own_backend_keys(text: str) -> frozenset[str]:
    """index.own_ops.own_backend_keys, whose module (and the parser it loads) is imported only for a file that
    names a PrivateUse key at all."""
    if "PrivateUse" not in text:
        return frozenset()
    from ..index.own_ops import own_backend_keys

    return own_backend_keys(text)


def own_file_diagnostics(native: NativeSnapshot, version: str) -> list[Diagnostic]:
    """A backend's own operator file against release `version`'s native_functions.yaml."""
    from ..index.own_ops import upstream_ops
    from .own_ops import upstream_diagnostics, upstream_missing

    upstream = upstream_ops(version)
    return upstream_diagnostics(native.functions, upstream) if upstream is not None else [upstream_missing(version)]


def _autograd_diagnostics(path: str, text: str, kind: str, native_file: str | None, native: NativeSnapshot | None,
                          derivatives_check: DerivativesRules | None, release: Release) -> list[Diagnostic]:
    """A derivatives.yaml or deprecated.yaml of the release against its native_functions.yaml (when there is one)."""
    from ..index.derivatives import DeprecatedParser, DerivativesParser

    found: list[Diagnostic] = []
    if native is None:
        where = f"cannot read {native_file}" if native_file else (
            f"no native_functions.yaml beside this {os.path.basename(path)} (aten/src/ATen/native/ of the same tree)")
        found.append(diag("OPG900", Span.point(0, 0), f"{where}: its schemas are not resolved; pass --native-functions F"))
    if kind == DEPRECATED:
        return found + (list(DeprecatedParser(release).check(text, native.functions)) if native is not None else [])
    document = DerivativesParser().parse(text)
    if native is None or derivatives_check is None:
        return found + list(document.diagnostics)
    return found + list(derivatives_check(document, native, release))


def _release_snapshot(series: str) -> NativeSnapshot | None:
    """The native_functions.yaml of torch X.Y as that release's rules read it, with its tags."""
    from ..index.base_text import release_native_path, torchgen_cache_root
    from ..index.native import NativeParser, TagsParser

    known_key = parse_version(series)

    known = resolve(series, "op-plugin's version range")
    root = torchgen_cache_root()
    patches = sorted(v for v in (os.listdir(root) if os.path.isdir(root) else ()) if parse_version(v) == known_key)
    path = next((p for v in (*reversed(patches), f"{series}.0") if (p := release_native_path(v))), None)
    if known is None or known.fit is not Fit.KNOWN or path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(os.path.dirname(path), "tags.yaml"), encoding="utf-8") as f:
            tags = TagsParser().parse(f.read()).names
    except (OSError, UnicodeDecodeError):
        return None
    return NativeParser(release=known.release).parse(text, tags)


def _native_to_resolve_against(native_path: str | None, tags_path: str | None,
                               tags_for: Callable[[str], TagsVerdict | None], result: CheckResult,
                               torch_version: str | None) -> tuple[NativeSnapshot | None, Resolved | None]:
    """The native_functions.yaml a backend, derivatives or deprecated yaml is resolved against: native_path
    (--native-functions, or the one of the yaml's tree; with --tags or the tags.yaml beside it), else the installed
    torchgen's copy; and its release (None when there is no such file to read)."""
    if native_path is None:
        installed = installed_native_functions()
        if installed is None:
            return None, None
        native_path, default_tags = installed
    else:
        default_tags = os.path.join(os.path.dirname(native_path), "tags.yaml")
    text = _read(native_path, result)
    if text is None:
        return None, None
    tags_file = tags_path or default_tags
    valid_tags: frozenset[str] = frozenset()
    if os.path.exists(tags_file):
        snapshot = tags_for(tags_file)
        valid_tags = snapshot.names if snapshot is not None else frozenset()
    else:
        result.notes.append(f"opgen: no tags.yaml found at {tags_file}; pass --tags so that {native_path} "
                            "is read with its tags")
    from ..index.native import NativeParser

    resolved = resolve_for(native_path, torch_version, text=text)
    result.releases[native_path] = resolved
    if resolved.note is not None:
        result.notes.append(f"opgen: {native_path}: {resolved.note}")
    return NativeParser(release=resolved.release).parse(text, valid_tags), resolved
