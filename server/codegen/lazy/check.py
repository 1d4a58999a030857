"""What gen_lazy_tensor rejects in a backend yaml, placed on the yaml's lines, and where its
shape-inference header comes from when nobody names one.

Shared by `opgen generate-lazy`, `opgen check` and the language server, so all
three accept and reject the same inputs. The stages follow gen_lazy_tensor: a
non_native section it cannot read stops it first; then every full_codegen op
that needs a `compute_shape_` function the header does not declare (only when
the header is known), and every op the IR or kernel codegen cannot handle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from ...analysis.check import installed_package_dir
from ...diagnostics import Diagnostic, diag
from ...index.backend import BackendSnapshot
from ...model.backend import ListedOp
from ...model.backend_resolve import ResolvedBackend
from ...model.native_function import NativeFunction
from ...model.schema import OperatorName
from ...text import Span
from ..backend.stubs import BackendTarget, target_of
from ..template import Template
from . import IN_TREE_SHAPE_HEADER, checkout_shape_header
from .nonnative import NonNativeOp, read_non_native
from .plan import Group, LazyOptions, LazyPieces, compute_pieces, selected, sort_groups
from .shape import ShapeHeader, expected_declarations, missing_shapes, shape_diagnostics

# PyTorch's own TorchScript lazy backend registers to this key (aten/src/ATen/native/ts_native_functions.yaml).
TORCHSCRIPT_BACKEND = "Lazy"

# --gen-ts-lowerings --node-base TsNode --node-base-hdr torch/csrc/lazy/ts_backend/ts_node.h
TORCHSCRIPT = LazyOptions(node_base="TsNode", node_base_hdr="torch/csrc/lazy/ts_backend/ts_node.h",
                          gen_ts_lowerings=True)
DEFAULT = LazyOptions()


def names(items: Iterable[ListedOp]) -> tuple[OperatorName, ...]:
    return tuple(i.name for i in items if i.name is not None)


def is_lazy_yaml(resolved: ResolvedBackend) -> bool:
    """A yaml meant for gen_lazy_tensor: it lists full_codegen or ir_gen ops, or has a non_native section."""
    yaml = resolved.yaml
    return bool(yaml.full_codegen or yaml.ir_gen or yaml.key_span("non_native"))


def is_torchscript_yaml(resolved: ResolvedBackend) -> bool:
    return resolved.yaml.backend.value == TORCHSCRIPT_BACKEND


def preset_options(preset: str, resolved: ResolvedBackend) -> LazyOptions:
    """"torchscript", "default", or "auto" (TorchScript settings for PyTorch's own Lazy backend)."""
    if preset == "torchscript" or preset == "auto" and is_torchscript_yaml(resolved):
        return TORCHSCRIPT
    return DEFAULT


def wheel_shape_header() -> str | None:
    """shape_inference.h inside the installed torch wheel."""
    package = installed_package_dir("torch")
    path = os.path.join(package, "include", IN_TREE_SHAPE_HEADER) if package else None
    return path if path and os.path.isfile(path) else None


def shape_header_path(resolved: ResolvedBackend, explicit: str | None, folders: Iterable[str]) -> str | None:
    """The header the yaml's shape-inference functions are checked against, None when it is not known.

    A header given by the user wins. PyTorch's own TorchScript yaml (backend: Lazy) is built against the
    checkout's header, so: the one of the PyTorch checkout holding one of `folders` (the workspace, the
    yaml's folder), else the installed wheel's. Any other backend passes its own header to its codegen
    (torch_xla does), which opgen cannot guess: no check rather than a false error.
    """
    if explicit:
        return explicit
    if not is_torchscript_yaml(resolved):
        return None
    return checkout_shape_header(folders) or wheel_shape_header()


@dataclass(frozen=True)
class LazyCheck:
    diagnostics: tuple[Diagnostic, ...]
    # None when a stage failed before the pieces were made.
    pieces: LazyPieces | None = None

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.diagnostics)


def _codegen_problems(pieces: LazyPieces, resolved: ResolvedBackend, non_native: Iterable[NonNativeOp], anchor: Span
                      ) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for op, why in pieces.problems:
        items = resolved.listings.get(op, ())
        span = next((i.span for i in items if i.section in ("full_codegen", "ir_gen")), None)
        if span is None:
            span = next((o.span for o in non_native if o.schema.name == op), anchor)
        found.append(diag("OPG537", span, f"gen_lazy_tensor cannot generate {op}: {why}"))
    return found


def check_lazy(text: str, resolved: ResolvedBackend, target: BackendTarget, groups: tuple[Group, ...],
               header: ShapeHeader | None, options: LazyOptions) -> LazyCheck:
    """gen_lazy_tensor's rejections of a backend yaml that gen_backend_stubs accepts.

    target: target_of(resolved); groups: sort_groups' order; header None: the shape check is skipped.
    """
    non_native, problems = read_non_native(text)
    if any(d.is_error for d in problems):
        return LazyCheck(problems)
    full_codegen, ir_gen = names(resolved.yaml.full_codegen), names(resolved.yaml.ir_gen)
    index = target.backend_index
    anchor = resolved.yaml.anchor
    placed = list(problems)
    if header is not None:
        try:
            expected = expected_declarations(selected(groups, full_codegen), index)
        except ValueError as exc:  # an op without kernel metadata: gen_lazy_tensor fails on it
            return LazyCheck(problems + (diag("OPG537", anchor, f"gen_lazy_tensor cannot run: {exc}"),))
        placed += shape_diagnostics(missing_shapes(expected, header, index), resolved.listings, header.path, anchor)
    pieces = compute_pieces(groups, index, target.class_name, full_codegen, ir_gen, non_native, options)
    placed += _codegen_problems(pieces, resolved, non_native, anchor)
    return LazyCheck(tuple(placed), pieces)


def lazy_diagnostics(text: str, snapshot: BackendSnapshot, groups: Iterable[Group], header: ShapeHeader | None
                     ) -> tuple[Diagnostic, ...]:
    """What gen_lazy_tensor rejects in an analysed backend yaml (nothing for a yaml that is not a lazy one, or
    that gen_backend_stubs rejects already). The settings do not change what it rejects, only the text."""
    resolved = snapshot.resolved
    if resolved is None or snapshot.has_errors or not is_lazy_yaml(resolved):
        return ()
    target = target_of(resolved)
    if target is None:
        return ()
    return check_lazy(text, resolved, target, sort_groups(groups), header, DEFAULT).diagnostics


# ---------------------------------------------------------------- one op, for hover

_AS_WRITTEN = Template("$piece")


def as_written(piece: str) -> str:
    """A piece as its file has it: the templates place the pieces at the start of a line, which strips
    trailing whitespace from every line."""
    return _AS_WRITTEN.substitute({"piece": [piece]})


@dataclass(frozen=True)
class LazyOpCode:
    """What gen_lazy_tensor writes for one full_codegen / ir_gen op, as LazyIr.h and <Key>NativeFunctions.cpp
    have it."""

    node_class: str | None  # LazyIr.h
    kernel: str | None  # <Key>NativeFunctions.cpp (full_codegen only)
    # compute_shape_<kernel> the header must declare (None: the meta kernel gives the shapes).
    shape_declaration: str | None
    problem: str | None = None  # why the codegen cannot generate it


def lazy_op_code(f: NativeFunction, target: BackendTarget, full_codegen: bool, options: LazyOptions) -> LazyOpCode:
    from ...pieces.api.translate import UnsatError
    from .kernels import LazyKernelError, kernel_definition, shape_declaration
    from .plan import ir_declaration
    from .schema import LazyTypeError

    index = target.backend_index
    try:
        node = as_written(ir_declaration(f, index, options.ir))
        if not full_codegen:
            return LazyOpCode(node, None, None)
        kernel = as_written(kernel_definition(f, index, target.class_name, options.kernel))
        return LazyOpCode(node, kernel, shape_declaration(f, index))
    except (LazyTypeError, LazyKernelError, UnsatError, ValueError) as exc:
        return LazyOpCode(None, None, None, str(exc))

