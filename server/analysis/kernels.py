"""Kernels named in native_functions.yaml that no C++ source defines: caught before the link.

Every kernel of a dispatch table (and the implicit CompositeImplicitAutograd
one) must be defined in its namespace, with the parameter types of its native
declaration (a C++ overload of the same name for another op is another function);
a structured out= kernel needs its TORCH_IMPL_FUNC, and its group's TORCH_META_FUNC.
A kernel defined in one branch of a preprocessor conditional but not in another
branch of it is missing from the builds taking that branch (OPG602). Generated
kernels (ufunc, autogen, and the view_copy kernels of CompositeViewCopyKernels.cpp)
are left out: the codegen writes them. So are MTIA kernels, which PyTorch's own
tree does not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from ..diagnostics import Diagnostic, Severity, diag
from ..frozen import record
from ..index.kernels import KernelIndex, Located
from ..index.native import problem_span
from ..model import dispatch as dk
from ..model.native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup
from ..model.native_yaml import Op
from ..syntax.cpp_scan import ANONYMOUS, DECLARATION, DEFINITION, DEVICE, IMPL, META, STATIC, TEMPLATE, Branch, CppSymbol
from ..syntax.cpp_types import types_key
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from ..text import Span

# The declaration a kernel must have, from the codegen (a layer above); None leaves it out.
Declare = Callable[[NativeFunction, BackendIndex], str]
# The parameter types of that declaration (its native signature's), from the codegen; None: not known, and then
# any definition of the kernel's name counts.
Parameters = Callable[[NativeFunction, BackendIndex], "tuple[str, ...] | None"]


def _kernel_span(op: Op, key: dk.DispatchKey) -> Span:
    """The kernel name in the dispatch table, or the op name for the implicit kernel."""
    source = op.function.source
    entry = source.entry if source is not None else None
    table = entry.value("dispatch") if isinstance(entry, YMap) else None
    if isinstance(table, YMap):
        for k, v in table.pairs:
            if isinstance(k, YScalar) and isinstance(k.value, str) and isinstance(v, YScalar) \
                    and key.name in (part.strip() for part in k.value.split(",")):
                text = ScalarText(v)
                name = str(v.value).split("::")[-1]
                start = str(v.value).rfind(name)
                return text.span(start, start + len(name)).shifted(op.line)
    return problem_span(op, "name")


def serves(need: Requirement, symbol: CppSymbol) -> bool:
    """Whether a definition or declaration of the need's name is the function its declaration names: the same
    parameter types (when either is not known, any is)."""
    return need.params is None or symbol.params is None or symbol.params == need.params


def serving_definitions(index: KernelIndex, need: Requirement) -> list[Located]:
    """The definitions of a DEFINITION need: its name, in its namespace, with its parameter types."""
    return [h for h in index.find(need.name, (DEFINITION,))
            if h.symbol.namespace == need.namespace and serves(need, h.symbol)]


def _declared(index: KernelIndex, need: Requirement) -> bool:
    return any(h.symbol.namespace == need.namespace and serves(need, h.symbol)
               for h in index.find(need.name, (DECLARATION,)))


@record
class BranchGap:
    """A conditional one branch of which defines a kernel and another does not: the builds taking that other
    branch have no definition."""

    defined: Located  # a definition in the conditional
    conditional: Branch  # its place there
    without: int  # the branch (an index into conditional.directives) that defines none


def branch_gap(found: list[Located]) -> BranchGap | None:
    """Where the definitions of a kernel leave a branch of their conditionals without one, if anywhere. One
    definition outside every conditional of several branches is there in each configuration."""
    if not found or any(not h.symbol.branches for h in found):
        return None
    held = {(h.path, b.directives, b.taken) for h in found for b in h.symbol.branches}
    for h in found:
        for b in h.symbol.branches:
            for k in range(len(b.directives)):
                if (h.path, b.directives, k) not in held:
                    return BranchGap(h, b, k)
    return None


_WHY_UNCALLABLE = {ANONYMOUS: "in an anonymous namespace", STATIC: "static", TEMPLATE: "a template",
                   DEVICE: "CUDA device code"}


def _uncallable_definition(index: KernelIndex, need: Requirement) -> Located | None:
    """A definition of the need's kernel that the codegen cannot call (internal linkage, template, device)."""
    return next((h for h in index.find(need.name, (DEFINITION,))
                 if h.symbol.namespace.startswith(f"{need.namespace}::(") and serves(need, h.symbol)
                 and h.symbol.namespace.rsplit("::", 1)[-1] in _WHY_UNCALLABLE), None)


def _where(index: KernelIndex) -> str:
    return ", ".join(index.roots)


def _meta_name(group: NativeFunctionsGroup) -> str:
    return str(group.functional.func.name).replace(".", "_")


class KernelModel(Protocol):
    """What these checks read of a NativeFunctions (the server passes a few ops at a time, without view_groups)."""

    @property
    def ops(self) -> Sequence[Op]: ...

    @property
    def groups(self) -> Sequence[NativeFunction | NativeFunctionsGroup]: ...

    @property
    def backend_indices(self) -> Mapping[dk.DispatchKey, BackendIndex]: ...


class KernelSnapshot(Protocol):
    """A NativeSnapshot, as missing_kernels reads it."""

    @property
    def functions(self) -> KernelModel: ...


def generated_view_copies(model: KernelModel) -> frozenset[NativeFunction]:
    """The view_copy ops whose CompositeExplicitAutogradNonFunctional kernel the codegen writes
    (CompositeViewCopyKernels.cpp): those named <view>_copy, as torchgen's gen_composite_view_copy_kernel."""
    return frozenset(g.view_copy for g in getattr(model, "view_groups", ())
                     if isinstance(g, NativeFunctionsViewGroup) and g.view_copy is not None
                     and g.view_copy.func.name.name.base == f"{g.view.func.name.name.base}_copy")


def _generated_copy_kernel(f: NativeFunction) -> str:
    """The name torch 1.13's CompositeViewCopyKernels.cpp defines a view copy's kernel by (at::native): its native
    name (view_copy's: view_copy_symint)."""
    if str(f.func.name) == "view_copy":
        return "view_copy_symint"
    return str(f.func.name.name) + "_out" * f.func.is_out_fn() + (f"_{f.func.name.overload_name}"
                                                                  if f.func.name.overload_name else "")


@record
class Requirement:
    """One C++ definition the yaml needs: a dispatch kernel (DEFINITION, or IMPL when structured) or a META."""

    op: Op
    kind: str  # DEFINITION, IMPL or META
    name: str
    namespace: str  # DEFINITION only; IMPL and META are found by name
    key: dk.DispatchKey | None = None  # None for META
    metadata: BackendMetadata | None = None
    params: str | None = None  # DEFINITION: its declaration's parameter types (cpp_types.types_key); None: not known


# MTIA kernels live outside PyTorch's repository (torchgen registers them only when run with --mtia).
OUT_OF_TREE_KEYS = frozenset({dk.DispatchKey.MTIA})


def requirements(model: KernelModel, view_copies: frozenset[NativeFunction] = frozenset(),
                 parameters: Parameters | None = None, with_meta: bool = True,
                 copies_by_native_name: bool = False) -> Iterator[Requirement]:
    """Every kernel and meta function the ops of model need, generated and out-of-tree ones left out; parameters
    gives a plain kernel's parameter types (without it, a definition of its name in its namespace is enough);
    with_meta False: no meta functions (a backend's own operator file: upstream's are in PyTorch);
    copies_by_native_name: the view copies' generated kernels are at::native::<native name> under whatever key
    names them (torch 1.13; Release.view_copy_kernels_by_backend_index), else the CompositeExplicitAutograd-
    NonFunctional kernel."""
    groups = {g.out.func.name: g for g in model.groups if isinstance(g, NativeFunctionsGroup)}
    for op in model.ops:
        if op.generated:
            continue
        f = op.function
        skipped = set(OUT_OF_TREE_KEYS) | (set(dk.UFUNC_DISPATCH_KEYS) if f.ufunc_inner_loop else set())
        generated_copy = _generated_copy_kernel(f) if f in view_copies and copies_by_native_name else None
        if f in view_copies and not copies_by_native_name:
            skipped.add(dk.DispatchKey.CompositeExplicitAutogradNonFunctional)
        for key, meta in op.metadata:
            if key in skipped or "legacy::" in meta.kernel or key not in model.backend_indices:
                continue
            if generated_copy is not None and (meta.cpp_namespace, meta.kernel) == ("at::native", generated_copy):
                continue
            if meta.structured:
                yield Requirement(op, IMPL, meta.kernel, meta.cpp_namespace, key, meta)
                continue
            types = parameters(f, model.backend_indices[key]) if parameters is not None else None
            yield Requirement(op, DEFINITION, meta.kernel, meta.cpp_namespace, key, meta,
                              types_key(types) if types is not None else None)
        group = groups.get(f.func.name)
        if f.structured and group is not None and with_meta:
            yield Requirement(op, META, _meta_name(group), "at::meta")


def is_met(index: KernelIndex, need: Requirement) -> bool:
    if need.kind == DEFINITION:
        found = serving_definitions(index, need)
        return bool(found) and branch_gap(found) is None
    return bool(index.find(need.name, (need.kind,)))


def missing_kernels(snapshot: KernelSnapshot, index: KernelIndex, *, declare: Declare | None = None,
                    parameters: Parameters | None = None, severity: Severity = Severity.WARNING,
                    view_copies: frozenset[NativeFunction] | None = None, with_meta: bool = True,
                    copies_by_native_name: bool = False) -> list[Diagnostic]:
    model = snapshot.functions
    copies = generated_view_copies(model) if view_copies is None else view_copies
    out: list[Diagnostic] = []
    for need in requirements(model, copies, parameters, with_meta, copies_by_native_name):
        if is_met(index, need):
            continue
        if need.kind == META or need.key is None:
            out.append(diag("OPG601", problem_span(need.op, "structured"),
                            f"no TORCH_META_FUNC({need.name}) (or TORCH_META_FUNC2) in {_where(index)}: the "
                            "structured op needs its meta function", severity=severity))
            continue
        assert need.key is not None and need.metadata is not None  # requirements() gives both to every kernel
        gap = branch_gap(serving_definitions(index, need)) if need.kind == DEFINITION else None
        if gap is not None:
            out.append(diag("OPG602", _kernel_span(need.op, need.key), _partly_defined(need, gap),
                            severity=severity))
            continue
        message = _missing(need, index, model.backend_indices[need.key], declare)
        out.append(diag("OPG600", _kernel_span(need.op, need.key), message, severity=severity))
    return out


def _missing(need: Requirement, index: KernelIndex, backend: BackendIndex, declare: Declare | None) -> str:
    """The message for a kernel is_met found missing (and no branch_gap)."""
    f, key, meta = need.op.function, need.key, need.metadata
    assert key is not None and meta is not None  # (a DEFINITION or IMPL need's)
    if meta.structured:
        return (f"no TORCH_IMPL_FUNC({meta.kernel}) in {_where(index)}: the structured {key} kernel of "
                f"'{f.func.name}' is not implemented")
    state = "is declared but never defined" if _declared(index, need) else "is not defined"
    unusable = _uncallable_definition(index, need)
    if unusable is not None:
        why = _WHY_UNCALLABLE[unusable.symbol.namespace.rsplit("::", 1)[-1]]
        state += f" (the one in {unusable.path}:{unusable.symbol.line + 1} is {why})"
    others = [h for h in index.find(need.name, (DEFINITION,)) if h.symbol.namespace == need.namespace]
    if others:  # overloads of the name: other ops' kernels
        listed = "; ".join(f"{h.path}:{h.symbol.line + 1} ({h.symbol.params})" for h in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        state += f" with its parameters ({need.params}): the definitions of that name take others ({listed}{more})"
    expected = declare(f, backend) if declare is not None else ""
    hint = f"; it must be declared as:\n{expected}" if expected else ""
    return f"{key} kernel {meta.cpp_namespace}::{meta.kernel} of '{f.func.name}' {state} in {_where(index)}{hint}"


def _partly_defined(need: Requirement, gap: BranchGap) -> str:
    """The message for a kernel that one branch of a conditional defines and another does not."""
    f, key, path = need.op.function, need.key, gap.defined.path
    lines = gap.conditional.directives
    return (f"{key} kernel {need.namespace}::{need.name} of '{f.func.name}' is defined only in some branches of the "
            f"preprocessor conditional at {path}:{lines[0] + 1}: the branch at line {lines[gap.without] + 1} "
            f"defines none (the one at line {gap.defined.symbol.line + 1} is in the branch at line "
            f"{lines[gap.conditional.taken] + 1}), so a build taking that branch has no such kernel")
