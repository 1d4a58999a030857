"""`opgen generate-lazy`: read the inputs, check them as gen_lazy_tensor does, plan, write.

The IO around the pure pieces. Problems with the inputs come back as placed
diagnostics (the backend yaml's own, missing kernels with --impl-path,
missing shape-inference declarations, non_native entries, ops the lazy codegen
cannot handle); problems with the run itself as messages.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...analysis.lazy.check import check_lazy
from ...analysis.lazy.nonnative import read_non_native
from ...analysis.lazy.shape import parse_shape_header
from ...diagnostics import Diagnostic
from ...index.inputs import InputError, InvalidInput
from ...index.native import NativeParser, NativeSnapshot
from ...model.cpp_names import header_path_problem, qualified_name_problem
from ...pieces.backend_target import target_of
from ...pieces.lazy.code import sort_groups
from ...pieces.lazy.options import LazyOptions
from ...releases import Release
from ...report import FileDiagnostic
from ..backend.run import (
    BackendResult,
    check_backend_files,
    default_templates,
    invalid_native_result,
    load_native_for,
    pasted_value_errors,
    read_impls,
    read_text,
)
from ..plan import PlanError, materialize
from ..writer import write_all
from .plan import TEMPLATES, plan_lazy, registration


@dataclass(frozen=True)
class LazyRunOptions:
    source_yaml: str
    output_dir: str
    impl_paths: tuple[str, ...] = ()
    dry_run: bool = False
    native_functions: str | None = None
    templates: str | None = None
    # gen_lazy_tensor's settings, with the torch release whose gen_lazy_tensor is matched (no default: the tree's).
    lazy: LazyOptions = field(kw_only=True)

    @property
    def release(self) -> Release:
        return self.lazy.release


LazyResult = BackendResult


def _templates(folder: str | None, native_functions: str | None) -> dict[str, str]:
    folder = folder or default_templates(native_functions)
    if folder is None:
        raise InputError("no templates folder: pass --templates D (torch is not installed to provide one)")
    return {name: read_text(os.path.join(folder, name)) for name in TEMPLATES}


def _read_header(path: str) -> str:
    try:
        return read_text(path)
    except InputError as exc:
        raise InputError(f"Unable to read from the specified shape_inference_hdr file: {path} ({exc})") from exc


def _load(options: LazyRunOptions, text: str) -> tuple[NativeSnapshot, tuple[str, frozenset[str]] | None]:
    native, whole_text, tags = load_native_for(options.native_functions, text, options.release)
    if any(d.is_error for d in native.diagnostics):
        return NativeParser(release=options.release).parse(whole_text, tags), None
    return native, (whole_text, tags)


def _placed(options: LazyRunOptions, found: Iterable[Diagnostic]) -> tuple[FileDiagnostic, ...]:
    return tuple(FileDiagnostic(options.source_yaml, d) for d in found)


def lazy_value_errors(lazy: LazyOptions) -> tuple[str, ...]:
    """gen_lazy_tensor's flags the generated C++ holds as given that are not what they claim to be."""
    headers = [("--node-base-hdr", lazy.node_base_hdr), ("--shape-inference-hdr", lazy.shape_inference_hdr),
               ("--tensor-class-hdr", lazy.tensor_class_hdr)]
    problems = [header_path_problem(value, f"the header {flag}") for flag, value in headers if value is not None]
    problems += [qualified_name_problem(value, f"the class {flag}")
                 for flag, value in (("--node-base", lazy.node_base), ("--tensor-class", lazy.tensor_class))]
    return tuple(f"{p}; it is copied into the generated C++ as it is" for p in problems if p is not None)


def generate_lazy(options: LazyRunOptions) -> LazyResult:
    """Check, plan and (unless a dry run) write gen_lazy_tensor's files."""
    lazy = options.lazy
    pasted = pasted_value_errors(options.output_dir, registration(lazy)) + lazy_value_errors(lazy)
    if pasted:
        return LazyResult(errors=pasted)
    try:
        text = read_text(options.source_yaml)
        native, whole = _load(options, text)
        impls = read_impls(options.impl_paths)
        templates = _templates(options.templates, options.native_functions)
        header_text = _read_header(lazy.shape_inference_hdr)
    except InputError as exc:
        return LazyResult(errors=(str(exc),), read=isinstance(exc, InvalidInput))
    if any(d.is_error for d in native.diagnostics):
        return invalid_native_result(options.native_functions, native)
    snapshot, diagnostics = check_backend_files(options.source_yaml, text, native, impls, experimental=False)
    if whole is not None and snapshot.has_errors:
        native = NativeParser(release=options.release).parse(*whole)  # did-you-mean needs every op name
        snapshot, diagnostics = check_backend_files(options.source_yaml, text, native, impls, experimental=False)
    result = LazyResult(diagnostics=tuple(diagnostics), read=True)
    if result.has_errors or snapshot.resolved is None:
        non_native_problems = read_non_native(text, options.release)[1]  # reported with the yaml's own, as gen_lazy_tensor reads it
        return dataclasses.replace(result, diagnostics=result.diagnostics + _placed(options, non_native_problems))
    target = target_of(snapshot.resolved)
    if target is None:
        return dataclasses.replace(result, errors=(f"{options.source_yaml} lists no ops under supported or "
                                                   "full_codegen: gen_lazy_tensor needs a backend key",))
    groups = sort_groups(native.functions.groups)
    header = parse_shape_header(lazy.shape_inference_hdr, header_text)
    checked = check_lazy(text, snapshot.resolved, target, groups, header, lazy)
    result = dataclasses.replace(result, diagnostics=result.diagnostics + _placed(options, checked.diagnostics))
    if checked.has_errors or checked.pieces is None:
        return result
    pieces = checked.pieces
    try:
        planned = plan_lazy(target, groups, options.output_dir, templates, pieces, lazy)
        files = tuple(materialize(planned, templates, lazy.release))
    except PlanError as exc:
        return dataclasses.replace(result, errors=(str(exc),))
    written = None
    if not options.dry_run:
        written = write_all([(options.output_dir, f.path, f.data) for f in files])
    return LazyResult(result.diagnostics, written.errors if written else (), files, written, True)
