"""`opgen scaffold SCHEMA`: a new operator's entries, kernel stubs, derivatives entry and backend line."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from typing import TYPE_CHECKING

from .. import status
from ..input_file import UnreadableFile, read_text
from .torch_version import add_torch_version_argument, resolve_release

if TYPE_CHECKING:  # the scaffold (the model and the per-op pieces) loads when the command runs
    from ..analysis.scaffold import Scaffold


def add_scaffold_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = sub.add_parser("scaffold", help="add a new operator: its yaml entries, C++ kernel stubs and more",
                         description="From a functional schema, write the functional, in-place and out= entries of "
                                     "native_functions.yaml (structured with structured_delegate when asked), C++ "
                                     "kernel stubs with the declarations NativeFunctions.h will have, and optionally a "
                                     "derivatives.yaml entry and a backend yaml's supported: line. Prints the edits "
                                     "as a unified diff; --apply writes them.")
    cmd.add_argument("schema", metavar="SCHEMA", help='the functional schema, e.g. "my_op(Tensor self) -> Tensor"')
    cmd.add_argument("--native-functions", metavar="F", default=os.path.join("aten", "src", "ATen", "native",
                                                                          "native_functions.yaml"),
                     help="native_functions.yaml to add the entries to (default: the one of the PyTorch checkout "
                          "in the current folder); tags.yaml is read beside it")
    cmd.add_argument("--structured", action="store_true",
                     help="a structured op: the out= entry holds the kernel (TORCH_META_FUNC and TORCH_IMPL_FUNC "
                          "stubs), the others name it as structured_delegate")
    cmd.add_argument("--tags", nargs="+", default=[], metavar="TAG", help="tags of the new entries")
    cmd.add_argument("--dispatch", default="CPU", metavar="KEYS",
                     help='the dispatch keys of the kernels, as a dispatch table line writes them (default "CPU"; '
                          'e.g. "CPU, CUDA" or "CompositeExplicitAutograd")')
    cmd.add_argument("--kernel-file", metavar="FILE",
                     help="the C++ file the stubs go to (appended; default: a new file named after the op beside "
                          "native_functions.yaml)")
    cmd.add_argument("--derivatives", nargs="?", const="", metavar="FILE",
                     help="add a derivatives.yaml entry (not_implemented for each differentiable input); FILE "
                          "defaults to the checkout's tools/autograd/derivatives.yaml")
    cmd.add_argument("--backend-yaml", metavar="FILE", help="add the op to this backend yaml's supported: list")
    cmd.add_argument("--backend-kernel-file", metavar="FILE",
                     help="with --backend-yaml: append the backend's kernel stub (a method of its NativeFunctions "
                          "class) to this C++ file")
    cmd.add_argument("--apply", action="store_true", help="write the edits instead of printing them")
    add_torch_version_argument(cmd)
    cmd.set_defaults(run=run_scaffold)


def _read(path: str | None) -> str | None:
    if path is None or not os.path.exists(path):
        return None
    return read_text(path)


def run_scaffold(args: argparse.Namespace) -> int:
    from ..analysis import scaffold as sc  # the model and the per-op pieces load when this command runs
    from ..index.native import TagsParser

    native_path = args.native_functions
    resolved = resolve_release(args, native_path)
    if resolved is None:
        return status.INPUT_ERRORS
    base = sc.op_base(args.schema)
    derivatives = (args.derivatives or sc.default_derivatives_path(native_path)) if args.derivatives is not None \
        else None
    kernel_path = args.kernel_file or sc.default_kernel_path(native_path, base)
    try:
        native_text = read_text(native_path)
        tags = TagsParser().parse(read_text(os.path.join(os.path.dirname(native_path), "tags.yaml"))).names
        tree = sc.TreeTexts(native_path, native_text, tags, kernel_path, _read(kernel_path),
                            derivatives, _read(derivatives), args.backend_yaml, _read(args.backend_yaml),
                            args.backend_kernel_file, _read(args.backend_kernel_file))
    except UnreadableFile as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.USAGE
    if args.derivatives is not None and derivatives is None:
        print("opgen: --derivatives: native_functions.yaml is not in a PyTorch checkout; name the file",
              file=sys.stderr)
        return status.USAGE
    if args.backend_kernel_file is not None and args.backend_yaml is None:
        print("opgen: --backend-kernel-file needs --backend-yaml", file=sys.stderr)
        return status.USAGE
    if args.backend_yaml is not None and tree.backend_text is None:
        print(f"opgen: --backend-yaml: no such file: {args.backend_yaml}", file=sys.stderr)
        return status.USAGE
    keys = tuple(k.strip() for k in args.dispatch.split(",") if k.strip())
    request = sc.ScaffoldRequest(args.schema, args.structured, tuple(args.tags), keys or sc.DEFAULT_DISPATCH,
                                 args.derivatives is not None, args.backend_yaml is not None)
    try:
        result = sc.scaffold(request, tree, resolved.release)
    except sc.ScaffoldError as exc:
        print(f"opgen: scaffold: {exc}", file=sys.stderr)
        return status.INPUT_ERRORS
    texts = {tree.native_path: tree.native_text, tree.kernel_path: tree.kernel_text,
             tree.derivatives_path or "": tree.derivatives_text, tree.backend_path or "": tree.backend_text,
             tree.backend_kernel_path or "": tree.backend_kernel_text}
    for path, old, new in changed_files(result, texts):
        if args.apply:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(new)
            print(f"{'created' if old is None else 'edited'} {path}", file=sys.stderr)
        else:
            sys.stdout.writelines(difflib.unified_diff((old or "").splitlines(keepends=True),
                                                       new.splitlines(keepends=True),
                                                       fromfile="/dev/null" if old is None else path, tofile=path))
    return status.CLEAN


def changed_files(result: Scaffold, texts: dict[str, str | None]) -> list[tuple[str, str | None, str]]:
    """(path, text before or None for a new file, text after) of each file the scaffold touches, in order."""
    from ..analysis.scaffold import apply

    out = []
    for path in dict.fromkeys(i.path for i in result.insertions):
        old = texts.get(path)
        out.append((path, old, apply(old, [i for i in result.insertions if i.path == path])))
    return out
