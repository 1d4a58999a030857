"""`opgen generate-backend`: read the inputs, check them, plan gen_backend_stubs' files, write them.

The IO around the pure pieces (check_backend, the missing-kernel check, plan_backend). Problems
with the inputs come back as placed diagnostics; problems with the run itself (an unreadable
file) as messages.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...index.backend import BackendSnapshot, check_backend
from ...index.inputs import InputError, InvalidInput, default_native_functions, load_native, packaged_aten, read_input
from ...index.native import NativeParser, NativeSnapshot, TagsParser
from ...model.cpp_names import header_path_problem, identifier_problem
from ...pieces.backend_target import target_of
from ...releases import Release
from ...report import FileDiagnostic
from ..plan import GeneratedFile, PlanError, materialize
from ..writer import WriteResult, write_all
from .stubs import RegistrationOptions, eager, plan_backend
from .subset import backend_key, listed_names, subset_text

if TYPE_CHECKING:
    from ...analysis.backend_kernels import ImplFile


@dataclass(frozen=True)
class BackendOptions:
    source_yaml: str
    output_dir: str
    impl_paths: tuple[str, ...] = ()
    dry_run: bool = False
    native_functions: str | None = None
    templates: str | None = None
    # gen_dispatcher_registrations' switches; None: gen_backend_stubs' own (eager). Their release is `release`.
    registration: RegistrationOptions | None = None
    # pytorch#172539's proposed gen_backend_stubs (structured PrivateUse1 kernels) instead of the release's: no
    # default either, so that a caller that forgets it fails instead of generating the other format.
    experimental: bool = field(kw_only=True)
    # The torch release whose torchgen is matched: no default, each caller says which (the tree's).
    release: Release = field(kw_only=True)


@dataclass(frozen=True)
class BackendResult:
    diagnostics: tuple[FileDiagnostic, ...] = ()
    # Problems with the run itself: unreadable inputs, a plan that cannot be built.
    errors: tuple[str, ...] = ()
    files: tuple[GeneratedFile, ...] = ()
    written: WriteResult | None = None
    # True when the inputs were read (errors are then failures of the inputs' content or of the writing).
    read: bool = False

    @property
    def has_errors(self) -> bool:
        return bool(self.errors) or any(d.diagnostic.is_error for d in self.diagnostics)


def invalid_native_result(path: str | None, native: NativeSnapshot) -> BackendResult:
    """native_functions.yaml has errors: each at its line (an error of the inputs: exit status 1)."""
    path = path or default_native_functions() or "native_functions.yaml"
    errors = tuple(FileDiagnostic(path, d) for d in native.diagnostics if d.is_error)
    return BackendResult(diagnostics=errors, errors=(f"{path} has {len(errors)} error(s); nothing generated",),
                         read=True)


def load_native_snapshot(path: str | None, release: Release) -> NativeSnapshot:
    """native_functions.yaml at path (default: the installed torchgen's), with the tags.yaml beside it, read as
    `release`."""
    return load_native(path, None, release=release).snapshot


def load_native_for(path: str | None, backend_text: str, release: Release
                    ) -> tuple[NativeSnapshot, str, frozenset[str]]:
    """Only the entries the backend yaml needs (see subset.py), plus the whole text and the tags for a re-check."""
    path = path or default_native_functions()
    if path is None:
        raise InputError("no native_functions.yaml: pass --native-functions (torch is not installed to provide one)")
    text = read_text(path)
    tags = TagsParser().parse(read_text(os.path.join(os.path.dirname(path), "tags.yaml"))).names
    part = subset_text(text, listed_names(backend_text), backend_key(backend_text), release.cuda_kernels_in_torch_cpu)
    return NativeParser(release=release).parse(part, tags), text, tags


read_text = read_input  # the name the backend and lazy commands use


# The templates gen_backend_stubs fills (read at run time, like native_functions.yaml).
TEMPLATES = ("DispatchKeyNativeFunctions.h", "RegisterDispatchKey.cpp", "RegisterDispatchDefinitions.ini")


def read_templates(folder: str) -> dict[str, str]:
    return {name: read_text(os.path.join(folder, name)) for name in TEMPLATES}


def default_templates(native_functions: str | None = None) -> str | None:
    """The templates that belong with the native_functions.yaml given (templates/ beside its native/ folder, as
    in a checkout or a packaged torchgen: that release's), else the installed torchgen's."""
    if native_functions:
        beside = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(native_functions))), "templates")
        if all(os.path.isfile(os.path.join(beside, name)) for name in TEMPLATES):
            return beside
    aten = packaged_aten()
    return os.path.join(aten, "templates") if aten else None


def check_backend_files(source_yaml: str, text: str, native: NativeSnapshot, impls: tuple[ImplFile, ...],
                        *, vendors: bool = True, experimental: bool
                        ) -> tuple[BackendSnapshot, list[FileDiagnostic]]:
    """The backend yaml's diagnostics, plus the missing-kernel check when implementation files are given; with
    vendors=False a vendor's file is read as gen_backend_stubs reads it."""
    snapshot = check_backend(text, native, vendors=vendors, experimental=experimental)
    found = [FileDiagnostic(source_yaml, d) for d in snapshot.diagnostics]
    if impls and snapshot.resolved is not None and not snapshot.has_errors:
        from ...analysis.backend_kernels import check_kernels  # only with --impl-path: it brings the C++ scanner

        found.extend(check_kernels(snapshot.resolved, native.functions, source_yaml, impls, native.release.cpp_spelling))
    return snapshot, found


def read_impls(paths: tuple[str, ...]) -> tuple[ImplFile, ...]:
    if not paths:
        return ()
    from ...analysis.backend_kernels import ImplFile

    return tuple(ImplFile(p, read_text(p)) for p in paths)


def pasted_value_errors(output_dir: str, registration: RegistrationOptions | None) -> tuple[str, ...]:
    """The values the generated C++ holds as given (the output folder in #include "<output_dir>/...", the
    registration function's name) that are not what they claim to be."""
    problems = [header_path_problem(output_dir, "the output folder (-o)")]
    if registration is not None and registration.backend_name and not registration.eager:
        problems.append(identifier_problem(registration.backend_name, "the backend name (--deferred-registration)"))
    return tuple(f"{p}; it is copied into the generated C++ as it is" for p in problems if p is not None)


def generate_backend(options: BackendOptions, native: NativeSnapshot | None = None) -> BackendResult:
    """Check, plan and (unless a dry run) write; `native` saves parsing native_functions.yaml again."""
    pasted = pasted_value_errors(options.output_dir, options.registration)
    if pasted:
        return BackendResult(errors=pasted)
    whole: tuple[str, frozenset[str]] | None = None
    try:
        text = read_text(options.source_yaml)
        if native is None:
            native, whole_text, tags = load_native_for(options.native_functions, text, options.release)
            whole = (whole_text, tags)
            if any(d.is_error for d in native.diagnostics):
                native, whole = NativeParser(release=options.release).parse(*whole), None
        if any(d.is_error for d in native.diagnostics):
            return invalid_native_result(options.native_functions, native)
        impls = read_impls(options.impl_paths)
        template_dir = options.templates or default_templates(options.native_functions)
        if template_dir is None:
            return BackendResult(errors=("no templates folder: pass --templates D (torch is not installed to "
                                         "provide one)",))
        templates = read_templates(template_dir)
    except InputError as exc:
        return BackendResult(errors=(str(exc),), read=isinstance(exc, InvalidInput))
    snapshot, diagnostics = check_backend_files(options.source_yaml, text, native, impls, vendors=False,
                                                experimental=options.experimental)
    if whole is not None and snapshot.has_errors:
        # Errors are reported against the whole file (did-you-mean needs every op name).
        native = NativeParser(release=options.release).parse(*whole)
        snapshot, diagnostics = check_backend_files(options.source_yaml, text, native, impls, vendors=False,
                                                    experimental=options.experimental)
    result = BackendResult(diagnostics=tuple(diagnostics), read=True)
    if result.has_errors or snapshot.resolved is None:
        return result
    target = target_of(snapshot.resolved)
    if target is None:
        return result
    try:
        registration = dataclasses.replace(options.registration or eager(options.release), release=options.release)
        planned = plan_backend(target, native.functions.groups, options.output_dir, templates, registration)
        files = tuple(materialize(planned, templates, options.release))
    except PlanError as exc:
        return BackendResult(diagnostics=tuple(diagnostics), errors=(str(exc),), read=True)
    written = None
    if not options.dry_run:
        written = write_all([(options.output_dir, f.path, f.data) for f in files])
    return BackendResult(tuple(diagnostics), written.errors if written else (), files, written, True)
