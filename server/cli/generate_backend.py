"""`opgen generate-backend`: gen_backend_stubs' command line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .. import status
from ..report import RENDERERS
from .generation_report import report_generation
from .torch_version import add_torch_version_argument, resolve_native_release

if TYPE_CHECKING:
    from ..codegen.backend.stubs import RegistrationOptions


def add_generate_backend_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def add_registration_arguments(p: argparse.ArgumentParser) -> None:
    """The registration emitter's switches (not flags of gen_backend_stubs itself; its defaults are theirs)."""
    g = p.add_argument_group("registration (beyond gen_backend_stubs' flags)")
    g.add_argument("--deferred-registration", metavar="BACKEND_NAME", default=None,
                   help="register from a function Register<BACKEND_NAME><Key>NativeFunctions() that the backend "
                        "calls, instead of a static TORCH_LIBRARY_IMPL block (as gen_lazy_tensor does)")
    g.add_argument("--build-in-tree", action="store_true",
                   help="include <OUTPUT_DIR/<Key>NativeFunctions.h> with angle brackets (an in-tree backend)")
    g.add_argument("--per-operator-headers", action="store_true",
                   help="include ATen/ops/*.h instead of ATen/Functions.h (must match how ATen was built)")


def registration_options(args: argparse.Namespace, *, eager: bool = True, backend_name: str = ""
                         ) -> RegistrationOptions:
    from ..codegen.backend.stubs import RegistrationOptions

    deferred = getattr(args, "deferred_registration", None)
    return RegistrationOptions(eager=eager and deferred is None, backend_name=deferred or backend_name,
                               build_in_tree=getattr(args, "build_in_tree", False),
                               per_operator_headers=getattr(args, "per_operator_headers", False))


def run_generate_backend(args: argparse.Namespace) -> int:
    from ..codegen.backend.run import BackendOptions, generate_backend
    from ..index.documents import paused_gc

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

