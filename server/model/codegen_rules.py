"""What torchgen's parse of native_functions.yaml lets through and its C++ generators then die on.

gen.py reads such a file without complaint and fails later with an AssertionError and no line. Each rule is a
predicate that `opgen check` (and the server) reports at the line that is wrong, and that opgen's codegen relies
on, so that `opgen generate` never meets, on input the check accepts, a case it cannot emit.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..frozen import record
from ..releases import Release
from . import dispatch as dk
from .native_function import BackendMetadata, NativeFunction, NativeFunctionsGroup, ScalarType, UfuncKey
from .schema import BaseTy, BaseType, CustomClassType, FunctionSchema, ListType, OptionalType, SchemaKind, Type
from .schema_rules import Where

TENSOR = BaseType(BaseTy.Tensor)
SCALAR = BaseType(BaseTy.Scalar)


def untranslatable(t: Type) -> str | None:
    """Why the C++ type translation (api/cpp.py) has no C++ type for t, None when it has one."""
    if isinstance(t, CustomClassType):
        return f"the custom class type '{t}' has no C++ type in torchgen's codegen (gen.py fails on it)"
    if isinstance(t, OptionalType):
        return untranslatable(t.elem)
    if isinstance(t, ListType):
        if t.elem == BaseType(BaseTy.bool) and t.size is None:
            return "a bool list needs a size (bool[N], a std::array in C++); gen.py fails on 'bool[]'"
        return untranslatable(t.elem)
    return None


def unconvertible_argument(t: Type) -> str | None:
    """Why an argument of type t cannot be passed to the C++ API without SymInt (translate.py finds no int64_t
    form for it: gen.py fails with UnsatError). Returns keep SymInt, so this is for arguments only."""
    if isinstance(t, OptionalType):
        return unconvertible_argument(t.elem)
    if isinstance(t, ListType) and t.elem != BaseType(BaseTy.SymInt) and t.elem.is_symint_like():
        return (f"an argument '{t}' has no int64_t form for the C++ API without SymInt (gen.py cannot translate "
                "it); use 'SymInt[]' or an int list")
    return None


def unreturnable(t: Type) -> str | None:
    """Why a return of type t has no C++ return type (api/cpp.py's returntype_type), None when it has one.
    (A mutable list return has none either: untranslatable_types refuses it.)"""
    why = untranslatable(t)
    if why or t == TENSOR or t == SCALAR or is_value_type(t):
        return why
    if isinstance(t, ListType):
        if t.size is not None:
            return f"a fixed size list cannot be returned ('{t}'): return '{t.elem}[]'"
        return unreturnable(t.elem)
    if isinstance(t, OptionalType) and t.elem != TENSOR:
        return f"of optional returns only 'Tensor?' has a C++ type, not '{t}'"
    return None


def unwritable_default(t: Type, default: str) -> str | None:
    """Why the codegen cannot write this default in C++ (a list without size takes only '[...]' or None)."""
    if isinstance(t, OptionalType):
        if default == "None":
            return None
        t = t.elem
    if isinstance(t, ListType) and t.size is None and not (default.startswith("[") and default.endswith("]")):
        return f"the default of a list without size must be a list '[...]', not '{default}' (gen.py fails on it)"
    return None


def untranslatable_types(func: FunctionSchema) -> Iterator[tuple[Where, str]]:
    """(where, why) for each argument and return whose type (or default) has no C++ form; where as in
    schema_rules."""
    for i, a in enumerate(func.arguments.flat_all):
        why = (untranslatable(a.type) or unconvertible_argument(a.type)
               or (unwritable_default(a.type, a.default) if a.default is not None else None))
        if why:
            yield ("arg", i), why
    for i, r in enumerate(func.returns):
        why = unreturnable(r.type)
        if why is None and r.is_write and r.type.is_list_like() is not None:
            why = f"a mutable tensor list cannot be returned ('{r}'): return nothing ('-> ()'); gen.py fails on it"
        if why:
            yield ("return", i), why


def mutable_optional_tensors(func: FunctionSchema, use_const_ref_for_mutable_tensors: bool
                             ) -> Iterator[tuple[Where, str]]:
    """(where, why) for each 'Tensor(a!)?' argument: the dispatcher API passes it as 'at::Tensor &' and the native
    API as '::std::optional<at::Tensor> &' (both as const refs with use_const_ref_for_mutable_tensors), and gen.py
    cannot make one from the other (UnsatError)."""
    if use_const_ref_for_mutable_tensors:
        return
    for i, a in enumerate(func.arguments.flat_all):
        if a.annotation is not None and a.annotation.is_write and a.type == OptionalType(TENSOR):
            yield ("arg", i), (f"a mutable optional tensor '{a}' is 'at::Tensor &' to the dispatcher and "
                               "'::std::optional<at::Tensor> &' to the kernel, and gen.py cannot convert one to the "
                               "other; make it a Tensor (or, but on out= functions, set "
                               "use_const_ref_for_mutable_tensors: True)")


def structured_out_problems(func: FunctionSchema) -> Iterator[tuple[Where, str]]:
    """A structured kernel writes plain Tensor outputs only (its set_output has nothing else to resize)."""
    offset = len(func.arguments.flat_non_out)
    for i, a in enumerate(func.arguments.out):
        if a.type != TENSOR:
            yield ("arg", offset + i), (f"a structured op's out arguments must be plain Tensors, not '{a.type}' "
                                        "(drop 'structured: True')")


# ------------------------------------------------------------------------------------------------ ufunc

# The CUDA functors that take one of the two tensors as a CPU scalar: only for binary ops.
SCALAR_FUNCTOR_KEYS = (UfuncKey.CUDAFunctorOnSelf, UfuncKey.CUDAFunctorOnOther)


def is_binary_ufunc(functional: NativeFunction) -> bool:
    """Whether the ufunc codegen specializes the op for a CPU-scalar self or other: exactly two tensors."""
    return sum(1 for a in functional.func.arguments.flat_non_out if a.type.is_tensor_like()) == 2


def cuda_functor_keys(functional: NativeFunction) -> tuple[UfuncKey, ...]:
    """The CUDA functors UfuncCUDA_<op>.cu defines, each from its own loop or from ScalarOnly / Generic."""
    if is_binary_ufunc(functional):
        return SCALAR_FUNCTOR_KEYS + (UfuncKey.CUDAFunctor,)
    return (UfuncKey.CUDAFunctor,)


def is_value_type(t: Type) -> bool:
    """A type the ufunc kernels take as it is (an int, a double, a sized bool list, ...): not Tensor, Scalar
    or a list."""
    if isinstance(t, BaseType):
        return t.name not in (BaseTy.Tensor, BaseTy.Scalar)
    if isinstance(t, OptionalType):
        return is_value_type(t.elem)
    return isinstance(t, ListType) and t.elem == BaseType(BaseTy.bool) and t.size is not None


def ufunc_argument_supported(t: Type) -> bool:
    return t == TENSOR or t == SCALAR or is_value_type(t)


# Where a ufunc problem shows: ("ufunc", key name) is that key of ufunc_inner_loop, "ufunc_inner_loop" the key
# itself; ("functional-arg", i) an argument of the functional variant.
def ufunc_problems(functional: NativeFunction, out: NativeFunction) -> Iterator[tuple[object, str]]:
    """(where, message) for each reason the ufunc codegen of this group (out= carries ufunc_inner_loop) fails."""
    loops = dict(out.ufunc_inner_loop)
    for i, a in enumerate(functional.func.arguments.flat_non_out):
        if not ufunc_argument_supported(a.type):
            yield ("functional-arg", i), (f"a ufunc op's arguments must be Tensor, Scalar or plain values; the "
                                          f"ufunc codegen cannot pass '{a.type} {a.name}' to its loops")
    binary = is_binary_ufunc(functional)
    for k in SCALAR_FUNCTOR_KEYS:
        if k in loops and not binary:
            yield ("ufunc", k.name), (f"{k.name} is only for binary ops (two tensor arguments); "
                                      f"'{functional.func.name}' has another number of tensors")
    generic = [lk for lk in (UfuncKey.ScalarOnly, UfuncKey.Generic) if lk in loops]
    derived = [k for k in cuda_functor_keys(functional) if k not in loops]
    if derived and not generic:
        yield "ufunc_inner_loop", (f"the CUDA functor {derived[0].name} is built from a ScalarOnly or Generic "
                                   "loop, and there is neither")
    if derived and len(generic) == 2 and loops[UfuncKey.ScalarOnly].name != loops[UfuncKey.Generic].name:
        yield ("ufunc", "ScalarOnly"), ("ScalarOnly and Generic must name the same ufunc (one CUDA functor "
                                        f"serves both): '{loops[UfuncKey.ScalarOnly].name}' and "
                                        f"'{loops[UfuncKey.Generic].name}'")
    yield from cuda_functor_dtype_problems(functional, out)
    scalar = {d for lk in (UfuncKey.CPUScalar, UfuncKey.ScalarOnly, UfuncKey.Generic) if lk in loops
              for d in loops[lk].supported_dtypes}
    if UfuncKey.CPUVector in loops:
        lacking = [d.name for d in loops[UfuncKey.CPUVector].supported_dtypes if d not in scalar]
        if lacking:
            yield ("ufunc", "CPUVector"), (f"a CPUVector loop needs a scalar loop (CPUScalar, ScalarOnly or "
                                           f"Generic) for the same dtypes; none for {', '.join(lacking)}")


def cuda_functor_dtype_problems(functional: NativeFunction, out: NativeFunction) -> Iterator[tuple[object, str]]:
    """(where, message) for each CPU-scalar CUDA functor (CUDAFunctorOnSelf / OnOther of a binary ufunc op) with a
    dtype the plain CUDAFunctor lacks: UfuncCUDA_<op>.cu falls back to the plain functor for every dtype of any
    of them, and gen.py fails (KeyError) where there is none. A functor not given is built from ScalarOnly and
    Generic, with their dtypes."""
    loops = dict(out.ufunc_inner_loop)
    generic = [d for lk in (UfuncKey.ScalarOnly, UfuncKey.Generic) if lk in loops for d in loops[lk].supported_dtypes]

    def dtypes(k: UfuncKey) -> list[ScalarType]:
        return list(loops[k].supported_dtypes) if k in loops else generic

    plain = set(dtypes(UfuncKey.CUDAFunctor))
    for k in cuda_functor_keys(functional):
        lacking = list(dict.fromkeys(d.name for d in dtypes(k) if d not in plain))
        if k is not UfuncKey.CUDAFunctor and lacking:
            where = ("ufunc", k.name) if k in loops else ("ufunc", UfuncKey.CUDAFunctor.name)
            yield where, (f"{k.name} has dtypes the plain CUDA functor lacks ({', '.join(lacking)}): the CUDA kernel "
                          "falls back to CUDAFunctor (given, or built from ScalarOnly / Generic) for each of them")


# ------------------------------------------------------------------------------------------------ functionalization

# The ops whose out= functionalization keeps the out tensor's dtype are per release (Release.cumulative_out_ops);
# all of them are overloads of these (asked of every group: a cheap first test).
CUMULATIVE_BASES = frozenset({"cumsum", "cumprod"})


def cumulative_out_problem(out: NativeFunction, functional: NativeFunction, ops: frozenset[str]) -> str | None:
    """gen.py's functionalization passes the out tensor's dtype to the functional call of `ops` (the release's)."""
    if out.func.name.name.base not in CUMULATIVE_BASES or str(out.func.name) not in ops:
        return None
    if len(out.func.arguments.out) != 1 or not any(a.name == "dtype" for a in functional.func.arguments.flat_all):
        return (f"gen.py's functionalization calls '{functional.func.name}' with the dtype of "
                f"'{out.func.name}''s one out argument: it needs a 'dtype' argument and one out argument")
    return None


def fresh_returns_taken(f: NativeFunction) -> int:
    """How many fresh returns gen.py's functionalization takes from the functional variant it runs in place of f
    (an out=, in-place or mutable variant): one for each argument f writes, then one for each return of f that
    aliases no argument."""
    written = sum(1 for a in f.func.arguments.flat_all if a.annotation is not None and a.annotation.is_write)
    return written + f.func.aliased_return_names().count(None)


def lowering_problem(f: NativeFunction, functional: NativeFunction) -> str | None:
    """Why gen.py's functionalization cannot run `functional` in place of f (a variant of its group), None when
    it can: the functional variant must return a fresh tensor for each one the lowering takes."""
    taken, fresh = fresh_returns_taken(f), functional.func.aliased_return_names().count(None)
    if taken == fresh:
        return None
    return (f"gen.py's functionalization runs '{f.func.name}' as its functional variant '{functional.func.name}' "
            f"and takes {taken} fresh return(s) from it (one per argument '{f.func.name}' writes, one per return "
            f"that aliases none), but '{functional.func.name}' has {fresh}")


def _repeated_alias(func: FunctionSchema) -> int | None:
    """The first return that aliases the same argument as an earlier one."""
    names = func.aliased_return_names()
    return next((i for i, name in enumerate(names) if name is not None and name in names[:i]), None)


def lowering_problems(g: NativeFunctionsGroup) -> Iterator[tuple[SchemaKind, object, str]]:
    """(member, where, message) for each variant of g the functionalization cannot lower (lowering_problem), at
    what makes the counts differ: a return of the functional variant that aliases an argument (a functional
    variant returns fresh tensors), else the variant's return that repeats an alias."""
    aliased = [i for i, name in enumerate(g.functional.func.aliased_return_names()) if name is not None]
    blamed_functional = False
    for kind, f in ((SchemaKind.out, g.out), (SchemaKind.inplace, g.inplace), (SchemaKind.mutable, g.mutable)):
        why = None if f is None or (aliased and blamed_functional) else lowering_problem(f, g.functional)
        if f is None or why is None:
            continue
        if aliased:
            blamed_functional = True
            yield SchemaKind.functional, ("return", aliased[0]), (f"{why}: this return aliases an argument; a "
                                                                  "functional variant returns fresh tensors")
            continue
        repeated = _repeated_alias(f.func)
        yield kind, "name" if repeated is None else ("return", repeated), why


# ------------------------------------------------------------------------------------------------ views

def view_group_problems(view: NativeFunction, copy: NativeFunction | None, inplace: NativeFunction | None,
                        release: Release) -> Iterator[tuple[int, object, str]]:
    """(member, where, message) for what gen.py's functionalization of a view group fails on; member 0 is the
    view, 1 its copy, 2 its in-place variant (as check_view_group counts them). A copy's kernel comes from the
    backend index from 2.0 (Release.view_copy_kernels_by_backend_index); before, gen.py names it itself."""
    if not view.has_composite_implicit_autograd_kernel:
        for member, f in ((0, view), (2, inplace)):
            if f is not None:
                yield from ((member, where, message) for where, message in _view_arguments(f.func))
        if not view.func.returns or not all(r.type.is_tensor_like() for r in view.func.returns):
            yield 0, "name", f"'{view.func.name}' is a view op, so it must return tensors only"
    if copy is not None and copy.func.name.name.base == f"{view.func.name.name}_copy":  # its kernel is generated
        if release.view_copy_kernels_by_backend_index and not copy.has_composite_explicit_autograd_non_functional_kernel:
            yield 1, "name", (f"'{copy.func.name}' needs a CompositeExplicitAutogradNonFunctional kernel: gen.py "
                              "writes it (from the view), and fails without one")
        returns = view.func.returns
        if len(returns) != 1 or returns[0].type not in (TENSOR, ListType(TENSOR, None)):
            yield 0, "name", (f"'{view.func.name}' has a view_copy variant, so it must return one Tensor or "
                              "Tensor[]")


def view_registered_as_mutation(fns: tuple[NativeFunction, ...]) -> NativeFunction | None:
    """The first of fns (a group's functions, in order) that gen.py's functionalization registers as a mutation but
    that is a view op, which it fails on; None when there is none (CompositeImplicitAutograd functions are not
    registered, lift and resize_ end the registrations, set_ is let through)."""
    for f in fns:
        if f.has_composite_implicit_autograd_kernel:
            continue
        if str(f.func.name) in ("lift", "resize_"):
            return None
        if str(f.func.name.name) != "set_" and f.is_view_op:
            return f
    return None


def _members(g: NativeFunctionsGroup) -> tuple[tuple[SchemaKind, NativeFunction | None], ...]:
    return ((SchemaKind.functional, g.functional), (SchemaKind.out, g.out), (SchemaKind.inplace, g.inplace),
            (SchemaKind.mutable, g.mutable))


def group_generator_problems(g: NativeFunctionsGroup) -> Iterator[tuple[SchemaKind, str, object, str]]:
    """(member, code, where, message) for what gen.py's generators fail on in the group g: a structured op's
    variant registered by hand (its Register<Key>.cpp builds every variant of a structured op), and what its
    functionalization fails on."""
    if g.structured:
        for kind, f in _members(g):
            if f is not None and f.manual_kernel_registration:
                what = "a structured op" if f is g.out else f"a variant of the structured op '{g.out.func.name}'"
                yield kind, "OPG116", "manual_kernel_registration", (
                    f"'{f.func.name}' is {what}, whose kernels gen.py registers itself: it fails on "
                    "manual_kernel_registration")
    yield from ((kind, "OPG131", where, message) for kind, where, message in lowering_problems(g))
    if g.inplace is not None and str(g.inplace.func.name) == "set_.source_Tensor":  # not registered
        return
    view = view_registered_as_mutation(g.functions())
    if view is not None:
        kind = next(k for k, f in _members(g) if f is view)
        yield kind, "OPG128", "name", (f"'{view.func.name}' is a view op (its return aliases an input) in a group "
                                       f"with '{g.out.func.name}': gen.py's functionalization registers a group's "
                                       "variants as mutations and fails on a view (unless it is "
                                       "CompositeImplicitAutograd)")


# gen.py writes the kernel of view_copy itself (a reshape where no view can be taken), under this name only.
VIEW_COPY_KERNEL = "view_copy_symint"


def view_copy_kernel_problem(copy: NativeFunction, kernel: str) -> str | None:
    """Why gen.py refuses `kernel` as the CompositeExplicitAutogradNonFunctional kernel it writes for the view_copy
    of a view group (copy), None when it takes it."""
    if str(copy.func.name) != "view_copy" or kernel == VIEW_COPY_KERNEL:
        return None
    return (f"gen.py writes the kernel of 'view_copy' itself (a reshape where no view can be taken) under the name "
            f"'{VIEW_COPY_KERNEL}', and fails on another name: '{kernel}'")


# The multi-output view ops whose ViewMeta rebuilds the one output asked for, as a slice or select of the base
# (Release.single_output_view_replay); gen.py of those releases has that replay written for these only.
SINGLE_OUTPUT_REPLAY_OPS = frozenset({"split.Tensor", "split_with_sizes", "unbind.int"})


def is_multi_output(func: FunctionSchema) -> bool:
    """Several returns, or one list: its ViewMeta stands for one output of several."""
    return len(func.returns) > 1 or (len(func.returns) == 1 and func.returns[0].type.is_list_like() is not None)


def missing_single_output_replay(f: NativeFunction, release: Release) -> str | None:
    """Why gen.py of `release` cannot write the ViewMeta of f (the view or in-place view of a view group whose view
    is not CompositeImplicitAutograd), None when it can."""
    if not release.single_output_view_replay or not is_multi_output(f.func) \
            or str(f.func.name) in SINGLE_OUTPUT_REPLAY_OPS:
        return None
    return (f"'{f.func.name}' is a view op with several outputs: gen.py of {release} rebuilds one output of such an "
            f"op with a replay of its own, written only for {', '.join(sorted(SINGLE_OUTPUT_REPLAY_OPS))}, and fails "
            "on others (a CompositeImplicitAutograd kernel needs none)")


def view_meta_outputs_problem(f: NativeFunction, copy: NativeFunction, release: Release) -> str | None:
    """Why gen.py of `release` cannot write the ViewMeta of f (a view, or in-place view, that is not
    CompositeImplicitAutograd) whose group's copy is `copy`: the ViewMeta of a single-output view replays a copy
    with several outputs (one of them the input the view writes, which pairs the two), and has no output index to
    pick one by."""
    if not release.functionalization_view_meta_classes or is_multi_output(f.func) or not is_multi_output(copy.func):
        return None
    return (f"'{f.func.name}' has one output but its copy variant '{copy.func.name}' several (a view that writes "
            "its input pairs with a copy that returns it too): gen.py's functionalization cannot replay it; a view "
            "op reads its input ('Tensor(a)', not 'Tensor(a!)')")


def _view_arguments(func: FunctionSchema) -> Iterator[tuple[object, str]]:
    args = func.arguments.flat_non_out
    if not args or args[0].type != TENSOR:
        yield ("arg", 0) if args else "name", (f"the first argument of view op '{func.name}' must be a Tensor (the "
                                               "one its output aliases)")
        return
    if args[0].annotation is None:
        yield ("arg", 0), f"the first argument of view op '{func.name}' must carry the alias of its output"
    for i, a in enumerate(args[1:], 1):
        if a.annotation is not None:
            yield ("arg", i), (f"only the first argument of view op '{func.name}' may alias its output, not "
                               f"'{a.name}'")



# ------------------------------------------------------------------------------------------------ kernel namespaces

# The keys that get <Key>Functions.h and <Key>Functions_inl.h (at::cpu::add and friends), whatever gen.py's flags.
FUNCTIONS_KEYS = frozenset(dk.K[n] for n in (
    "CPU", "CUDA", "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "Meta", "MTIA",
))


def kernel_namespace_problems(kernels: tuple[tuple[dk.DispatchKey, BackendMetadata], ...]
                              ) -> Iterator[tuple[dk.DispatchKey, str]]:
    """(key, message) for what the codegen cannot write of an op's kernel namespaces (those of the op a group's
    kernels are looked up by: its out= variant, or an op in no group). The parse allows three levels."""
    first: dict[str, dk.DispatchKey] = {}
    for key, meta in kernels:
        namespace = meta.cpp_namespace  # the written one + ::native
        if key in FUNCTIONS_KEYS and namespace.count("::") > 2:
            yield key, (f"the kernel namespace '{namespace.removesuffix('::native')}' is one level too deep for "
                        f"{key}Functions_inl.h (at most two levels before the kernel name)")
        elif namespace.replace("::native", "").count("::") > 1:
            yield key, (f"the kernel namespace '{namespace.removesuffix('::native')}' is one level too deep for "
                        f"Register{key}.cpp (at most two levels besides 'native')")
        first.setdefault(namespace, key)
    if len(first) > 1:
        other = list(first.items())[1]
        yield other[1], (f"this kernel's namespace '{other[0]}' differs from the op's other kernels' "
                         f"('{next(iter(first))}'); the codegen declares one namespace per op")


# ---- gen26: torch 2.6's one Register<Key>.cpp (Release.register_dispatch_key_sharded is False)

@record
class RegisteringGroup:
    """What decides a group's registrations in gen.py 2.6's Register<Key>.cpp: the ops' namespace, the kernel
    namespace per key (of the op its kernels are looked up by), and the keys it registers kernels under."""

    namespace: str
    kernel_namespaces: dict[dk.DispatchKey, str]
    registers: frozenset[dk.DispatchKey]


def registering_group(namespace: str, lookup: tuple[tuple[dk.DispatchKey, BackendMetadata], ...],
                      every: tuple[tuple[dk.DispatchKey, BackendMetadata], ...], structured: bool) -> RegisteringGroup:
    """lookup: the kernels of the op a group's kernels are looked up by; every: those of all its ops. Structured
    groups register under Meta and CompositeExplicitAutogradNonFunctional without kernels of their own."""
    implicit = {dk.K["Meta"], dk.CEA_NON_FUNCTIONAL} if structured else set()
    return RegisteringGroup(namespace, {key: meta.cpp_namespace for key, meta in lookup},
                            frozenset({key for key, _ in every} | implicit))


def registrations_lost(groups: list[RegisteringGroup]) -> Iterator[tuple[int, str, dict[dk.DispatchKey, int]]]:
    """Where gen.py 2.6 drops registrations: it keeps a kernel namespace's m.impl lines per op namespace and
    starts them over at each group of a namespace it does not hold (every group counts, with kernels or without:
    those without are in at::native). For each group that drops some: (its index, the namespace it replaces,
    how many groups' registrations it drops per key)."""
    held: dict[tuple[dk.DispatchKey, str], tuple[str, int]] = {}  # (key, kernel ns) -> (op namespace, groups)
    lost: dict[int, tuple[str, dict[dk.DispatchKey, int]]] = {}
    keys = sorted({key for g in groups for key in g.registers}, key=lambda k: k.value)
    for i, g in enumerate(groups):
        for key in keys:
            slot = (key, g.kernel_namespaces.get(key, "at::native"))
            namespace, count = held.get(slot, (g.namespace, 0))
            if namespace != g.namespace:
                if count:
                    lost.setdefault(i, (namespace, {}))[1][key] = count
                count = 0
            held[slot] = (g.namespace, count + (key in g.registers))
    for i, (namespace, counts) in sorted(lost.items()):
        yield i, namespace, counts
