"""What gen_lazy_tensor writes for the ops of a lazy backend yaml: every kernel and node class (with the ops it
cannot generate, and why), and for one op, as its files have it (the server's hover)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import OperatorName
from ..api.translate import UnsatError
from ..backend_target import BackendTarget
from ..template import Template
from .ir import IrOptions, node_class
from .kernels import LazyKernelError, kernel_definition, shape_declaration
from .options import LazyOptions
from .schema import LazyIrSchema, LazyTypeError, lazy_schema

Group = NativeFunction | NativeFunctionsGroup


def _base_name(g: Group) -> str:
    return str((g.functional if isinstance(g, NativeFunctionsGroup) else g).func.name.name)


def sort_groups(groups: Iterable[Group]) -> tuple[Group, ...]:
    """gen_lazy_tensor's order: stable, by the functional op's base name."""
    return tuple(sorted(groups, key=_base_name))


def selected(groups: Iterable[Group], names: Iterable[OperatorName]) -> list[NativeFunction]:
    """Every function of the groups whose name is listed, group by group (concat_map_codegen)."""
    wanted = frozenset(names)
    out: list[NativeFunction] = []
    for g in groups:
        fs = g.functions() if isinstance(g, NativeFunctionsGroup) else (g,)
        out.extend(f for f in fs if f.func.name in wanted)
    return out


@dataclass(frozen=True)
class LazyPieces:
    kernels: tuple[str, ...]
    ir_declarations: tuple[str, ...]
    non_native: tuple[str, ...]
    # Ops the codegen cannot handle, with why (torchgen fails on them with an AssertionError).
    problems: tuple[tuple[OperatorName, str], ...]


_CODEGEN_ERRORS = (LazyTypeError, LazyKernelError, UnsatError, ValueError)


def ir_declaration(f: NativeFunction, index: BackendIndex, options: IrOptions) -> str:
    meta = index.get_kernel(f)
    return node_class(lazy_schema(f.func, symint=meta is not None and meta.supports_symint(),
                                  generators_in_ir=options.release.lazy_ir_keeps_generators), options)


def compute_pieces(groups: tuple[Group, ...], index: BackendIndex, class_name: str,
                   full_codegen: tuple[OperatorName, ...], ir_gen: tuple[OperatorName, ...],
                   non_native: tuple[LazyIrSchema, ...], options: LazyOptions) -> LazyPieces:
    """non_native: the schemas of the yaml's non_native section (analysis/lazy/nonnative.py reads them)."""
    problems: list[tuple[OperatorName, str]] = []
    kernels, nodes = [], []
    for f in selected(groups, full_codegen):
        try:
            kernels.append(kernel_definition(f, index, class_name, options.kernel, options.release))
        except _CODEGEN_ERRORS as exc:
            problems.append((f.func.name, str(exc)))
    ir = options.ir
    for f in selected(groups, full_codegen + ir_gen):
        try:
            nodes.append(ir_declaration(f, index, ir))
        except _CODEGEN_ERRORS as exc:
            problems.append((f.func.name, str(exc)))
    extra = []
    for schema in non_native:
        try:
            extra.append(node_class(schema, ir))
        except _CODEGEN_ERRORS as exc:
            problems.append((schema.name, str(exc)))
    return LazyPieces(tuple(kernels), tuple(nodes), tuple(extra), tuple(problems))


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
    index = target.backend_index
    try:
        node = as_written(ir_declaration(f, index, options.ir))
        if not full_codegen:
            return LazyOpCode(node, None, None)
        spelling = options.release.cpp_spelling
        kernel = as_written(kernel_definition(f, index, target.class_name, options.kernel, options.release))
        return LazyOpCode(node, kernel, shape_declaration(f, index, spelling))
    except _CODEGEN_ERRORS as exc:
        return LazyOpCode(None, None, None, str(exc))
