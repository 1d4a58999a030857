"""`opgen check`: every mistake in native_functions.yaml, tags.yaml, backend, derivatives and selection yamls."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .. import status
from ..releases import Fit
from ..report import RENDERERS, FileDiagnostic, capped_per_file, summary_line
from .options import add_cache_arguments, add_format_argument, open_cache
from .torch_version import add_torch_version_argument

if TYPE_CHECKING:  # the checkers are loaded on first use: `opgen --help` stays quick
    from ..analysis.autograd.load import DerivativesChecker
    from ..diagnostics import Diagnostic
    from ..index.backend import BackendSnapshot
    from ..index.derivatives import DerivativesDocument
    from ..index.native import NativeSnapshot
    from ..model.native_function import BackendIndex, NativeFunction
    from ..releases import Release

    BackendCheck = Callable[[str, str, BackendSnapshot, NativeSnapshot], Sequence[Diagnostic]]


def add_check_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="report every mistake in PyTorch's operator yamls",
                           description="Report every mistake in native_functions.yaml, tags.yaml, backend yamls "
                                       "(*_functions.yaml with a backend: key; lazy ones as gen_lazy_tensor reads "
                                       "them), derivatives.yaml, autograd/deprecated.yaml and operator selection "
                                       "yamls (gen.py's --op-selection-yaml-path, recognised by their first key), "
                                       "each with the rules of its torch release. Diagnostics and the summary line "
                                       "go to stdout, messages about the run to stderr (docs/cli.md).")
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="files, or folders searched for the operator yamls named above (a folder holding none "
                            "is a usage error)")
    check.add_argument("--tags", metavar="F", help="tags.yaml to use (default: the one beside each file)")
    check.add_argument("--native-functions", metavar="F", help="native_functions.yaml that backend yamls "
                       "(and a derivatives.yaml outside a PyTorch tree) are resolved against (default: the one packaged "
                       "with the installed torchgen)")
    add_format_argument(check)
    check.add_argument("-q", "--quiet", action="store_true",
                       help="no summary line after the diagnostics of the text format")
    check.add_argument("--impl-path", "--impl_path", action="append", default=[], metavar="F",
                       help="a backend's C++ kernel file: report the listed ops of each backend yaml it does not "
                            "define (repeatable)")
    check.add_argument("--shape-inference-hdr", "--shape_inference_hdr", metavar="F",
                       help="lazy backend yamls: the header whose compute_shape_ declarations full_codegen ops need "
                            "(gen_lazy_tensor's --shape-inference-hdr; default: for a `backend: Lazy` yaml "
                            "the torch/csrc/lazy/core/shape_inference.h of the PyTorch checkout holding the current "
                            "folder or the yaml, else the installed torch's; other backends are not checked without "
                            "it)")
    check.add_argument("--kernels", metavar="DIR", action="append",
                       help="C++ sources to look for the kernels native_functions.yaml names (repeatable): a "
                            "PyTorch checkout's root (its aten/src/ATen is indexed) or any folder")
    add_torch_version_argument(check)
    add_cache_arguments(check, "the verdicts on native_functions.yaml and tags.yaml files are kept there, and a file "
                               "unchanged since is not parsed again (the output is the same: docs/cli.md)")
    check.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    from ..analysis.check import check_paths
    from ..analysis.check_memo import CheckMemo

    lazy = _lazy_checker(args.shape_inference_hdr)
    if isinstance(lazy, str):
        print(f"opgen: cannot read the shape-inference header {lazy}", file=sys.stderr)
        return status.USAGE
    absent = [d for d in args.kernels or () if not os.path.isdir(d)]
    if absent:  # (every kernel would be reported missing from it)
        print(f"opgen: --kernels: no such folder: {', '.join(absent)}", file=sys.stderr)
        return status.USAGE
    with open_cache(args) as cache:
        # The memo's verdicts are the parse's and the AOTI shim check's; --kernels adds the C++ sources: not kept.
        memo = CheckMemo(cache) if cache.enabled and not args.kernels else None
        result = check_paths(args.paths, args.tags, args.native_functions,
                             native_extra=_native_checker(args.kernels), backend_extra=lazy,
                             derivatives_check=_derivatives_checker(), torch_version=args.torch_version, memo=memo)
        cache.evict_if_grown()
        cache_notes = [f"opgen: note: {note}" for note in cache.notes]
    if args.impl_path:
        kernels, notes = impl_path_items(args.paths, args.native_functions, args.impl_path, args.torch_version)
        result.items.extend(kernels)
        result.notes.extend(notes)
        result.usage_error = result.usage_error or bool(notes)
    sys.stdout.write(RENDERERS[args.format](capped_per_file(result.items)))
    # Files with a diagnostic count too (a tags.yaml read beside, a file that is not UTF-8 text); inputs that could
    # not be read are said on stderr, and a run that read nothing has no summary ("no problems in 0 files" is none).
    files = set(result.checked) | {item.path for item in result.items}
    if args.format == "text" and not args.quiet and files:
        # (a release older than those known is said by its OPG951: nothing was checked as it)
        labels = dict.fromkeys(r.label for r in result.releases.values() if r.fit is not Fit.OLDER)
        sys.stdout.write(summary_line(result.items, len(files), tuple(labels)))
    for note in (*result.notes, *cache_notes):
        print(note, file=sys.stderr)
    if result.usage_error:
        return status.USAGE
    return status.INPUT_ERRORS if result.has_errors else status.CLEAN


def _native_checker(kernel_roots: list[str] | None) -> Callable[[str, NativeSnapshot], list[Diagnostic]]:
    """What gen.py's AOTI shim generator fails on (it needs fallback_ops.py), what it refuses in the tree's
    native-AOT declarations (torch 2.15 on), and with --kernels the kernels missing from the C++ sources."""
    kernels = _kernel_checker(kernel_roots) if kernel_roots else None

    def check(path: str, native: NativeSnapshot) -> list[Diagnostic]:
        found = kernels(native) if kernels is not None else []
        if native.release.parse_only:  # a backend's own operator file: no gen.py runs on it
            return found
        from ..analysis.shims import shim_check  # (loaded when a file is parsed: not for a verdict kept)

        return shim_check(path, native) + _native_aot_check(path, native) + found

    return check


def _native_aot_check(path: str, native: NativeSnapshot) -> list[Diagnostic]:
    """What gen.py refuses in the tree's native-AOT declarations; only a release that reads them loads the reader."""
    if not native.release.writes_native_aot_stubs:
        return []
    from ..codegen.generate import native_aot_check  # noqa: PLC0415  (the generator's reader: torch 2.15 on only)

    return native_aot_check(path, native)


def _kernel_checker(roots: list[str]) -> Callable[[NativeSnapshot], list[Diagnostic]]:
    """A check of kernels missing from the C++ sources under roots, declared as the codegen would."""
    from ..analysis.kernels import missing_kernels
    from ..index.kernels import KernelIndex, default_cache_path
    from ..pieces.dest.native_declarations import compute_native_function_declaration, kernel_parameter_types

    index = KernelIndex.build(roots, cache=default_cache_path(roots))

    def check(native: NativeSnapshot) -> list[Diagnostic]:
        def declare(f: NativeFunction, backend: BackendIndex) -> str:
            return "\n".join(compute_native_function_declaration(f, backend, native.release))

        return missing_kernels(native, index, declare=declare,
                               parameters=lambda f, b: kernel_parameter_types(f, b, native.release.cpp_spelling),
                               with_meta=not native.release.parse_only,
                               copies_by_native_name=not native.release.view_copy_kernels_by_backend_index)

    return check


def _derivatives_checker() -> Callable[[DerivativesDocument, NativeSnapshot, Release], Sequence[Diagnostic]]:
    checker: DerivativesChecker | None = None  # made for the first derivatives.yaml

    def check(document: DerivativesDocument, native: NativeSnapshot, release: Release) -> Sequence[Diagnostic]:
        from ..analysis.autograd.load import DerivativesChecker  # loaded for a derivatives.yaml only

        nonlocal checker
        if checker is None:
            checker = DerivativesChecker()
        return checker.check(document, native.functions, release).diagnostics

    return check


def _lazy_checker(header_path: str | None) -> BackendCheck | str:
    """What gen_lazy_tensor rejects in a lazy backend yaml, its compute_shape_ functions checked against the
    header given (else, for PyTorch's own `backend: Lazy` yaml, the one of the PyTorch checkout holding the
    current folder or the yaml, else the installed wheel's; other backends: not checked). Why not, for an
    unreadable header. The readers load when a header is given or a backend yaml is checked (a check of
    native_functions.yaml needs none)."""
    given = None
    if header_path:
        from ..analysis.lazy.shape import parse_shape_header
        from ..index.inputs import InputError, read_input

        try:
            given = parse_shape_header(header_path, read_input(header_path))
        except InputError as exc:
            return str(exc)

    def check(path: str, text: str, snapshot: BackendSnapshot, native: NativeSnapshot) -> tuple[Diagnostic, ...]:
        # gen_lazy_tensor's check is loaded for a backend yaml only (a check of native_functions.yaml needs none).
        from ..analysis.lazy.check import is_lazy_yaml, lazy_diagnostics, shape_header_path
        from ..analysis.lazy.shape import parse_shape_header
        from ..diagnostics import diag
        from ..index.inputs import InputError, read_input

        resolved = snapshot.resolved
        if resolved is None or not is_lazy_yaml(resolved):
            return ()
        header = given
        unread: tuple[Diagnostic, ...] = ()
        if header is None:
            found = shape_header_path(resolved, None, (os.getcwd(), os.path.dirname(os.path.abspath(path))))
            try:
                header = parse_shape_header(found, read_input(found)) if found else None
            except InputError as exc:  # as the language server says it: the yaml is still checked, shapes are not
                unread = (diag("OPG900", resolved.yaml.anchor, f"cannot read the shape-inference header {exc}; "
                               "compute_shape_ functions are not checked"),)
        return unread + tuple(lazy_diagnostics(text, snapshot, native.functions.groups, header, native.release))

    return check


def impl_path_items(paths: list[str], native_path: str | None, impl_paths: list[str], torch_version: str | None
                    ) -> tuple[list[FileDiagnostic], list[str]]:
    """`opgen check --impl-path F`: the missing-kernel check of every backend yaml among paths (and notes)."""
    from ..analysis.check import BACKEND, classify, expand
    from ..codegen.backend.run import check_backend_files, load_native_snapshot, read_impls, read_text
    from ..index.inputs import InputError, default_native_functions
    from ..releases import resolve_for

    try:
        impls = read_impls(tuple(impl_paths))
    except InputError as exc:
        return [], [f"opgen: {exc}"]
    items: list[FileDiagnostic] = []
    notes: list[str] = []
    native = None
    for path in expand(paths):
        try:
            text = read_text(path)
        except InputError:
            continue  # check_paths reports it
        if classify(path, text) != BACKEND:
            continue
        if native is None:
            try:
                release = resolve_for(native_path or default_native_functions(), torch_version).release
                native = load_native_snapshot(native_path, release)
            except InputError as exc:
                return items, notes + [f"opgen: {exc}"]
        _, found = check_backend_files(path, text, native, impls, experimental=False)
        items.extend(d for d in found if d.diagnostic.code in ("OPG530", "OPG531", "OPG532"))
    return items, notes
