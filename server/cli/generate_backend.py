"""`opgen generate-backend`: gen_backend_stubs' command line."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .. import status
from .generation_report import report_generation
from .options import add_backend_yaml_arguments, add_generation_arguments, add_include_style_arguments
from .torch_version import resolve_native_release

EXPERIMENTAL_NOTE = ("opgen: --experimental: generating as pytorch#172539's proposed gen_backend_stubs does (structured "
                     "PrivateUse1 kernels, out= kernels as primary), which no torch release has; without "
                     "--experimental the files are the release's")

if TYPE_CHECKING:
    from ..codegen.backend.stubs import RegistrationOptions
    from ..releases import Release


def add_generate_backend_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate-backend", help="generate an out-of-tree backend's files as "
                                                "torchgen.gen_backend_stubs does (byte for byte)",
                       description="Write <Key>NativeFunctions.h, Register<Key>.cpp and (with autograd ops) "
                                   "Register<AutogradKey>.cpp for a backend yaml, as `python -m "
                                   "torchgen.gen_backend_stubs` does, atomically and only when changed. Exit "
                                   "status 1 when the yaml (or the kernels, with --impl-path) has errors, 2 when "
                                   "an input cannot be read.")
    add_backend_yaml_arguments(p, yaml_keys="backend:, cpp_namespace:, supported:",
                               impl_help="C++ file defining the kernels: report each listed op it does not define "
                                         "(repeatable)")
    p.add_argument("--dry-run", "--dry_run", action="store_true",
                   help="write nothing; list the files and whether they would change")
    add_generation_arguments(p)
    add_registration_arguments(p)
    p.add_argument("--experimental", action="store_true",
                   help="generate as pytorch#172539's proposed gen_backend_stubs does (not in any torch release): "
                        "per-op 'structured', 'ext_structured_meta' and 'device_guard' under supported, structured "
                        "PrivateUse1 kernels, functional and in-place kernels derived from out= ones "
                        "(use_out_as_primary: true), any depth of cpp_namespace (docs/backends.md)")
    p.set_defaults(run=run_generate_backend)


def add_registration_arguments(p: argparse.ArgumentParser) -> None:
    """The registration emitter's switches (not flags of gen_backend_stubs itself; its defaults are theirs)."""
    g = p.add_argument_group("registration (beyond gen_backend_stubs' flags)")
    g.add_argument("--deferred-registration", metavar="BACKEND_NAME", default=None,
                   help="register from a function Register<BACKEND_NAME><Key>NativeFunctions() that the backend "
                        "calls, instead of a static TORCH_LIBRARY_IMPL block (as gen_lazy_tensor does)")
    add_include_style_arguments(g, entry_point="gen_dispatcher_registrations")


def registration_options(args: argparse.Namespace, release: Release) -> RegistrationOptions:
    from ..codegen.backend.stubs import RegistrationOptions

    deferred: str | None = args.deferred_registration
    return RegistrationOptions(eager=deferred is None, backend_name=deferred or "", build_in_tree=args.build_in_tree,
                               per_operator_headers=args.per_operator_headers, release=release)


def run_generate_backend(args: argparse.Namespace) -> int:
    from ..codegen.backend.run import BackendOptions, generate_backend
    from ..index.documents import paused_gc

    resolved = resolve_native_release(args)
    if resolved is None:  # older than the releases known: an error of the inputs, as `opgen check` says (OPG951)
        return status.INPUT_ERRORS
    options = BackendOptions(args.source_yaml, args.output_dir, tuple(args.impl_path), args.dry_run,
                             args.native_functions, args.templates, registration_options(args, resolved.release),
                             experimental=args.experimental, release=resolved.release)
    if args.experimental:  # said before anything else: these files are not the release's gen_backend_stubs'
        print(EXPERIMENTAL_NOTE, file=sys.stderr)
    with paused_gc():  # one run over a bounded model: the collector's passes cost ~7% and free next to nothing
        result = generate_backend(options)
    return report_generation(result, output_dir=args.output_dir, dry_run=args.dry_run, verbose=args.verbose,
                             fmt=args.format, nothing_to_generate=f"{args.source_yaml} lists no ops under supported "
                                                                  "or full_codegen: nothing to generate",
                             release_label=resolved.label)

