"""The `opgen` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import NoReturn

from . import TORCHGEN_VERSION, VERSION_TEXT, status
from .backend_cli import add_generate_backend_parser, impl_path_items
from .generate_cli import add_generate_parser
from .release_cli import add_torch_version_argument, resolve_release
from .releases import DEFAULT, versions_text
from .report import RENDERERS, capped_per_file, summary_line


def _check(args: argparse.Namespace) -> int:
    from .analysis.check import check_paths
    from .codegen.inputs import InputError

    try:
        lazy = _lazy_checker(args.shape_inference_hdr)
    except InputError as exc:
        print(f"opgen: cannot read the shape-inference header {exc}", file=sys.stderr)
        return status.USAGE
    absent = [d for d in args.kernels or () if not os.path.isdir(d)]
    if absent:  # (every kernel would be reported missing from it)
        print(f"opgen: --kernels: no such folder: {', '.join(absent)}", file=sys.stderr)
        return status.USAGE
    result = check_paths(args.paths, args.tags, args.native_functions,
                         native_extra=_kernel_checker(args.kernels) if args.kernels else None, backend_extra=lazy,
                         derivatives_check=_derivatives_checker(), torch_version=args.torch_version)
    if args.impl_path:
        kernels, notes = impl_path_items(args.paths, args.native_functions, args.impl_path)
        result.items.extend(kernels)
        result.notes.extend(notes)
        result.usage_error = result.usage_error or bool(notes)
    sys.stdout.write(RENDERERS[args.format](capped_per_file(result.items)))
    if args.format == "text" and not args.quiet:
        # Files with a diagnostic count too (a tags.yaml read beside, a file that is not UTF-8 text).
        files = set(result.checked) | {item.path for item in result.items}
        sys.stdout.write(summary_line(result.items, len(files)))
    for note in result.notes:
        print(note, file=sys.stderr)
    if result.usage_error:
        return status.USAGE
    return status.INPUT_ERRORS if result.has_errors else status.CLEAN


def _kernel_checker(roots: list[str]):
    """A check of kernels missing from the C++ sources under roots, declared as the codegen would."""
    from .analysis.kernels import missing_kernels
    from .codegen.dest.native_declarations import compute_native_function_declaration, kernel_parameter_types
    from .index.kernels import KernelIndex, default_cache_path

    index = KernelIndex.build(roots, cache=default_cache_path(roots))

    def declare(f, backend) -> str:
        return "\n".join(compute_native_function_declaration(f, backend))

    return lambda native: missing_kernels(native, index, declare=declare, parameters=kernel_parameter_types)


def _derivatives_checker():
    from .codegen.autograd.load import DerivativesChecker

    checker = DerivativesChecker()
    return lambda document, native: checker.check(document, native.functions).diagnostics


def _lazy_checker(header_path: str | None):
    """What gen_lazy_tensor rejects in a lazy backend yaml, its compute_shape_ functions checked against the
    header given (else, for PyTorch's own `backend: Lazy` yaml, the one of the PyTorch checkout holding the
    current folder or the yaml, else the installed wheel's; other backends: not checked). Raises InputError for an
    unreadable header."""
    from .codegen.inputs import InputError, read_input
    from .codegen.lazy.check import is_lazy_yaml, lazy_diagnostics, shape_header_path
    from .codegen.lazy.shape import parse_shape_header
    from .diagnostics import diag

    given = parse_shape_header(header_path, read_input(header_path)) if header_path else None

    def check(path: str, text: str, snapshot, native) -> tuple:
        resolved = snapshot.resolved
        if resolved is None or not is_lazy_yaml(resolved):
            return ()
        header, unread = given, ()
        if header is None:
            found = shape_header_path(resolved, None, (os.getcwd(), os.path.dirname(os.path.abspath(path))))
            try:
                header = parse_shape_header(found, read_input(found)) if found else None
            except InputError as exc:  # as the language server says it: the yaml is still checked, shapes are not
                unread = (diag("OPG900", resolved.yaml.anchor, f"cannot read the shape-inference header {exc}; "
                               "compute_shape_ functions are not checked"),)
        return unread + tuple(lazy_diagnostics(text, snapshot, native.functions.groups, header))

    return check


def _explain(args: argparse.Namespace) -> int:
    from .codegen.explain import Explainer
    from .codegen.inputs import InputError, InvalidInput, default_native_functions, load_native
    from .codegen.options import CodegenOptions

    resolved = resolve_release(args, args.native_functions or default_native_functions())
    if resolved is None:
        return status.USAGE
    try:
        inputs = load_native(args.native_functions, args.tags, CodegenOptions(release=resolved.release).ignore_keys,
                             resolved.release)
    except InputError as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.INPUT_ERRORS if isinstance(exc, InvalidInput) else status.USAGE
    if inputs.errors:
        print(f"opgen: {inputs.path} has {len(inputs.errors)} error(s); run 'opgen check' on it", file=sys.stderr)
        return status.INPUT_ERRORS
    explainer = Explainer(inputs.snapshot.functions, resolved.release)
    if explainer.function(args.op) is None:
        near = ", ".join(explainer.closest(args.op)) or "none"
        print(f"opgen: unknown operator '{args.op}' (write name.overload, e.g. add.Tensor); closest: {near}",
              file=sys.stderr)
        return status.USAGE
    snippets = explainer.explain(args.op, args.backend)
    if args.json:
        payload = {"op": args.op, "snippets": [{"title": s.title, "file": s.file, "code": s.code} for s in snippets]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"// ===== {s.title} ({s.file})\n{s.code}\n\n" for s in snippets))
    return status.CLEAN


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opgen", description="Check and generate PyTorch operator yaml "
                                                               f"(matches torchgen {TORCHGEN_VERSION} unless the "
                                                               "inputs or --torch-version name another release).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"opgen {VERSION_TEXT}\ntorch releases known: {versions_text()} "
                                f"(default {DEFAULT.version})")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report every mistake in native_functions.yaml / tags.yaml files")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to check")
    check.add_argument("--tags", metavar="F", help="tags.yaml to use (default: the one beside each file)")
    check.add_argument("--native-functions", metavar="F", help="native_functions.yaml that backend yamls "
                       "(and a derivatives.yaml outside a PyTorch tree) are resolved against (default: the one packaged "
                       "with the installed torchgen)")
    check.add_argument("--format", choices=sorted(RENDERERS), default="text")
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
    check.set_defaults(run=_check)
    explain = sub.add_parser("explain", help="show the C++ torchgen generates for one operator")
    explain.add_argument("op", metavar="OP", help="name.overload (or name for the default overload)")
    explain.add_argument("--backend", metavar="KEY", help="only the pieces of this dispatch key (an out-of-tree "
                                                          "key shows its <KEY>NativeFunctions.h declaration)")
    explain.add_argument("--json", action="store_true", help="print {op, snippets: [{title, file, code}]}")
    explain.add_argument("--native-functions", metavar="F", help="native_functions.yaml (default: torch's)")
    explain.add_argument("--tags", metavar="F", help="tags.yaml (default: beside native_functions.yaml)")
    add_torch_version_argument(explain)
    explain.set_defaults(run=_explain)
    add_generate_parser(sub)
    add_generate_backend_parser(sub)
    __import__("opgen_lsp.lazy_cli", fromlist=["_"]).add_generate_lazy_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


def run() -> NoReturn:
    """The process entry point: main(), then exit without tearing the heap down. Freeing a parsed
    native_functions.yaml object by object at interpreter exit costs about 0.1 s of CPU, a fifth of a
    generate-backend run, for memory the OS takes back at once anyway; files are closed by then."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said on it
            code = code or 1
    os._exit(code)


if __name__ == "__main__":
    run()
