"""`opgen generate-backend` (gen_backend_stubs' command line) and the --impl-path check of `opgen check`."""

from __future__ import annotations

import argparse
import os
import sys

from . import status
from .release_cli import add_torch_version_argument, resolve_native_release
from .report import RENDERERS, FileDiagnostic


def add_generate_backend_parser(sub) -> None:
    p = sub.add_parser("generate-backend", help="generate an out-of-tree backend's files as "
                                                "torchgen.gen_backend_stubs does (byte for byte)",
                       description="Write <Key>NativeFunctions.h, Register<Key>.cpp and (with autograd ops) "
                                   "Register<AutogradKey>.cpp for a backend yaml, as `python -m "
                                   "torchgen.gen_backend_stubs` does, atomically and only when changed. Exit "
                                   "status 1 when the yaml (or the kernels, with --impl-path) has errors, 2 when "
                                   "an input cannot be read.")
    p.add_argument("-s", "--source-yaml", "--source_yaml", required=True, metavar="BACKEND_YAML",
                   help="the backend yaml (backend:, cpp_namespace:, supported: ...)")
    p.add_argument("-o", "--output-dir", "--output_dir", required=True, metavar="OUTPUT_DIR",
                   help="output folder; also spelled as given in Register<Key>.cpp's #include (so it may hold "
                        "no line break, quote, < or >)")
    p.add_argument("--impl-path", "--impl_path", action="append", default=[], metavar="F",
                   help="C++ file defining the kernels: report each listed op it does not define (repeatable)")
    p.add_argument("--dry-run", "--dry_run", action="store_true",
                   help="write nothing; list the files and whether they would change")
    p.add_argument("--native-functions", metavar="F",
                   help="native_functions.yaml (default: the one packaged with the installed torchgen; its "
                        "tags.yaml is read from beside it)")
    p.add_argument("--templates", metavar="D", help="templates folder (default: torchgen's packaged templates)")
    p.add_argument("--format", choices=sorted(RENDERERS), default="text", help="how to print diagnostics")
    p.add_argument("-v", "--verbose", action="store_true", help="print each file written")
    add_torch_version_argument(p)
    add_registration_arguments(p)
    p.set_defaults(run=run_generate_backend)


def add_registration_arguments(p) -> None:
    """The registration emitter's switches (not flags of gen_backend_stubs itself; its defaults are theirs)."""
    g = p.add_argument_group("registration (beyond gen_backend_stubs' flags)")
    g.add_argument("--deferred-registration", metavar="BACKEND_NAME", default=None,
                   help="register from a function Register<BACKEND_NAME><Key>NativeFunctions() that the backend "
                        "calls, instead of a static TORCH_LIBRARY_IMPL block (as gen_lazy_tensor does)")
    g.add_argument("--build-in-tree", action="store_true",
                   help="include <OUTPUT_DIR/<Key>NativeFunctions.h> with angle brackets (an in-tree backend)")
    g.add_argument("--per-operator-headers", action="store_true",
                   help="include ATen/ops/*.h instead of ATen/Functions.h (must match how ATen was built)")


def registration_options(args: argparse.Namespace, *, eager: bool = True, backend_name: str = ""):
    from .codegen.backend.stubs import RegistrationOptions

    deferred = getattr(args, "deferred_registration", None)
    return RegistrationOptions(eager=eager and deferred is None, backend_name=deferred or backend_name,
                               build_in_tree=getattr(args, "build_in_tree", False),
                               per_operator_headers=getattr(args, "per_operator_headers", False))


def _same(path: str, data: bytes) -> bool:
    """Whether path holds exactly data (read with the bounded reader: a FIFO there is not waited on)."""
    from .input_file import UnreadableFile, read_bytes

    try:
        return read_bytes(path, limit=len(data)) == data
    except UnreadableFile:
        return False


def report_generation(result, *, output_dir: str, dry_run: bool, verbose: bool, fmt: str,
                      nothing_to_generate: str | None = None, release_label: str = "") -> int:
    """Print a backend/lazy generation result (diagnostics, errors, files) and return the exit status."""
    if result.diagnostics:
        sys.stdout.write(RENDERERS[fmt](list(result.diagnostics)))
    for error in result.errors:
        print(f"opgen: {error}", file=sys.stderr)
    if not result.read:
        return status.USAGE
    if result.has_errors:
        return status.INPUT_ERRORS
    if nothing_to_generate is not None and not result.files:
        print(f"opgen: {nothing_to_generate}", file=sys.stderr)
        return status.CLEAN
    if dry_run:
        for f in result.files:
            target = os.path.join(output_dir, f.path)
            print(f"{target}: {'unchanged' if _same(target, f.data) else 'would be written'}")
        return status.CLEAN
    if result.written is not None:
        if verbose:
            for path in result.written.written:
                print(f"wrote {path}")
        as_release = f", as {release_label}" if release_label else ""
        print(f"opgen: {len(result.written.written)} file(s) written, {len(result.written.unchanged)} unchanged"
              f"{as_release}", file=sys.stderr)
    return status.CLEAN


def run_generate_backend(args: argparse.Namespace) -> int:
    from .codegen.backend.run import BackendOptions, generate_backend
    from .index.documents import paused_gc

    resolved = resolve_native_release(args)
    if resolved is None:
        return status.USAGE
    options = BackendOptions(args.source_yaml, args.output_dir, tuple(args.impl_path), args.dry_run,
                             args.native_functions, args.templates, registration_options(args), resolved.release)
    with paused_gc():  # one run over a bounded model: the collector's passes cost ~7% and free next to nothing
        result = generate_backend(options)
    return report_generation(result, output_dir=args.output_dir, dry_run=args.dry_run, verbose=args.verbose,
                             fmt=args.format, nothing_to_generate=f"{args.source_yaml} lists no ops under supported "
                                                                  "or full_codegen: nothing to generate",
                             release_label=resolved.label)


def impl_path_items(paths: list[str], native_path: str | None, impl_paths: list[str]
                    ) -> tuple[list[FileDiagnostic], list[str]]:
    """`opgen check --impl-path F`: the missing-kernel check of every backend yaml among paths (and notes)."""
    from .analysis.check import BACKEND, classify, expand
    from .codegen.backend.run import InputError, check_backend_files, load_native_snapshot, read_impls, read_text

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
                native = load_native_snapshot(native_path)
            except InputError as exc:
                return items, notes + [f"opgen: {exc}"]
        _, found = check_backend_files(path, text, native, impls)
        items.extend(d for d in found if d.diagnostic.code in ("OPG530", "OPG531", "OPG532"))
    return items, notes
