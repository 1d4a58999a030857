"""`opgen generate-lazy`: torchgen.gen_lazy_tensor's command line (same flags, same meaning, same files)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .. import status
from .generation_report import report_generation
from .options import add_backend_yaml_arguments, add_generation_arguments, add_include_style_arguments
from .torch_version import resolve_native_release

if TYPE_CHECKING:
    from ..codegen.lazy.run import LazyRunOptions
    from ..releases import Release


def add_generate_lazy_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate-lazy", help="generate a lazy-tensor backend's files as torchgen.gen_lazy_tensor "
                                             "does (byte for byte)",
                       description="Write <Key>NativeFunctions.h/.cpp, Register<Key>.cpp (and "
                                   "Register<AutogradKey>.cpp), LazyIr.h and LazyNonNativeIr.h for a lazy backend "
                                   "yaml, as `python -m torchgen.gen_lazy_tensor` does. Exit status 1 when the "
                                   "yaml, the kernels (--impl-path) or the shape-inference header do not fit, 2 "
                                   "when an input cannot be read.")
    add_backend_yaml_arguments(p, yaml_keys="backend:, cpp_namespace:, supported:, full_codegen:, ir_gen:",
                               impl_help="C++ file defining the hand-written kernels (full_codegen ops are left out)")
    p.add_argument("--dry-run", "--dry_run", nargs="?", const="1", default=None, metavar="ANY",
                   help="write nothing (like gen_lazy_tensor, any non-empty value means a dry run)")
    p.add_argument("--gen-ts-lowerings", "--gen_ts_lowerings", action="store_true",
                   help="generate TorchScript lowerings (Lower, CanBeReused, Create) in the IR classes")
    p.add_argument("--node-base", "--node_base", default="Node", help="the IR node base class (default: Node)")
    p.add_argument("--node-base-hdr", "--node_base_hdr", default=None, help="header defining the node base class")
    p.add_argument("--shape-inference-hdr", "--shape_inference_hdr", default="torch/csrc/lazy/core/shape_inference.h",
                   help="header declaring the compute_shape_ functions; read (relative to the current folder) "
                        "and checked, and included by the kernels")
    p.add_argument("--tensor-class", "--tensor_class", default="torch::lazy::LazyTensor",
                   help="the backend's lazy tensor class")
    p.add_argument("--tensor-class-hdr", "--tensor_class_hdr", default="torch/csrc/lazy/core/tensor.h",
                   help="header defining the tensor class")
    p.add_argument("--backend-name", "--backend_name", default="TorchScript",
                   help="as in torch 2.13, where main() passes it positionally into run_gen_lazy_tensor's "
                        "build_in_tree slot: a non-empty value gives in-tree (<...>) includes, and the "
                        "registration functions stay Register TorchScript <Key>NativeFunctions()")
    add_include_style_arguments(p, entry_point="run_gen_lazy_tensor")
    add_generation_arguments(p)
    p.set_defaults(run=run_generate_lazy)


def options_from(args: argparse.Namespace, release: Release) -> LazyRunOptions:
    from ..codegen.lazy.run import LazyRunOptions
    from ..pieces.lazy.options import LazyOptions

    # torch 2.13's main() passes --backend-name as run_gen_lazy_tensor's 13th positional argument, which is
    # build_in_tree; backend_name keeps its default. Reproduced, since the output depends on it.
    lazy = LazyOptions(node_base=args.node_base, node_base_hdr=args.node_base_hdr,
                       shape_inference_hdr=args.shape_inference_hdr, tensor_class=args.tensor_class,
                       tensor_class_hdr=args.tensor_class_hdr, backend_name=LazyOptions.backend_name,
                       gen_ts_lowerings=args.gen_ts_lowerings,
                       build_in_tree=args.build_in_tree or bool(args.backend_name),
                       per_operator_headers=args.per_operator_headers, release=release)
    return LazyRunOptions(args.source_yaml, args.output_dir, tuple(args.impl_path), bool(args.dry_run),
                          args.native_functions, args.templates, lazy=lazy)


def run_generate_lazy(args: argparse.Namespace) -> int:
    from ..codegen.lazy.run import generate_lazy
    from ..index.documents import paused_gc

    resolved = resolve_native_release(args)
    if resolved is None:  # older than the releases known: an error of the inputs, as `opgen check` says (OPG951)
        return status.INPUT_ERRORS
    options = options_from(args, resolved.release)
    with paused_gc():  # as generate-backend: one run over a bounded model
        result = generate_lazy(options)
    return report_generation(result, output_dir=args.output_dir, dry_run=options.dry_run, verbose=args.verbose,
                             fmt=args.format, release_label=resolved.label)
