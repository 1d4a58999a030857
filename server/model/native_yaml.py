"""The whole of native_functions.yaml: generated variants, backend indices, groups.

`assemble` takes the lowered entries in file order and does what torchgen 2.13
does after reading them (error_check_native_functions,
add_generated_native_functions, BackendIndex.grow_index, and the two
groupings gen.py performs), reporting every rule it breaks as a Problem
instead of stopping at the first.

It is built for re-running after every edit: the work per operator group is
done by pure functions of position-free NativeFunctions, whose results a
GroupMemo carries to the next pass, so an edit recomputes only the groups it
touched; the passes over all operators are plain dictionary work.
"""

from __future__ import annotations

import functools
import keyword
import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar, cast

from ..frozen import record
from ..releases import Release, torch_cpu_cuda_kernel_op
from . import dispatch as dk
from .codegen_rules import (
    CUMULATIVE_BASES,
    RegisteringGroup,
    cumulative_out_problem,
    group_generator_problems,
    kernel_namespace_problems,
    missing_single_output_replay,
    mutable_optional_tensors,
    registering_group,
    registrations_lost,
    ufunc_problems,
    view_copy_kernel_problem,
    view_group_problems,
    view_meta_outputs_problem,
)
from .generate import (
    GENERATED_KEY,
    INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
    MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT,
    OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY,
    GenerationError,
    functionalization_refuses,
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
from .schema import BaseOperatorName, OperatorName, SchemaKind, SchemaKindError, signature_key
from .schema_rules import check_schema


class Op(NamedTuple):
    """A NativeFunction and the entry it comes from (generated ones: their base's entry).

    A NamedTuple: one is built per entry on every re-check, and tuples build fastest.
    """

    function: NativeFunction
    line: int  # 0-based first line of the entry
    metadata: tuple[tuple[dk.DispatchKey, BackendMetadata], ...]
    generated: bool = False


@record
class Problem:
    op: Op
    code: str
    message: str
    # What to point at: "name", an entry key such as "structured_delegate", or ("arg", i).
    where: object = "name"


# A problem found by a per-group function, which knows no positions:
# (index of the member it concerns, code, message, where).
Finding = tuple[int, str, str, object]


_F = TypeVar("_F")
_R = TypeVar("_R")


class GroupMemo:
    """The per-group work of the last assemble, for the next one (a NativeParser keeps one).

    Results are found by the identity of the NativeFunctions they were computed from: an unchanged
    entry lowers to the very same object on every re-check (entries are cached by their text), so
    every unchanged group is found, and an edited entry, a new object, is not. Such keys cost a few
    ids where hashing schemas costs milliseconds on a cold parse, where nothing is found anyway.
    Only what the last assemble used is kept, so memory follows the file and not the length of the
    session; kept arguments stay alive, so their ids cannot be reused while their key is kept.
    """

    def __init__(self) -> None:
        self._kept: dict[tuple[object, ...], tuple[object, object]] = {}
        self._used: dict[tuple[object, ...], tuple[object, object]] = {}

    def reuse(self, key: tuple[object, ...], compute: Callable[[], tuple[object, _R]]) -> _R:
        """The result kept for key (what work, and the ids of the functions it is done on), else the one
        compute() gives as (the functions, result); either is kept for the next pass."""
        found = self._kept.get(key)
        if found is None:
            found = compute()
        self._used[key] = found
        # The key's first item names the work, so what was kept for it is what compute() gives.
        return cast(_R, found[1])

    def end_pass(self) -> None:
        self._kept, self._used = self._used, {}


def _done(work: Callable[[_F], _R], functions: _F) -> tuple[_F, _R]:
    return functions, work(functions)


# Suffixes that relate one op to another across entries (view_copy and view_scatter ops, _functional variants).
_RELATED_SUFFIXES = ("_copy", "_scatter", "_functional", "_inverse")


def related_stem(name: str) -> str:
    """What relates ops of one group or view group: the base name without namespace, overload, leading and
    trailing '_' and the suffixes of generated and paired variants."""
    base = name.rpartition("::")[2].partition(".")[0].strip("_")
    for suffix in _RELATED_SUFFIXES:
        base = base.removesuffix(suffix)
    return base


@dataclass(frozen=True)
class NativeFunctions:
    ops: tuple[Op, ...]
    groups: tuple[NativeFunction | NativeFunctionsGroup, ...]
    view_groups: tuple[NativeFunction | NativeFunctionsViewGroup, ...]
    problems: tuple[Problem, ...]
    # The related_stem of each op named in the text past where reading stopped (OPG007; empty when the file was
    # read whole): a rule in this file or another must not call an op of these stems missing.
    stems_past_the_cut: frozenset[str] = frozenset()
    # For each generated op, the first operator of the pre-group that made it: its place in the order of generated
    # ops, groups and view groups (model/assembly.py places a re-assembled cluster's items by it).
    made_by: tuple[NativeFunction, ...] = ()

    def may_lie_past_the_cut(self, name: str) -> bool:
        """Whether an op of this name (or one grouped with it) may be declared where reading stopped."""
        return bool(self.stems_past_the_cut) and related_stem(name) in self.stems_past_the_cut

    @functools.cached_property
    def backend_indices(self) -> dict[dk.DispatchKey, BackendIndex]:
        """Built on first use: a re-check after an edit mostly needs none."""
        return backend_indices(self.ops)

    @property
    def native_functions(self) -> tuple[NativeFunction, ...]:
        return tuple(op.function for op in self.ops)

    @property
    def entry_ops(self) -> tuple[Op, ...]:
        """The ops of the file's entries, in file order (ops ends with the generated ones, one per made_by)."""
        return self.ops[:len(self.ops) - len(self.made_by)]

    @property
    def generated_ops(self) -> tuple[Op, ...]:
        return self.ops[len(self.ops) - len(self.made_by):]


def _kind(f: NativeFunction) -> SchemaKind | None:
    try:
        return f.func.kind()
    except SchemaKindError:
        return None


# ---------------------------------------------------------------- facts per function

@record
class Facts:
    """What the whole-file passes need of one function, computed once per function."""

    kind: SchemaKind | None
    # The printed signatures (see schema.signature_key): group keys.
    signature: str
    view_kind: ViewSchemaKind
    view_signature: str
    # Its place in a view group: the view kind, or for a non-aliasing op its schema kind; None if in none.
    view_group_kind: object
    # Rules of error_check_native_functions that need only this function.
    reserved_keywords: tuple[Finding, ...]
    cross_checked: bool  # has a structured_delegate or the inplace_view tag
    checked_across: bool  # reserved_keywords or cross_checked: check_across_entries has work


def facts(f: NativeFunction) -> Facts:
    memo = f._facts
    if not isinstance(memo, Facts):
        signature = signature_key(f.func)
        # The view signature differs only for names ending in _copy or _scatter.
        view_signature = signature
        if f.func.name.name.base.endswith(("_copy", "_scatter")):
            view_signature = signature_key(f.func, True)
        kind, view_kind = _kind(f), view_schema_kind(f)
        view_group_kind: object = kind if view_kind is ViewSchemaKind.non_aliasing else view_kind
        if view_kind is ViewSchemaKind.aliasing_inplace and "inplace_view" not in f.tags:
            view_group_kind = None  # an error (OPG303): torchgen stops there
        reserved = _reserved_keyword_findings(f)
        cross_checked = f.structured_delegate is not None or "inplace_view" in f.tags
        memo = Facts(kind, signature, view_kind, view_signature, view_group_kind, reserved, cross_checked,
                     bool(reserved) or cross_checked)
        object.__setattr__(f, "_facts", memo)
    return memo


# ---------------------------------------------------------------- rules across entries

_RESERVED_NAME_EXCEPTIONS = {("_has_compatible_shallow_copy_type", "from"), ("random_.from", "from"), ("uniform_", "from")}
_PYTHON_KEYWORDS = frozenset(keyword.kwlist)


def _reserved_keyword_findings(f: NativeFunction) -> tuple[Finding, ...]:
    for arg in f.func.arguments.flat_all:
        if arg.name in _PYTHON_KEYWORDS:
            break
    else:
        return ()  # nearly always
    name = str(f.func.name)
    return tuple((0, "OPG302", f"argument name '{arg.name}' is a reserved Python keyword", ("arg", i))
                 for i, arg in enumerate(f.func.arguments.flat_all)
                 if arg.name in _PYTHON_KEYWORDS and (name, arg.name) not in _RESERVED_NAME_EXCEPTIONS)


def check_across_entries(ops: Sequence[Op], fxs: Sequence[Facts], names: dict[OperatorName, Op],
                         repeated: dict[OperatorName, list[Op]], release: Release) -> Iterable[Problem]:
    """torchgen's error_check_native_functions (in `release`). fxs: the ops' facts; names, repeated: the ops by
    name (see _declared_twice)."""
    keywords_refused = release.refuses_python_keyword_argument_names
    bases: set[BaseOperatorName] | None = None  # needed for the few inplace_view ops only
    for op, fx in zip(ops, fxs):
        if not fx.checked_across:
            continue
        f = op.function
        for _, code, message, where in fx.reserved_keywords if keywords_refused else ():
            yield Problem(op, code, message, where)
        if not fx.cross_checked:
            continue
        delegate = f.structured_delegate
        if delegate is not None:
            # torchgen maps names to functions in file order: the last of a repeated name wins.
            target_op = repeated[delegate][-1] if delegate in repeated else names.get(delegate)
            target = target_op.function if target_op is not None else None
            if target is None:
                yield Problem(op, "OPG301", f"structured_delegate names '{delegate}', which is not declared",
                              "structured_delegate")
            elif not target.structured:
                yield Problem(op, "OPG301", f"structured_delegate '{delegate}' is not structured; add "
                                            "'structured: True' to its entry", "structured_delegate")
        if "inplace_view" in f.tags:
            name = str(f.func.name)
            base = f.func.name.name
            if name in release.inplace_view_exempt_ops or (str(base) == "set_" and release.set_passes_inplace_view_rules):
                continue
            if not base.inplace:
                yield Problem(op, "OPG303", f"'{name}' is tagged inplace_view, so its name must end with '_'", "tags")
            else:
                out_of_place = BaseOperatorName(base.base, False, base.dunder_method)
                found = OperatorName(out_of_place, f.func.name.overload_name) in names  # the usual case, no set
                if not found:
                    if bases is None:
                        bases = {other.name for other in names}
                    found = out_of_place in bases
                if not found:
                    yield Problem(op, "OPG303", f"'{name}' is tagged inplace_view, but there is no out-of-place view "
                                                f"op '{base.base}' with a matching schema", "tags")


def _declared_twice(ops: Iterable[Op], seen: dict[OperatorName, Op], repeated: dict[OperatorName, list[Op]],
                    problems: list[Problem]) -> None:
    """torchgen's BackendIndex takes one kernel per (dispatch key, operator): OPG300 for a second one.

    seen, repeated: the first op of each name met so far, and all of those of a name met more than once
    (one pass's ops, then its generated ones).
    """
    for op in ops:
        name = op.function.func.name
        first = seen.setdefault(name, op)
        if first is op:
            continue
        earlier = repeated.setdefault(name, [first])
        keys = {key for other in earlier for key, _ in other.metadata}
        clashes = [str(key) for key, _ in op.metadata if key in keys]
        if clashes:
            problems.append(Problem(op, "OPG300", f"operator '{name}' is declared twice (both have kernels for "
                                                  f"{', '.join(clashes)})"))
        earlier.append(op)


def backend_indices(ops: Iterable[Op]) -> dict[dk.DispatchKey, BackendIndex]:
    """torchgen's BackendIndex per dispatch key: the first kernel given for each operator."""
    index: dict[dk.DispatchKey, dict[OperatorName, BackendMetadata]] = defaultdict(dict)
    for op in ops:
        name = op.function.func.name
        for key, metadata in op.metadata:
            index[key].setdefault(name, metadata)
    return {key: BackendIndex(key, use_out_as_primary=True,
                              device_guard=dk.is_cuda_dispatch_key(key) or dk.is_xpu_dispatch_key(key),
                              external=False, index=table)
            for key, table in index.items()}


def pre_group(ops: Sequence[Op], fxs: Sequence[Facts], problems: list[Problem]) -> dict[str, dict[SchemaKind, Op]]:
    """Ops by shared signature, then by kind (torchgen's pre_group_native_functions); fxs: their facts."""
    groups: dict[str, dict[SchemaKind, Op]] = defaultdict(dict)
    for op, fx in zip(ops, fxs):
        kind = fx.kind
        if kind is None:
            continue
        d = groups[fx.signature]
        if kind in d:
            other = d[kind].function.func.name
            problems.append(Problem(op, "OPG304", f"'{op.function.func.name}' has the same signature and kind "
                                                  f"({kind.name}) as '{other}'; one of them must change"))
            continue
        d[kind] = op
    return groups


# ---------------------------------------------------------------- generated variants

Members = tuple[tuple[SchemaKind, NativeFunction], ...]


def generate_for_group(members: Members, release: Release
                       ) -> tuple[tuple[tuple[int, SchemaKind, NativeFunction, BackendMetadata], ...],
                                  tuple[Finding, ...]]:
    """torchgen's add_generated_native_functions for one group (in `release`): (base index, kind, function,
    kernel) and findings."""
    d = dict(members)
    # Nothing is generated for a group whose members all bind manually, one with a view op (but set_), or one that
    # is all CompositeImplicitAutograd and not core: one loop over the members asks all three (most groups).
    all_manual = all_implicit = True
    core = False
    for f in d.values():
        if f.is_view_op and not (release.set_passes_inplace_view_rules and str(f.func.name.name) == "set_"):
            return (), ()
        all_manual = all_manual and f.manual_cpp_binding
        all_implicit = all_implicit and f.has_composite_implicit_autograd_kernel
        core = core or "core" in f.tags
    if all_manual or (all_implicit and not (core and release.core_composite_ops_get_generated_variants)):
        return (), ()
    index_of = {kind: i for i, (kind, _) in enumerate(members)}
    has_out = SchemaKind.out in d
    if has_out and len(d) == 1:
        if release.parse_only or str(d[SchemaKind.out].func.name) in OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
            return (), ()
        return (), ((0, "OPG307", f"out= operator '{d[SchemaKind.out].func.name}' has no other variant; declare its "
                                  "functional variant too", "name"),)
    if SchemaKind.inplace in d and str(d[SchemaKind.inplace].func.name) in INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
        return (), ()
    order = _BASE_ORDER if release.generated_variants_based_on_mutable else _BASE_ORDER_INPLACE_FIRST
    base_kind = next(k for k in order if k in d)
    base, at = d[base_kind], index_of[base_kind]
    name = str(base.func.name)
    valid = base_kind is SchemaKind.inplace or any(r.type.is_tensor_like() for r in base.func.returns)
    gets_out = not has_out and valid and any("out" in str(n) for n in base.autogen)
    findings: list[Finding] = []
    if not has_out and not valid and name not in MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT \
            and name not in release.functional_ops_without_out_variant:
        findings.append((at, "OPG307", f"'{name}' has no tensor-like return, so no out= variant can be generated "
                                       "for it", "name"))
    wanted = ([SchemaKind.out] if gets_out else []) + \
        ([SchemaKind.functional] if SchemaKind.functional not in d and (has_out or gets_out) else [])
    made = []
    for kind in wanted:
        try:
            fn, metadata = generate_function(base, kind, release)
        except (GenerationError, SchemaKindError) as exc:
            findings.append((at, "OPG307", f"cannot generate the {kind.name} variant of '{name}': {exc}", "autogen"))
            continue
        for problem in check_schema(fn.func):
            findings.append((at, "OPG307", f"the generated {kind.name} variant '{fn.func}' is invalid: "
                                           f"{problem.message}", "autogen"))
        for _, why in mutable_optional_tensors(fn.func, fn.use_const_ref_for_mutable_tensors):
            findings.append((at, "OPG208", f"in the generated {kind.name} variant '{fn.func}', {why}", "autogen"))
        made.append((at, kind, fn, metadata))
    return tuple(made), tuple(findings)


# ---------------------------------------------------------------- groups

GroupMembers = tuple[tuple[SchemaKind, NativeFunction, bool], ...]
# A broken group rule: the variant to report it on, the code, the message, and where in that entry.
GroupProblem = tuple[SchemaKind, str, str, object]
_GROUPABLE = (SchemaKind.functional, SchemaKind.inplace, SchemaKind.mutable, SchemaKind.out)
# torchgen reads autogen from the base variant: mutable, else in-place, else out=, else functional.
_BASE_ORDER = (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out, SchemaKind.functional)
# ... in-place first until 2.5 (Release.generated_variants_based_on_mutable).
_BASE_ORDER_INPLACE_FIRST = (SchemaKind.inplace, SchemaKind.mutable, SchemaKind.out, SchemaKind.functional)


def check_group(members: GroupMembers) -> tuple[NativeFunctionsGroup | None, bool, tuple[Finding, ...]]:
    """torchgen's NativeFunctionsGroup.from_dict and its invariants: (group or None, whether a rule broke, findings).

    Members are (kind, function, generated) in pre-group order.
    """
    if len(members) == 1:
        return None, False, ()
    d = {kind: f for kind, f, _ in members}
    refused = _ungroupable(members, d)
    if refused is not None:
        return None, True, (_finding(members, refused),)
    out = d.get(SchemaKind.out)
    if out is None:
        return None, False, ()
    functional = d[SchemaKind.functional]
    problems = [*_structured_mismatches(members, out), *_namespace_mismatches(d, functional),
                *_functional_name_problems(d, functional), *_structured_rule_problems(d, out),
                *_autogen_problems(members, d)]
    if problems:
        return None, True, tuple(_finding(members, problem) for problem in problems)
    return NativeFunctionsGroup(functional, d.get(SchemaKind.inplace), d.get(SchemaKind.mutable), out), False, ()


def _finding(members: GroupMembers, problem: GroupProblem) -> Finding:
    kind, code, message, where = problem
    return next(i for i, (k, _, _) in enumerate(members) if k is kind), code, message, where


def _ungroupable(members: GroupMembers, d: dict[SchemaKind, NativeFunction]) -> GroupProblem | None:
    """Why the variants cannot form a group at all: a kind that is never grouped, or no functional variant."""
    extra = next((k for k in d if k not in _GROUPABLE), None)
    if extra is not None:
        return (extra, "OPG305", f"'{d[extra].func.name}' is a {extra.name} variant, which cannot be grouped with "
                                 "the op's other variants", "name")
    if SchemaKind.functional not in d:
        first_kind, first, _ = members[0]
        return (first_kind, "OPG305", f"'{first.func.name}' has other variants but no functional variant; declare "
                                      "it (or let the codegen generate it with autogen)", "name")
    return None


def _structured_mismatches(members: GroupMembers, out: NativeFunction) -> list[GroupProblem]:
    """Variants of a structured out= that are not part of its structured group, or the other way round."""
    where = "name" if out.structured else "structured_delegate"
    return [(kind, "OPG305", f"'{f.func.name}' and '{out.func.name}' are variants of one op, but only one of them "
                             "is structured (use structured_delegate on the others)", where)
            for kind, f, _ in members if f.part_of_structured_group != out.structured]


def _namespace_mismatches(d: dict[SchemaKind, NativeFunction], functional: NativeFunction) -> list[GroupProblem]:
    return [(kind, "OPG305", f"'{variant.func.name}' must be in the same namespace as '{functional.func.name}'",
             "name")
            for kind in (SchemaKind.out, SchemaKind.inplace, SchemaKind.mutable)
            if (variant := d.get(kind)) is not None and variant.namespace != functional.namespace]


def _functional_name_problems(d: dict[SchemaKind, NativeFunction], functional: NativeFunction) -> list[GroupProblem]:
    if SchemaKind.mutable not in d or functional.func.name.name.functional_overload:
        return []
    return [(SchemaKind.functional, "OPG305", f"'{functional.func.name}' has a mutable variant, so its functional "
                                              f"variant must be named '{functional.func.name.name.base}_functional'",
             "name")]


def _structured_rule_problems(d: dict[SchemaKind, NativeFunction], out: NativeFunction) -> list[GroupProblem]:
    """A structured out= kernel is not CompositeImplicitAutograd, and its functional and in-place variants
    delegate to it (one that delegates to nothing is reported already: by _structured_mismatches, or OPG116 when
    it is structured itself)."""
    if not out.structured:
        return []
    problems: list[GroupProblem] = []
    if out.has_composite_implicit_autograd_kernel or out.has_composite_implicit_autograd_nested_tensor_kernel:
        problems.append((SchemaKind.out, "OPG305", "structured kernels cannot be CompositeImplicitAutograd",
                         "dispatch"))
    problems.extend((kind, "OPG305", f"'{variant.func.name}' delegates to '{variant.structured_delegate}', but its "
                                     f"out= variant is '{out.func.name}'", "structured_delegate")
                    for kind in (SchemaKind.functional, SchemaKind.inplace)
                    if (variant := d.get(kind)) is not None and variant.structured_delegate is not None
                    and variant.structured_delegate != out.func.name)
    return problems


def _autogen_problems(members: GroupMembers, d: dict[SchemaKind, NativeFunction]) -> list[GroupProblem]:
    """autogen: lists exactly the variants the codegen generated, reported on the entry that holds it."""
    generated = sorted(str(f.func.name) for _, f, _ in members if "generated" in f.tags)
    expected = sorted({str(name) for _, f, _ in members for name in f.autogen})
    if generated == expected:
        return []
    declared = {kind for kind, _, was_generated in members if not was_generated}
    owners = [k for k in _BASE_ORDER if k in declared]
    owner = next((k for k, f, _ in members if f.autogen), owners[0] if owners else members[0][0])
    listed = ", ".join(generated)
    if not expected:
        return [(owner, "OPG306", f"the codegen generates '{listed}' for this op; add 'autogen: {listed}' to the "
                                  "entry", "autogen")]
    return [(owner, "OPG306", f"autogen must list exactly what the codegen generates: 'autogen: {listed}' "
                              f"(found 'autogen: {', '.join(expected)}')", "autogen")]


# ---------------------------------------------------------------- view groups

def gets_generated_view_copy(f: NativeFunction) -> bool:
    return (f.is_view_op and not f.has_composite_implicit_autograd_kernel and "inplace_view" not in f.tags
            and not f.func.name.name.base.endswith("_inverse"))


def view_copy_name(f: NativeFunction) -> OperatorName:
    base = f.func.name.name
    return OperatorName(BaseOperatorName(f"{base.base}_copy", False, base.dunder_method), f.func.name.overload_name)


def view_schema_kind(f: NativeFunction) -> ViewSchemaKind:
    if f.is_view_op and f.func.name.name.inplace:
        return ViewSchemaKind.aliasing_inplace
    return ViewSchemaKind.aliasing if f.is_view_op else ViewSchemaKind.non_aliasing


def check_view_group(view: NativeFunction, copy: NativeFunction | None, inplace: NativeFunction | None,
                     release: Release) -> tuple[NativeFunctionsViewGroup, tuple[Finding, ...]]:
    """torchgen's NativeFunctionsViewGroup invariants. Finding indices: 0 view, 1 copy, 2 inplace."""
    findings: list[Finding] = []
    if copy is None:
        if gets_generated_view_copy(view):
            findings.append((0, "OPG308", f"'{view.func.name}' aliases its inputs, so it needs a copy variant: add "
                                          f"'{view_copy_name(view)}' (tagged view_copy) to native_functions.yaml", "name"))
    elif not copy.func.name.name.base.endswith(("_copy", "_scatter")):
        findings.append((1, "OPG308", f"'{copy.func.name}' pairs with view '{view.func.name}', so its name must end "
                                      "with _copy or _scatter", "name"))
    elif view.func.signature() != copy.func.signature(strip_view_copy_name=True):
        findings.append((1, "OPG308", f"the signature of '{copy.func.name}' does not match its view "
                                      f"'{view.func.name}'", "name"))
    elif "view_copy" not in copy.tags:
        findings.append((1, "OPG308", f"'{copy.func.name}' is the copy variant of view '{view.func.name}', so it needs "
                                      "the tag view_copy", "tags"))
    if inplace is not None:
        if view.func.signature() != inplace.func.signature():
            findings.append((2, "OPG308", f"the signature of '{inplace.func.name}' does not match its view "
                                          f"'{view.func.name}'", "name"))
        if view.has_composite_implicit_autograd_kernel and not inplace.has_composite_implicit_autograd_kernel:
            findings.append((2, "OPG308", f"'{view.func.name}' and '{inplace.func.name}' must both have "
                                          "CompositeImplicitAutograd kernels, or neither", "name"))
        if view.has_composite_implicit_autograd_nested_tensor_kernel and \
                not inplace.has_composite_implicit_autograd_nested_tensor_kernel:
            findings.append((2, "OPG308", f"'{view.func.name}' and '{inplace.func.name}' must both have "
                                          "CompositeImplicitAutogradNestedTensor kernels, or neither", "name"))
    findings.extend((member, "OPG128", message, where)
                    for member, where, message in view_group_problems(view, copy, inplace, release))
    return NativeFunctionsViewGroup(view, copy, inplace), tuple(findings)


def _group_by_view(ops: Sequence[Op], fxs: Sequence[Facts], problems: list[Problem], memo: GroupMemo,
                   release: Release) -> tuple[NativeFunction | NativeFunctionsViewGroup, ...]:
    """torchgen's get_grouped_by_view_native_functions; fxs: the ops' facts."""
    groups: dict[str, dict[object, Op]] = defaultdict(dict)
    for op, fx in zip(ops, fxs):
        kind = fx.view_group_kind
        if kind is None:
            if fx.view_kind is ViewSchemaKind.aliasing_inplace:
                problems.append(Problem(op, "OPG303", f"'{op.function.func.name}' is an in-place view op, so it needs "
                                                      "the tag inplace_view", "tags"))
            continue
        d = groups[fx.view_signature]
        if kind in d:
            f, view_kind = op.function, fx.view_kind
            other = d[kind].function.func.name
            if view_kind is not ViewSchemaKind.non_aliasing:
                problems.append(Problem(op, "OPG308", f"'{f.func.name}' and '{other}' are both {view_kind.name} view "
                                                      "variants of the same signature"))
            elif other.name.base != f.func.name.name.base:  # a clash of the same base is pre_group's
                problems.append(Problem(op, "OPG304", f"'{f.func.name}' and '{other}' clash: with _copy/_scatter names "
                                                      "paired to their views, they have the same signature and kind"))
            continue
        d[kind] = op
    out: list[NativeFunction | NativeFunctionsViewGroup] = []
    for d in groups.values():
        view = d.pop(ViewSchemaKind.aliasing, None)
        if view is not None:
            inplace = d.pop(ViewSchemaKind.aliasing_inplace, None)
            copy = d.pop(SchemaKind.functional, None)
            functions = (view.function, copy.function if copy else None, inplace.function if inplace else None)
            group, findings = memo.reuse(("view", tuple(map(id, functions)), release.version),
                                         lambda: (functions, check_view_group(*functions, release)))  # noqa: B023 (reuse calls it at once)
            roles = (view, copy, inplace)
            # A finding concerns a member the group has (copy and inplace may be missing).
            problems.extend(Problem(role, code, message, where) for i, code, message, where in findings
                            if (role := roles[i]) is not None)
            problems.extend(_view_group_codegen_problems(view, copy, inplace, release))
            out.append(group)
        out.extend(op.function for op in d.values())
    return tuple(out)


def _view_group_codegen_problems(view: Op, copy: Op | None, inplace: Op | None, release: Release
                                 ) -> Iterable[Problem]:
    """OPG128 for what gen.py's functionalization of a view group fails on in its kernels or its release's rules:
    the kernel name of view_copy, (torch 2.15) a multi-output view op without a single-output replay, and (from
    2.9, the ViewMeta classes) a single-output view whose copy has several outputs."""
    if copy is not None and str(copy.function.func.name) == "view_copy" and release.view_copy_kernels_by_backend_index:
        for key, meta in copy.metadata:
            why = view_copy_kernel_problem(copy.function, meta.kernel) if key == dk.CEA_NON_FUNCTIONAL else None
            if why:
                yield Problem(copy, "OPG128", why, ("dispatch", str(key)))
    if view.function.has_composite_implicit_autograd_kernel:  # no ViewMeta classes
        return
    for op in (view, inplace):
        if op is None:
            continue
        why = missing_single_output_replay(op.function, release)
        if why:
            yield Problem(op, "OPG128", why)
        why = view_meta_outputs_problem(op.function, copy.function, release) if copy is not None else None
        if why:
            first = op.function.func.arguments.flat_non_out[:1]
            yield Problem(op, "OPG128", why, ("arg", 0) if first and first[0].is_write else "name")


def _group_codegen_problems(g: NativeFunctionsGroup, ops: dict[SchemaKind, Op], release: Release
                            ) -> Iterable[Problem]:
    """What gen.py's generators fail on in a group after its parse passed (codegen_rules.py), at the ufunc key,
    argument or kernel to blame."""
    out = ops[SchemaKind.out]
    if g.out.ufunc_inner_loop:
        for where, message in ufunc_problems(g.functional, g.out):
            if isinstance(where, tuple) and where[0] == "functional-arg":
                yield Problem(ops[SchemaKind.functional], "OPG127", message, ("arg", where[1]))
            else:
                yield Problem(out, "OPG127", message, where)
    if _custom_namespace(out.metadata):
        yield from _namespace_problems(out)
    why = cumulative_out_problem(g.out, g.functional, release.cumulative_out_ops)
    if why:
        yield Problem(out, "OPG130", why)


# What a group's memo keeps: the group (or None), whether a rule broke, its findings, and what gen.py's
# generators fail on in it (codegen_rules.group_generator_problems: member kind, code, where, message).
GroupChecked = tuple[NativeFunctionsGroup | None, bool, tuple[Finding, ...],
                     tuple[tuple[SchemaKind, str, object, str], ...]]


def _check_group_and_generators(members: tuple[tuple[SchemaKind, NativeFunction, bool], ...]) -> GroupChecked:
    """check_group, and for a group it makes the generators' problems too: one memo entry per group, so a
    re-check builds one key and makes one lookup for both."""
    group, failed, findings = check_group(members)
    return group, failed, findings, (() if group is None else tuple(group_generator_problems(group)))


def _custom_namespace(metadata: tuple[tuple[dk.DispatchKey, BackendMetadata], ...]) -> bool:
    for _, meta in metadata:  # a plain loop: asked of every op on every re-check
        if meta.cpp_namespace != "at::native":
            return True
    return False


def _namespace_problems(op: Op) -> Iterable[Problem]:
    for key, message in kernel_namespace_problems(op.metadata):
        yield Problem(op, "OPG129", message, ("dispatch", str(key)))


# ---------------------------------------------------------------- the whole file

def _unfunctionalizable(loose: Sequence[Op], view_groups: Sequence[NativeFunction | NativeFunctionsViewGroup],
                        release: Release) -> Iterable[Problem]:
    """gen.py's functionalization takes every op in no group and no view group as it is, and fails on one
    that writes an argument without a CompositeImplicitAutograd kernel (after the parse, so torchgen's
    check of the file passes and the build fails)."""
    refused = [op for op in loose if functionalization_refuses(op.function, release)]
    if not refused:  # the usual case: no need to collect the view groups' names on every re-check
        return
    in_view_groups = {f.func.name for g in view_groups if isinstance(g, NativeFunctionsViewGroup)
                      for f in g.functions()}
    for op in refused:
        f = op.function
        if f.func.name not in in_view_groups:
            yield Problem(op, "OPG309", f"'{f.func.name}' writes to an argument but has no functional variant to "
                                        "be grouped with, nor a CompositeImplicitAutograd kernel: gen.py's "
                                        "functionalization fails on it. Add the functional (and out=) variant, or "
                                        "implement it as CompositeImplicitAutograd")


def unregistered_torch_cpu_cuda_kernels(ops: Sequence[Op], release: Release
                                        ) -> tuple[tuple[str, Op | None, object], ...]:
    """gen.py 2.15 fails before generating when a CUDA kernel it lists as defined in torch_cpu is registered to
    no CUDA-family key (its kernel was renamed, moved to another key, or its op removed). Each such kernel, with
    the entry to blame and where in it (None: no entry relates, the file as a whole)."""
    listed = release.cuda_kernels_in_torch_cpu
    if not listed:
        return ()
    cuda_keys = dk.CUDA_KEYS  # a set, not is_cuda_dispatch_key: this runs over every kernel on every re-check
    registered = {meta.kernel for op in ops for key, meta in op.metadata if key in cuda_keys}
    out: list[tuple[str, Op | None, object]] = []
    for kernel in sorted(listed - registered):
        elsewhere = next(((op, key) for op in ops for key, meta in op.metadata if meta.kernel == kernel), None)
        own = torch_cpu_cuda_kernel_op(kernel)
        op = next((op for op in ops if str(op.function.func.name) == own), None)
        if elsewhere is not None:
            out.append((kernel, elsewhere[0], ("dispatch", str(elsewhere[1]))))
        elif op is not None:
            cuda = next((key for key, _ in op.metadata if dk.is_cuda_dispatch_key(key)), None)
            out.append((kernel, op, ("dispatch", str(cuda)) if cuda is not None else "name"))
        else:
            out.append((kernel, None, None))
    return tuple(out)


def unregistered_kernel_message(kernels: Sequence[str], release: Release) -> str:
    """Why gen.py fails on one kernel of its list (with the op its own yaml registers it for), or on several."""
    if len(kernels) > 1:
        names = ", ".join(f"'{k}'" for k in kernels)
        return (f"{release}'s gen.py lists the CUDA kernels {names} as defined in torch_cpu and fails when no "
                "CUDA-family dispatch key registers one (AssertionError: _CPU_DLL_CUDA_KERNELS has stale entries); "
                "no entry here registers them")
    kernel = kernels[0]
    own = torch_cpu_cuda_kernel_op(kernel)
    return (f"{release}'s gen.py lists the CUDA kernel '{kernel}' as defined in torch_cpu and fails when no "
            "CUDA-family dispatch key registers it (AssertionError: _CPU_DLL_CUDA_KERNELS has stale entries)"
            + (f"; {release}'s own yaml registers it as the CUDA kernel of '{own}'" if own else ""))


def _lost_registrations(grouped: list[NativeFunction | NativeFunctionsGroup], groups: dict[str, dict[SchemaKind, Op]],
                        release: Release) -> list[Problem]:
    """OPG954 where gen.py of `release` (one Register<Key>.cpp) starts its registrations over at a change of op
    namespace, dropping those of the ops before it (codegen_rules.registrations_lost)."""
    if len({g.namespace if isinstance(g, NativeFunction) else g.functional.namespace for g in grouped}) < 2:
        return []  # every real yaml: one namespace, nothing to drop
    by_function = {id(op.function): op for d in groups.values() for op in d.values()}
    placed: list[tuple[Op, RegisteringGroup]] = []
    for g in grouped:
        if isinstance(g, NativeFunction):
            op = by_function[id(g)]
            placed.append((op, registering_group(g.namespace, op.metadata, op.metadata, False)))
            continue
        members = [by_function[id(f)] for f in g.functions()]
        every = tuple(kernel for op in members for kernel in op.metadata)
        placed.append((min(members, key=lambda op: op.line),
                       registering_group(g.functional.namespace, by_function[id(g.out)].metadata, every, g.structured)))
    out = []
    for i, left, counts in registrations_lost([r for _, r in placed]):
        op, here = placed[i]
        dropped = ", ".join(f"{n} under {key}" for key, n in counts.items())
        out.append(Problem(op, "OPG954", f"{release}'s gen.py drops kernel registrations (m.impl) of the ops before "
                                         f"this one: at this op of namespace '{here.namespace}' after ops of '{left}' "
                                         f"it starts its Register<Key>.cpp registrations over, losing those of "
                                         f"{dropped} op group(s); torch 2.7 on registers them all"))
    return out


def assemble(ops: Sequence[Op], memo: GroupMemo | None = None, *, release: Release) -> NativeFunctions:
    """memo: the previous assemble's per-group work, to reuse (a re-check); None for a one-off.
    release: the torch release whose rules apply."""
    memo = memo or GroupMemo()
    problems: list[Problem] = []
    names: dict[OperatorName, Op] = {}
    repeated: dict[OperatorName, list[Op]] = {}
    _declared_twice(ops, names, repeated, problems)
    fxs = [facts(op.function) for op in ops]
    problems.extend(check_across_entries(ops, fxs, names, repeated, release))
    groups = pre_group(ops, fxs, problems)
    made_by: list[NativeFunction] = []
    generated = _add_generated(groups, fxs, memo, release, problems, made_by)
    _declared_twice(generated, names, repeated, problems)
    # Grouping and what follows it are gen.py's, after the parse: a backend's own parse never reaches them.
    after_parse: list[Problem] = [] if release.parse_only else problems
    grouped, loose = _group_all(groups, memo, release, after_parse)
    if not release.register_dispatch_key_sharded:
        after_parse.extend(_lost_registrations(grouped, groups, release))
    all_ops = tuple(ops) + tuple(generated)
    view_groups = _group_by_view(all_ops, fxs, after_parse, memo, release)
    memo.end_pass()
    after_parse.extend(_unfunctionalizable(loose, view_groups, release))
    return NativeFunctions(all_ops, tuple(grouped), view_groups, tuple(problems), made_by=tuple(made_by))


_FUNCTION = operator.itemgetter(0)  # Op.function, without the call of a NamedTuple's property


def _ids(d: dict[SchemaKind, Op]) -> tuple[int, ...]:
    """The ids of a pre-group's functions in order, for its memo keys (GroupMemo): built for every group on every
    re-check, so by C iterators alone."""
    return tuple(map(id, map(_FUNCTION, d.values())))


def _add_generated(groups: dict[str, dict[SchemaKind, Op]], fxs: list[Facts], memo: GroupMemo, release: Release,
                   problems: list[Problem], made_by: list[NativeFunction]) -> list[Op]:
    """torchgen's add_generated_native_functions over every pre-group: the generated ops, each put in the group of
    its signature (and its facts appended to fxs); made_by: told the first operator of each one's pre-group."""
    generated: list[Op] = []
    for d in list(groups.values()):
        made, findings = memo.reuse(("generate", _ids(d)),
                                    lambda: _done(lambda fs: generate_for_group(fs, release),
                                                  tuple([(k, op.function) for k, op in d.items()])))  # noqa: B023 (called at once)
        if not (made or findings):
            continue  # nearly every group, on every re-check
        members = tuple(d.values())  # before a generated op joins d
        if findings:
            problems.extend(Problem(members[i], code, message, where) for i, code, message, where in findings)
        for at, kind, fn, metadata in made:
            op = Op(fn, members[at].line, ((GENERATED_KEY, metadata),), generated=True)
            generated.append(op)
            made_by.append(members[0].function)
            fx = facts(fn)
            fxs.append(fx)
            # Usually the group it came from; torchgen's second grouping pass decides, and so do we.
            groups[fx.signature][kind] = op
    return generated


def _group_all(groups: dict[str, dict[SchemaKind, Op]], memo: GroupMemo, release: Release, problems: list[Problem]
               ) -> tuple[list[NativeFunction | NativeFunctionsGroup], list[Op]]:
    """torchgen's NativeFunctionsGroup.from_dict over every pre-group: the groups and ungrouped functions, and the
    ops in no group (not for a grouping error, which torchgen reports first)."""
    grouped: list[NativeFunction | NativeFunctionsGroup] = []
    loose: list[Op] = []
    for d in groups.values():
        # The kind and whether it was generated follow from the function: its id says it all.
        group, failed, findings, generator_found = memo.reuse(
            ("group", _ids(d)),
            lambda: _done(_check_group_and_generators, tuple([(k, op.function, op.generated) for k, op in d.items()])))  # noqa: B023 (called at once)
        if findings:
            members = tuple(d.values())
            problems.extend(Problem(members[i], code, message, where) for i, code, message, where in findings)
        if group is not None:
            _add_group_codegen_problems(group, d, generator_found, release, problems)
            grouped.append(group)
            continue
        _add_loose(d, failed, problems, loose)
        grouped.extend(op.function for op in d.values())
    return grouped, loose


def _add_group_codegen_problems(group: NativeFunctionsGroup, d: dict[SchemaKind, Op],
                                generator_found: tuple[tuple[SchemaKind, str, object, str], ...], release: Release,
                                problems: list[Problem]) -> None:
    """What gen.py's generators fail on in a group: the rare rules asked of its out= variant, and generator_found
    (the memo's, by member kind)."""
    out = d[SchemaKind.out]  # a group's kernels are looked up by its out= variant
    if group.out.ufunc_inner_loop or _custom_namespace(out.metadata) \
            or group.out.func.name.name.base in CUMULATIVE_BASES:  # rare: asked cheaply of every group
        problems.extend(_group_codegen_problems(group, d, release))
    if generator_found:
        problems.extend(Problem(d[kind], code, message, where) for kind, code, where, message in generator_found)


def _add_loose(d: dict[SchemaKind, Op], failed: bool, problems: list[Problem], loose: list[Op]) -> None:
    """The members of a pre-group that makes no group: their namespace problems, OPG306 for a generated one, else
    (no grouping rule broke) each is loose."""
    for op in d.values():
        if _custom_namespace(op.metadata):
            problems.extend(_namespace_problems(op))
    first_generated = next((op for op in d.values() if op.generated), None)
    if first_generated is not None and not failed:
        problems.append(Problem(first_generated, "OPG306", f"the generated op '{first_generated.function.func.name}' "
                                                           "could not be grouped with the variants it came from",
                                "autogen"))
    elif not failed:
        loose.extend(d.values())
