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

from ...diagnostics import Diagnostic, diag
from ...index.backend import BackendSnapshot
from ...model.backend import ListedOp
from ...model.backend_resolve import ResolvedBackend
from ...model.schema import OperatorName
from ...pieces.backend_target import BackendTarget, target_of
from ...pieces.lazy.code import Group, LazyPieces, compute_pieces, selected, sort_groups
from ...pieces.lazy.options import LazyOptions, default_lazy, is_torchscript_yaml
from ...releases import Release
from ...text import Span
from ..check import installed_package_dir
from . import IN_TREE_SHAPE_HEADER, checkout_shape_header
from .nonnative import NonNativeOp, read_non_native
from .shape import ShapeHeader, expected_declarations, missing_shapes, shape_diagnostics


def names(items: Iterable[ListedOp]) -> tuple[OperatorName, ...]:
    return tuple(i.name for i in items if i.name is not None)


def is_lazy_yaml(resolved: ResolvedBackend) -> bool:
    """A yaml meant for gen_lazy_tensor: it lists full_codegen or ir_gen ops, or has a non_native section."""
    yaml = resolved.yaml
    return bool(yaml.full_codegen or yaml.ir_gen or yaml.key_span("non_native"))


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
    non_native, problems = read_non_native(text, options.release)
    if any(d.is_error for d in problems):
        return LazyCheck(problems)
    full_codegen, ir_gen = names(resolved.yaml.full_codegen), names(resolved.yaml.ir_gen)
    index = target.backend_index
    anchor = resolved.yaml.anchor
    placed = list(problems)
    if header is not None:
        try:
            expected = expected_declarations(selected(groups, full_codegen), index, options.release.cpp_spelling)
        except ValueError as exc:  # an op without kernel metadata: gen_lazy_tensor fails on it
            return LazyCheck(problems + (diag("OPG537", anchor, f"gen_lazy_tensor cannot run: {exc}"),))
        placed += shape_diagnostics(missing_shapes(expected, header, index), resolved.listings, header.path, anchor)
    pieces = compute_pieces(groups, index, target.class_name, full_codegen, ir_gen,
                            tuple(op.schema for op in non_native), options)
    placed += _codegen_problems(pieces, resolved, non_native, anchor)
    return LazyCheck(tuple(placed), pieces)


def lazy_diagnostics(text: str, snapshot: BackendSnapshot, groups: Iterable[Group], header: ShapeHeader | None,
                     release: Release) -> tuple[Diagnostic, ...]:
    """What gen_lazy_tensor of `release` (the native_functions.yaml's) rejects in an analysed backend yaml (nothing
    for a yaml that is not a lazy one, or that gen_backend_stubs rejects already). The settings do not change what
    it rejects, only the text."""
    resolved = snapshot.resolved
    if resolved is None or snapshot.has_errors or not is_lazy_yaml(resolved):
        return ()
    target = target_of(resolved)
    if target is None:
        return ()
    return check_lazy(text, resolved, target, sort_groups(groups), header, default_lazy(release)).diagnostics
