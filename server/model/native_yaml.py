"""The whole of native_functions.yaml: generated variants, backend indices, groups.

`assemble` takes the lowered entries in file order and does what torchgen 2.13
does after reading them (error_check_native_functions,
add_generated_native_functions, BackendIndex.grow_index, and the two
groupings gen.py performs), reporting every rule it breaks as a Problem
instead of stopping at the first.
"""

from __future__ import annotations

import keyword
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from . import dispatch as dk
from .generate import (
    FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT,
    GENERATED_KEY,
    INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
    MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT,
    OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
    GenerationError,
    generate_function,
)
from .native_function import (
    BackendIndex,
    BackendMetadata,
    NativeFunction,
    NativeFunctionsGroup,
    NativeFunctionsViewGroup,
    ViewSchemaKind,
)
from .schema import BaseOperatorName, FunctionSchema, OperatorName, SchemaKind, SchemaKindError
from .schema_rules import check_schema


@dataclass(frozen=True, slots=True)
class Op:
    """A NativeFunction and the entry it comes from (generated ones: their base's entry)."""

    function: NativeFunction
    line: int  # 0-based first line of the entry
    metadata: tuple[tuple[dk.DispatchKey, BackendMetadata], ...]
    generated: bool = False


@dataclass(frozen=True, slots=True)
class Problem:
    op: Op
    code: str
    message: str
    # What to point at: "name", an entry key such as "structured_delegate", or ("autogen", "foo.out").
    where: object = "name"


@dataclass(frozen=True)
class NativeFunctions:
    ops: tuple[Op, ...]
    backend_indices: dict[dk.DispatchKey, BackendIndex]
    groups: tuple[NativeFunction | NativeFunctionsGroup, ...]
    view_groups: tuple[NativeFunction | NativeFunctionsViewGroup, ...]
    problems: tuple[Problem, ...]

    @property
    def native_functions(self) -> tuple[NativeFunction, ...]:
        return tuple(op.function for op in self.ops)


_RESERVED_NAME_EXCEPTIONS = {("_has_compatible_shallow_copy_type", "from"), ("random_.from", "from"), ("uniform_", "from")}
_PYTHON_KEYWORDS = frozenset(keyword.kwlist)


def _kind(f: NativeFunction) -> SchemaKind | None:
    try:
        return f.func.kind()
    except SchemaKindError:
        return None


def check_across_entries(ops: Sequence[Op]) -> Iterable[Problem]:
    """torchgen's error_check_native_functions."""
    by_name = {op.function.func.name: op.function for op in ops}
    by_base: dict[BaseOperatorName, int] = defaultdict(int)
    for op in ops:
        by_base[op.function.func.name.name] += 1
    for op in ops:
        f = op.function
        delegate = f.structured_delegate
        if delegate is not None:
            target = by_name.get(delegate)
            if target is None:
                yield Problem(op, "OPG301", f"structured_delegate names '{delegate}', which is not declared", "structured_delegate")
            elif not target.structured:
                yield Problem(op, "OPG301", f"structured_delegate '{delegate}' is not structured; add 'structured: True' "
                                            "to its entry", "structured_delegate")
        for i, arg in enumerate(f.func.arguments.flat_all):
            if arg.name in _PYTHON_KEYWORDS and (str(f.func.name), arg.name) not in _RESERVED_NAME_EXCEPTIONS:
                yield Problem(op, "OPG302", f"argument name '{arg.name}' is a reserved Python keyword", ("arg", i))
        name = str(f.func.name)
        if "inplace_view" in f.tags and name not in ("resize_", "resize_as_") and str(f.func.name.name) != "set_":
            base = f.func.name.name
            if not base.inplace:
                yield Problem(op, "OPG303", f"'{name}' is tagged inplace_view, so its name must end with '_'", "tags")
            elif by_base[BaseOperatorName(base.base, False, base.dunder_method)] == 0:
                yield Problem(op, "OPG303", f"'{name}' is tagged inplace_view, but there is no out-of-place view op "
                                            f"'{base.base}' with a matching schema", "tags")


def pre_group(ops: Sequence[Op], problems: list[Problem]) -> dict[FunctionSchema, dict[SchemaKind, Op]]:
    """Ops by shared signature, then by kind (torchgen's pre_group_native_functions)."""
    groups: dict[FunctionSchema, dict[SchemaKind, Op]] = defaultdict(dict)
    for op in ops:
        kind = _kind(op.function)
        if kind is None:
            continue
        d = groups[op.function.func.signature()]
        if kind in d:
            other = d[kind].function.func.name
            problems.append(Problem(op, "OPG304", f"'{op.function.func.name}' has the same signature and kind "
                                                  f"({kind.name}) as '{other}'; one of them must change"))
            continue
        d[kind] = op
    return groups


def _generate_missing(groups: dict[FunctionSchema, dict[SchemaKind, Op]], problems: list[Problem]) -> list[Op]:
    """torchgen's add_generated_native_functions: the functional and out= variants it adds."""
    added: list[Op] = []
    for d in groups.values():
        fs = [op.function for op in d.values()]
        is_core = any("core" in f.tags for f in fs)
        if all(f.manual_cpp_binding for f in fs):
            continue
        if any(f.is_view_op and str(f.func.name.name) != "set_" for f in fs):
            continue
        if all(f.has_composite_implicit_autograd_kernel for f in fs) and not is_core:
            continue
        has = d.keys()
        if SchemaKind.out in has and len(d) == 1:
            out = d[SchemaKind.out]
            if str(out.function.func.name) not in OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
                problems.append(Problem(out, "OPG307", f"out= operator '{out.function.func.name}' has no other variant; "
                                                       "declare its functional variant too"))
            continue
        if SchemaKind.inplace in has and str(d[SchemaKind.inplace].function.func.name) in INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
            continue
        base = next(d[k] for k in (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out, SchemaKind.functional) if k in d)
        bf = base.function
        valid = bf.func.kind() is SchemaKind.inplace or any(r.type.is_tensor_like() for r in bf.func.returns)
        needs_out = any("out" in str(name) for name in bf.autogen)
        has_out = SchemaKind.out in has
        gets_out = not has_out and valid and needs_out
        name = str(bf.func.name)
        if not has_out and not valid and name not in MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT \
                and name not in FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT:
            problems.append(Problem(base, "OPG307", f"'{name}' has no tensor-like return, so no out= variant can be "
                                                    "generated for it"))
        wanted = []
        if gets_out:
            wanted.append(SchemaKind.out)
        if SchemaKind.functional not in has and (has_out or gets_out):
            wanted.append(SchemaKind.functional)
        for kind in wanted:
            try:
                fn, metadata = generate_function(bf, kind)
            except (GenerationError, SchemaKindError) as exc:
                problems.append(Problem(base, "OPG307", f"cannot generate the {kind.name} variant of '{name}': {exc}", "autogen"))
                continue
            for problem in check_schema(fn.func):
                problems.append(Problem(base, "OPG307", f"the generated {kind.name} variant '{fn.func}' is invalid: "
                                                        f"{problem.message}", "autogen"))
            op = Op(fn, base.line, ((GENERATED_KEY, metadata),), generated=True)
            d[kind] = op
            added.append(op)
    return added


def _grow_index(index: dict[dk.DispatchKey, dict[OperatorName, BackendMetadata]], op: Op,
                problems: list[Problem]) -> None:
    name = op.function.func.name
    for key, metadata in op.metadata:
        table = index[key]
        if name in table:
            problems.append(Problem(op, "OPG300", f"operator '{name}' is declared twice (both have a {key} kernel)"))
            continue
        table[name] = metadata


def _check_group(d: dict[SchemaKind, Op], problems: list[Problem]) -> tuple[NativeFunctionsGroup | None, bool]:
    """torchgen's NativeFunctionsGroup.from_dict and its invariants: (the group or None, whether it broke a rule)."""
    if len(d) == 1:
        return None, False
    anchor = next(iter(d.values()))
    extra = [k for k in d if k not in (SchemaKind.functional, SchemaKind.inplace, SchemaKind.mutable, SchemaKind.out)]
    if extra:
        problems.append(Problem(d[extra[0]], "OPG305", f"'{d[extra[0]].function.func.name}' is a {extra[0].name} "
                                                       "variant, which cannot be grouped with the op's other variants"))
        return None, True
    functional = d.get(SchemaKind.functional)
    if functional is None:
        problems.append(Problem(anchor, "OPG305", f"'{anchor.function.func.name}' has other variants but no functional "
                                                  "variant; declare it (or let the codegen generate it with autogen)"))
        return None, True
    out = d.get(SchemaKind.out)
    if out is None:
        return None, False
    inplace, mutable = d.get(SchemaKind.inplace), d.get(SchemaKind.mutable)
    group = NativeFunctionsGroup(functional.function, inplace.function if inplace else None,
                                 mutable.function if mutable else None, out.function)
    ops = [o for o in (functional, out, inplace, mutable) if o is not None]
    ok = True

    def fail(op: Op, code: str, message: str, where: object = "name") -> None:
        nonlocal ok
        ok = False
        problems.append(Problem(op, code, message, where))

    structured = out.function.structured
    for op in ops:
        if op.function.part_of_structured_group != structured:
            fail(op, "OPG305", f"'{op.function.func.name}' and '{out.function.func.name}' are variants of one op, but only "
                               "one of them is structured (use structured_delegate on the others)",
                 "structured_delegate" if not structured else "name")
    for op in (inplace, mutable):
        if op is not None and op.function.namespace != functional.function.namespace:
            fail(op, "OPG305", f"'{op.function.func.name}' must be in the same namespace as '{functional.function.func.name}'")
    if out.function.namespace != functional.function.namespace:
        fail(out, "OPG305", f"'{out.function.func.name}' must be in the same namespace as '{functional.function.func.name}'")
    if mutable is not None and not functional.function.func.name.name.functional_overload:
        fail(functional, "OPG305", f"'{functional.function.func.name}' has a mutable variant, so its functional "
                                   f"variant must be named '{functional.function.func.name.name.base}_functional'")
    if structured:
        if out.function.has_composite_implicit_autograd_kernel or \
                out.function.has_composite_implicit_autograd_nested_tensor_kernel:
            fail(out, "OPG305", "structured kernels cannot be CompositeImplicitAutograd", "dispatch")
        for op in (functional, inplace):
            if op is not None and op.function.structured_delegate != out.function.func.name:
                fail(op, "OPG305", f"'{op.function.func.name}' delegates to '{op.function.structured_delegate}', but "
                                   f"its out= variant is '{out.function.func.name}'", "structured_delegate")
    generated = sorted(str(op.function.func.name) for op in ops if "generated" in op.function.tags)
    expected = sorted({str(name) for op in ops for name in op.function.autogen})
    if generated != expected:
        # torchgen reads autogen from the base variant: mutable, else in-place, else out=, else functional.
        base_first = [o for o in (mutable, inplace, out, functional) if o is not None and not o.generated]
        owner = next((op for op in ops if op.function.autogen), base_first[0] if base_first else anchor)
        listed = ", ".join(generated)
        if not expected:
            fail(owner, "OPG306", f"the codegen generates '{listed}' for this op; add 'autogen: {listed}' to the "
                                  f"entry", "autogen")
        else:
            fail(owner, "OPG306", f"autogen must list exactly what the codegen generates: 'autogen: {listed}' "
                                  f"(found 'autogen: {', '.join(expected)}')", "autogen")
    return (group if ok else None), not ok


def _group(ops: Sequence[Op], problems: list[Problem]) -> tuple[NativeFunction | NativeFunctionsGroup, ...]:
    """torchgen's get_grouped_native_functions."""
    out: list[NativeFunction | NativeFunctionsGroup] = []
    # Duplicate kinds were reported when the entries were first grouped.
    for d in pre_group(ops, []).values():
        group, failed = _check_group(d, problems)
        if group is not None:
            out.append(group)
            continue
        generated = next((op for op in d.values() if op.generated), None)
        if generated is not None and not failed:
            problems.append(Problem(generated, "OPG306", f"the generated op '{generated.function.func.name}' could not "
                                                         "be grouped with the variants it was generated from", "autogen"))
        out.extend(op.function for op in d.values())
    return tuple(out)


def view_schema_kind(f: NativeFunction) -> ViewSchemaKind:
    if f.is_view_op and f.func.name.name.inplace:
        return ViewSchemaKind.aliasing_inplace
    return ViewSchemaKind.aliasing if f.is_view_op else ViewSchemaKind.non_aliasing


def gets_generated_view_copy(f: NativeFunction) -> bool:
    return (f.is_view_op and not f.has_composite_implicit_autograd_kernel and "inplace_view" not in f.tags
            and not f.func.name.name.base.endswith("_inverse"))


def view_copy_name(f: NativeFunction) -> OperatorName:
    base = f.func.name.name
    return OperatorName(BaseOperatorName(f"{base.base}_copy", False, base.dunder_method), f.func.name.overload_name)


def _check_view_group(view: Op, copy: Op | None, inplace: Op | None, problems: list[Problem]) -> NativeFunctionsViewGroup:
    v = view.function
    if copy is None:
        if gets_generated_view_copy(v):
            problems.append(Problem(view, "OPG308", f"'{v.func.name}' aliases its inputs, so it needs a copy variant: add "
                                                    f"'{view_copy_name(v)}' (tagged view_copy) to native_functions.yaml"))
    else:
        c = copy.function
        if not c.func.name.name.base.endswith(("_copy", "_scatter")):
            problems.append(Problem(copy, "OPG308", f"'{c.func.name}' pairs with view '{v.func.name}', so its name must "
                                                    "end with _copy or _scatter"))
        elif v.func.signature() != c.func.signature(strip_view_copy_name=True):
            problems.append(Problem(copy, "OPG308", f"the signature of '{c.func.name}' does not match its view "
                                                    f"'{v.func.name}'"))
        elif "view_copy" not in c.tags:
            problems.append(Problem(copy, "OPG308", f"'{c.func.name}' is the copy variant of view '{v.func.name}', so it "
                                                    "needs the tag view_copy", "tags"))
    if inplace is not None:
        i = inplace.function
        if v.func.signature() != i.func.signature():
            problems.append(Problem(inplace, "OPG308", f"the signature of '{i.func.name}' does not match its view "
                                                       f"'{v.func.name}'"))
        if v.has_composite_implicit_autograd_kernel and not i.has_composite_implicit_autograd_kernel:
            problems.append(Problem(inplace, "OPG308", f"'{v.func.name}' and '{i.func.name}' must both have "
                                                       "CompositeImplicitAutograd kernels, or neither"))
        if v.has_composite_implicit_autograd_nested_tensor_kernel and \
                not i.has_composite_implicit_autograd_nested_tensor_kernel:
            problems.append(Problem(inplace, "OPG308", f"'{v.func.name}' and '{i.func.name}' must both have "
                                                       "CompositeImplicitAutogradNestedTensor kernels, or neither"))
    return NativeFunctionsViewGroup(v, copy.function if copy else None, inplace.function if inplace else None)


def _group_by_view(ops: Sequence[Op], problems: list[Problem]) -> tuple[NativeFunction | NativeFunctionsViewGroup, ...]:
    """torchgen's get_grouped_by_view_native_functions."""
    groups: dict[FunctionSchema, dict[object, Op]] = defaultdict(dict)
    for op in ops:
        f = op.function
        if f.is_view_op and f.func.name.name.inplace and "inplace_view" not in f.tags:
            problems.append(Problem(op, "OPG303", f"'{f.func.name}' is an in-place view op, so it needs the tag "
                                                  "inplace_view", "tags"))
            continue
        view_kind = view_schema_kind(f)
        kind: object = view_kind
        if view_kind is ViewSchemaKind.non_aliasing:
            kind = _kind(f)
            if kind is None:
                continue
        d = groups[f.func.view_signature()]
        if kind in d:
            other = d[kind].function.func.name
            if view_kind is ViewSchemaKind.non_aliasing:
                if other.name.base == f.func.name.name.base:
                    continue  # the same clash pre_group reports
                problems.append(Problem(op, "OPG304", f"'{f.func.name}' and '{other}' clash: with _copy/_scatter "
                                                      "names paired to their views, they have the same signature and kind"))
            else:
                problems.append(Problem(op, "OPG308", f"'{f.func.name}' and '{other}' are both {view_kind.name} view "
                                                      "variants of the same signature"))
            continue
        d[kind] = op
    out: list[NativeFunction | NativeFunctionsViewGroup] = []
    for d in groups.values():
        view = d.pop(ViewSchemaKind.aliasing, None)
        if view is not None:
            inplace = d.pop(ViewSchemaKind.aliasing_inplace, None)
            copy = d.pop(SchemaKind.functional, None)
            out.append(_check_view_group(view, copy, inplace, problems))
        out.extend(op.function for op in d.values())
    return tuple(out)


def assemble(ops: Sequence[Op]) -> NativeFunctions:
    problems: list[Problem] = []
    index: dict[dk.DispatchKey, dict[OperatorName, BackendMetadata]] = defaultdict(dict)
    for op in ops:
        _grow_index(index, op, problems)
    problems.extend(check_across_entries(ops))
    generated = _generate_missing(pre_group(ops, problems), problems)
    for op in generated:
        _grow_index(index, op, problems)
    all_ops = tuple(ops) + tuple(generated)
    groups = _group(all_ops, problems)
    view_groups = _group_by_view(all_ops, problems)
    indices = {
        key: BackendIndex(key, use_out_as_primary=True,
                          device_guard=dk.is_cuda_dispatch_key(key) or dk.is_xpu_dispatch_key(key),
                          external=False, index=table)
        for key, table in index.items()
    }
    return NativeFunctions(all_ops, indices, groups, view_groups, _unique(problems))


def _unique(problems: list[Problem]) -> tuple[Problem, ...]:
    seen = set()
    out = []
    for p in problems:
        key = (id(p.op), p.code, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return tuple(out)
