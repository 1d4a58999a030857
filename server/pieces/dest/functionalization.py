"""The functionalization pass's per-op code: RegisterFunctionalization kernels and registrations,
the view-inverse declarations, the ViewMeta classes and the {view}_copy composite kernels.

Each function takes one group (or op) and returns its C++ text; every signature follows the
conventions of the op that torchgen would have "in context" for it (ApiOptions.of that op).
"""

from __future__ import annotations

import functools

from ...frozen import PER_OP_MEMO, record
from ...model.codegen_rules import (
    is_multi_output,
    lowering_problem,
    missing_single_output_replay,
    view_copy_kernel_problem,
    view_meta_outputs_problem,
    view_registered_as_mutation,
)
from ...model.generate import functionalization_refuses, skips_functionalization, writes_an_argument
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup
from ...model.schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, Return, SchemaKind
from ...releases import Release
from ...releases.profile import CompositeRegistrations, CppSpelling, ViewInverseForm, XlaDataPropagation
from ..api import cpp, dispatcher
from ..api.signatures import DispatcherSignature, NativeSignature
from ..api.translate import translate
from ..api.types import (
    ApiOptions,
    BaseCType,
    Binding,
    ConstRefCType,
    CType,
    Expr,
    NamedCType,
    OptionalCType,
    SymIntT,
    VectorCType,
    boolT,
    iTensorListRefT,
    longT,
    optionalSymIntArrayRefT,
    symIntArrayRefT,
    tensorListT,
    tensorT,
)

_TENSOR = BaseType(BaseTy.Tensor)


class FunctionalizationError(ValueError):
    """An op that does not have the shape the functionalization code expects."""


def _opts(f: NativeFunction, spelling: CppSpelling) -> ApiOptions:
    return ApiOptions.of(f, spelling)


def _dispatcher_sig(func: FunctionSchema, ctx: NativeFunction, spelling: CppSpelling) -> DispatcherSignature:
    return DispatcherSignature(func, _opts(ctx, spelling))


def _returns_cpp(rs: tuple[Return, ...], ctx: NativeFunction, spelling: CppSpelling) -> CType:
    return dispatcher.returns_type(rs, options=_opts(ctx, spelling))


def return_str(rets: tuple[Return, ...], names: list[str], ctx: NativeFunction, spelling: CppSpelling) -> str:
    if len(rets) != len(names):
        raise FunctionalizationError(f"Expected {len(rets)} names, got {len(names)}")
    if not rets:
        return ""
    if len(rets) == 1:
        return f"return {names[0]};"
    return f"return {_returns_cpp(rets, ctx, spelling).cpp_type(spelling)}({', '.join(names)});"


def mutable_arg_names(func: FunctionSchema) -> list[str]:
    return [a.name for a in func.arguments.flat_all if a.annotation is not None and a.annotation.is_write]


def wrapper_name(func: FunctionSchema) -> str:
    base = cpp.name(func)
    return f"{base}_{func.name.overload_name}" if func.name.overload_name else base


def _is_tensor_like(b: Binding) -> bool:
    return isinstance(b.argument, Argument) and b.argument.type.is_tensor_like()


def _owning(t: CType) -> tuple[CType, str]:
    """The owning type of an unwrapped argument, and a format for converting the argument to it."""
    if t == tensorListT:
        return VectorCType(tensorT), "{}.vec()"
    if t == iTensorListRefT:
        return VectorCType(tensorT), "{{{}.begin(), {}.end()}}"
    return t, "{}"


def unwrap_tensor_args(sig: DispatcherSignature, *, is_view_op: bool) -> tuple[str, list[Binding]]:
    context: list[Binding] = []
    pieces: list[str] = []
    for arg in sig.arguments():
        if not _is_tensor_like(arg):
            context.append(arg)
            continue
        name = f"{arg.name}_"
        sync = "" if is_view_op else f"at::functionalization::impl::sync({arg.name});"
        owning, conversion = _owning(arg.nctype.remove_const_ref().type)
        pieces.append(f"""
      {owning.cpp_type(sig.options.spelling)} {name};
      if (at::functionalization::impl::isFunctionalTensor({arg.name})) {{
        {sync}
        {name} = at::functionalization::impl::from_functional_tensor({arg.name});
      }} else {{
        {name} = {conversion.format(arg.name, arg.name)};
      }}""")
        context.append(arg.with_name(name))
    return "\n      ".join(pieces), context


def convert_to_meta_tensors(sig: DispatcherSignature) -> tuple[str, list[Binding]]:
    context: list[Binding] = []
    pieces: list[str] = []
    for arg in sig.arguments():
        if _is_tensor_like(arg):
            pieces.append(f"auto {arg.name}_meta = to_meta({arg.name});")
            context.append(arg.with_name(f"{arg.name}_meta"))
        else:
            context.append(arg)
    return "\n        ".join(pieces), context


def check_view_op(func: FunctionSchema) -> None:
    args = func.arguments.flat_non_out
    if not (args and args[0].type == _TENSOR):
        raise FunctionalizationError(
            "In the functionalization codegen, we expect the first argument of every view operator to be a tensor, "
            f"but found an argument of type {args[0].type if args else None} for operator: {func.name}.")
    if args[0].annotation is None or any(a.annotation is not None for a in args[1:]):
        raise FunctionalizationError(
            f"{func.name}: the first argument of a view operator must alias the output, and only it")


def _has_symbolic(expr: str, t: CType, spelling: CppSpelling) -> str:
    if t == SymIntT:
        return f"{expr}.is_symbolic()"
    if isinstance(t, OptionalCType):
        return f"{expr}.has_value() ? {_has_symbolic(f'(*{expr})', t.elem, spelling)} : false"
    if t == optionalSymIntArrayRefT:
        return _has_symbolic(expr, OptionalCType(symIntArrayRefT), spelling)
    if t in (symIntArrayRefT, VectorCType(SymIntT)):
        return (f"std::any_of({expr}.begin(), {expr}.end(), [=](auto& arg) {{ return "
                f"{_has_symbolic('arg', SymIntT, spelling)}; }})")
    raise FunctionalizationError(f"unsupported type for has_symbolic_values check: {t.cpp_type(spelling)}")


def has_symbolic_inputs(sig: DispatcherSignature) -> str:
    statements = [
        f"has_symbolic_inputs = has_symbolic_inputs | ({_has_symbolic(b.name, b.nctype.type, sig.options.spelling)});"
        for b in sig.arguments() if isinstance(b.argument, Argument) and b.argument.type.is_symint_like()]
    body = "\n      ".join(statements)
    return f"""
      bool has_symbolic_inputs = false;
      {body}"""


# ------------------------------------------------------------------ the ViewMeta API

@record
class _Fixed:
    """The bindings of the ViewMeta API that no schema gives, in one release's spelling."""

    base: Binding
    has_symbolic_inputs: Binding
    mutated_view: Binding
    out_index: Binding
    mutated_view_idx: Binding  # out_index's name before the ViewMeta classes
    reapply_views: Binding
    inverse_return_mode: Binding


@functools.lru_cache(maxsize=4)  # one per spelling (two)
def _fixed(spelling: CppSpelling) -> _Fixed:
    def bind(name: str, t: CType, argument_name: str | None = None, ty: BaseTy = BaseTy.Tensor) -> Binding:
        return Binding(name, NamedCType(name, t), Argument(argument_name or name, BaseType(ty), None, None), spelling)
    return _Fixed(base=bind("base", ConstRefCType(tensorT)),
                  has_symbolic_inputs=bind("has_symbolic_inputs", boolT, ty=BaseTy.bool),
                  mutated_view=bind("mutated_view", ConstRefCType(tensorT), "base"),
                  out_index=bind("out_index", longT, ty=BaseTy.int),
                  mutated_view_idx=bind("mutated_view_idx", longT, ty=BaseTy.int),
                  reapply_views=bind("reapply_views", boolT, ty=BaseTy.bool),
                  inverse_return_mode=bind("inverse_return_mode",
                                           BaseCType("at::functionalization::InverseReturnMode"), ty=BaseTy.bool))


def classname(func: FunctionSchema, *, with_namespace: bool = False) -> str:
    return ("at::functionalization::" if with_namespace else "") + f"{func.name.unambiguous_name()}_ViewMeta"


def base_ctor_arguments(func: FunctionSchema, spelling: CppSpelling) -> list[Binding]:
    fixed = _fixed(spelling)
    return [fixed.has_symbolic_inputs, fixed.out_index] if is_multi_output(func) else [fixed.has_symbolic_inputs]


def attributes(func: FunctionSchema, ctx: NativeFunction, *, owning: bool = True,
               release: Release) -> list[Binding]:
    args = func.arguments.flat_all
    if args[0].type != _TENSOR:
        raise FunctionalizationError(f"Expected first arg to be Tensor, got {args[0].type}")
    by_value = release.owning_types_hold_tensors_by_value
    fixed = _fixed(release.cpp_spelling)
    return [fixed.reapply_views, fixed.inverse_return_mode,
            *(dispatcher.argument(a, options=_opts(ctx, release.cpp_spelling), remove_non_owning_ref_types=owning,
                                  owning_tensors_by_value=by_value) for a in args[1:])]


def _mode(fixed: _Fixed, form: ViewInverseForm) -> Binding:
    """The argument that tells an inverse how to return (inverse_return_mode; reapply_views before 2.3)."""
    return fixed.inverse_return_mode if form.takes_return_mode else fixed.reapply_views


def inverse_op(g: NativeFunctionsViewGroup, form: ViewInverseForm) -> NativeFunction:
    """The op a view's inverse is named after and takes the arguments of: the view (its _copy before 2.3)."""
    if form.named_after_copy:
        if g.view_copy is None:
            raise FunctionalizationError(f"{g.view.func.name}: a view without a _copy variant has no inverse")
        return g.view_copy
    return g.view


def op_arguments(func: FunctionSchema, ctx: NativeFunction, *, is_reverse: bool, spelling: CppSpelling,
                 form: ViewInverseForm, index: Binding | None = None) -> list[Binding]:
    """index: the output index's binding (out_index when None); form: the release's view inverses."""
    args = func.arguments.flat_all
    if args[0].type != _TENSOR:
        raise FunctionalizationError(f"Expected first arg to be Tensor, got {args[0].type}")
    fixed = _fixed(spelling)
    rest = [dispatcher.argument(a, options=_opts(ctx, spelling)) for a in args[1:]]
    if not is_reverse:
        return [fixed.base, *rest]
    extra = [index or fixed.out_index] if is_multi_output(func) else []
    return [fixed.base, fixed.mutated_view, _mode(fixed, form), *extra, *rest]


def reverse_name(f: NativeFunction, *, include_namespace: bool) -> str:
    name = f"{f.func.name.unambiguous_name()}_inverse"
    return f"at::functionalization::FunctionalInverses::{name}" if include_namespace else name


def _ctor_arguments(f: NativeFunction, release: Release) -> list[Binding]:
    return base_ctor_arguments(f.func, release.cpp_spelling) + attributes(f.func, f, owning=False, release=release)


def view_meta_new(f: NativeFunction, release: Release, out_index: str = "0") -> str:
    args = ", ".join(b.name if b.name != "out_index" else out_index for b in _ctor_arguments(f, release))
    return f"std::make_shared<{classname(f.func, with_namespace=True)}>({args})"


def view_meta_decl(f: NativeFunction, release: Release) -> str:
    base = base_ctor_arguments(f.func, release.cpp_spelling)
    extra = attributes(f.func, f, owning=False, release=release)
    attrs = attributes(f.func, f, release=release)
    name = classname(f.func)
    multi = is_multi_output(f.func)
    tuple_types = ",\n".join(f"      {b.type} /* {b.name} */" for b in base + attrs)
    destructure = ", ".join(f"std::get<{i}>(tpl)" for i in range(len(base) + len(extra)))
    params = ", ".join(b.decl() for b in base + extra)
    base_bindings = ", ".join([_fixed(release.cpp_spelling).has_symbolic_inputs.name, f"/*is_multi_output=*/{str(multi).lower()}",
                               f"/*is_as_strided=*/{str(str(f.func.name) == 'as_strided').lower()}",
                               f"/*out_index=*/{'out_index' if multi else '0'}"])
    assignments = ",\n".join(f"        {e.type.name}({e.expr})"
                             for e in translate(extra, attrs, spelling=release.cpp_spelling,
                                               allow_expensive_conversions=True))
    tuple_args = ", ".join(b.name for b in base + attrs)
    fields = "\n".join(f"  {b.decl()};" for b in attrs)
    to_out_index = "  std::shared_ptr<ViewMeta> to_out_index(int64_t out_idx) override;" if multi else ""
    return f"""
struct TORCH_API {name} : public ViewMeta {{
  FUNCTIONALIZATION_VIEWMETA_NAME({name})
  FUNCTIONALIZATION_VIEWMETA_SERIALIZABLE_TUPLE(\n{tuple_types});

  {name}(const SerializableTuple& tpl)
      : {name}({destructure}) {{}}

  {name}({params})
      : at::functionalization::ViewMeta({base_bindings}),
{assignments} {{}}

  Tensor forward(const Tensor& base) override;
  Tensor reverse(const Tensor& base, const Tensor& mutated_view) override;
{to_out_index}

  SerializableTuple to_serializable_tuple() {{
    return std::make_tuple({tuple_args});
  }}

{fields}
}};
"""


def _opcall(g: NativeFunctionsViewGroup, f: NativeFunction, *, is_reverse: bool, reapply_views: bool,
            release: Release) -> str:
    assert g.view_copy is not None
    if is_reverse:
        opname = reverse_name(inverse_op(g, release.view_inverse_form), include_namespace=True)
    else:
        target = g.view if reapply_views else g.view_copy
        opname = f"at::_ops::{target.func.name.unambiguous_name()}::call"
    spelling = release.cpp_spelling
    fixed = _fixed(spelling)
    goals = op_arguments(g.view_copy.func, f, is_reverse=is_reverse, spelling=spelling, form=release.view_inverse_form)
    context = [fixed.base, *base_ctor_arguments(f.func, spelling), *attributes(f.func, f, release=release)]
    if is_reverse:
        context.append(fixed.mutated_view)
    args = ", ".join(e.expr for e in translate(context, goals, spelling=spelling))
    index = "[out_index]" if not is_reverse and is_multi_output(f.func) else ""
    return f"{opname}({args}){index}"


# From torch 2.15 a ViewMeta of a multi-output view op rebuilds only the output it stands for, as one slice
# or select of the base: {slice} and {select} are the view ops (or their _copy variants) it calls. The ops are
# codegen_rules.SINGLE_OUTPUT_REPLAY_OPS (the check refuses others).
_SINGLE_OUTPUT_REPLAYS = {
    "split.Tensor": """\
  // split() chunk `i` is base[i * split_size : (i + 1) * split_size] along dim,
  // and slice clamps the end, which gives the short final chunk for free.
  auto start = split_size * out_index;
  return {slice}(base, dim, start, start + split_size, 1);""",
    "split_with_sizes": """\
  c10::SymInt start = 0;
  for (int64_t i = 0; i < out_index; ++i) {{
    start += split_sizes[i];
  }}
  return {slice}(base, dim, start, start + split_sizes[out_index], 1);""",
    "unbind.int": """\
  return {select}(base, dim, out_index);""",
}


def _forward_arms(g: NativeFunctionsViewGroup, f: NativeFunction, release: Release) -> tuple[str, str]:
    """The bodies of forward() with views reapplied and with their _copy variants."""
    if release.single_output_view_replay and is_multi_output(f.func):
        why = missing_single_output_replay(f, release)  # OPG128: the check refuses a new multi-output view op
        if why is not None:
            raise FunctionalizationError(why)
        replay = _SINGLE_OUTPUT_REPLAYS[str(f.func.name)]

        def arm(slice_op: str, select_op: str) -> str:
            return "\n".join("  " + line for line in replay.format(slice=slice_op, select=select_op).splitlines())
        return (arm("at::_ops::slice_Tensor::call", "at::_ops::select_int::call"),
                arm("at::_ops::slice_copy_Tensor::call", "at::_ops::select_copy_int::call"))
    return (f"    return {_opcall(g, f, is_reverse=False, reapply_views=True, release=release)};",
            f"    return {_opcall(g, f, is_reverse=False, reapply_views=False, release=release)};")


def view_meta_impl(g: NativeFunctionsViewGroup, f: NativeFunction, release: Release) -> list[str]:
    why = view_meta_outputs_problem(f, g.view_copy, release) if g.view_copy is not None else None
    if why is not None:  # OPG128: the check refuses it
        raise FunctionalizationError(why)
    name = classname(f.func)
    views, view_copies = _forward_arms(g, f, release)
    out = [f"""
at::Tensor {name}::forward(const at::Tensor& base) {{
  if (reapply_views) {{
{views}
  }} else {{
{view_copies}
  }}
}}""", f"""
at::Tensor {name}::reverse(const at::Tensor& base, const Tensor& mutated_view) {{
  return {_opcall(g, f, is_reverse=True, reapply_views=True, release=release)};
}}"""]
    if is_multi_output(f.func):
        out.append(f"""
std::shared_ptr<at::functionalization::ViewMeta> {name}::to_out_index(int64_t out_index) {{
  return {view_meta_new(f, release, "out_index")};
}}
""")
    return out


def _view_and_inplace(g: NativeFunctionsViewGroup) -> list[NativeFunction]:
    return [f for f in (g.view, g.view_inplace) if f is not None]


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per view group or group and release: frozen.PER_OP_MEMO says why the bound fits
def compute_view_meta_declarations(g: NativeFunctionsViewGroup, release: Release) -> tuple[str, ...]:
    if g.view.has_composite_implicit_autograd_kernel:
        return ()
    return tuple(view_meta_decl(f, release) for f in _view_and_inplace(g))


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per view group or group and release: frozen.PER_OP_MEMO says why the bound fits
def compute_view_meta_implementations(g: NativeFunctionsViewGroup, release: Release) -> tuple[str, ...]:
    if g.view.has_composite_implicit_autograd_kernel:
        return ()
    return tuple(s for f in _view_and_inplace(g) for s in view_meta_impl(g, f, release))


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per view group or group and release: frozen.PER_OP_MEMO says why the bound fits
def compute_view_inverse_declaration(g: NativeFunctionsViewGroup, release: Release) -> str | None:
    """FunctionalInverses.h: the (hand-written) inverse of a non-composite view op."""
    if g.view.has_composite_implicit_autograd_kernel:
        return None
    form = release.view_inverse_form
    named = inverse_op(g, form)
    func = named.func
    if not func.returns or not all(r.type.is_tensor_like() for r in func.returns):
        raise FunctionalizationError(f"{func.name}: a view op must return tensors")
    spelling = release.cpp_spelling
    fixed = _fixed(spelling)
    index = fixed.out_index if release.functionalization_view_meta_classes else fixed.mutated_view_idx
    decls = ", ".join(a.decl() for a in op_arguments(func, named, is_reverse=True, spelling=spelling, form=form,
                                                      index=index))
    return f"static at::Tensor {reverse_name(named, include_namespace=False)}({decls});"


# ------------------------------------------------------------------ ViewMetas of lambdas (until torch 2.8)

def _lambda_captures(g: NativeFunctionsViewGroup, f: NativeFunction, *, is_reverse: bool,
                     spelling: CppSpelling, form: ViewInverseForm) -> list[Binding]:
    """What a replay lambda captures from the kernel: reapply_views (forward) or the inverse's mode (reverse),
    then every argument of the view op but self, as a value (no dangling reference in the capture)."""
    args = g.view.func.arguments.flat_all
    if args[0].type != _TENSOR:
        raise FunctionalizationError(f"Expected first arg to be Tensor, got {args[0].type}")
    fixed = _fixed(spelling)
    return [_mode(fixed, form) if is_reverse else fixed.reapply_views,
            *(dispatcher.argument(a, options=_opts(f, spelling), remove_non_owning_ref_types=True) for a in args[1:])]


def _lambda(g: NativeFunctionsViewGroup, view_copy: NativeFunction, f: NativeFunction, *,
            is_reverse: bool, spelling: CppSpelling, form: ViewInverseForm) -> tuple[str, list[str]]:
    """A replay lambda's head and the calls it returns (forward: with reapply_views, then without)."""
    fixed = _fixed(spelling)
    captures = _lambda_captures(g, f, is_reverse=is_reverse, spelling=spelling, form=form)
    outer = [*dispatcher.arguments(g.view.func, options=_opts(f, spelling)), fixed.reapply_views,
             fixed.inverse_return_mode]
    captured = translate(outer, captures, spelling=spelling, allow_expensive_conversions=True)
    params = ([fixed.base, fixed.mutated_view, fixed.mutated_view_idx] if is_reverse
              else [fixed.base, fixed.mutated_view_idx])
    head = (f"[{', '.join(f'{e.type.name} = {e.expr}' for e in captured)}]"
            f"({', '.join(p.decl() for p in params)}) -> at::Tensor")
    goals = op_arguments(view_copy.func, f, is_reverse=is_reverse, spelling=spelling, form=form,
                         index=fixed.mutated_view_idx)
    args = ", ".join(e.expr for e in translate([*params, *captures], goals, spelling=spelling))
    if is_reverse:
        return head, [f"{reverse_name(inverse_op(g, form), include_namespace=True)}({args});"]
    index = "[mutated_view_idx]" if is_multi_output(view_copy.func) else ""
    return head, [f"at::_ops::{target.func.name.unambiguous_name()}::call({args}){index};"
                  for target in (g.view, view_copy)]


def lambda_view_meta(g: NativeFunctionsViewGroup, view_copy: NativeFunction, f: NativeFunction,
                     release: Release) -> str:
    """`at::functionalization::ViewMeta view_meta = ...`: the view's replay as a forward and a reverse lambda;
    a view op's (not an inplace view's) also says, from 2.2, whether it is multi-output, and from 2.4 whether it is
    as_strided, after whether the inputs are symbolic (Release.view_meta_knows_symbolic_inputs)."""
    spelling = release.cpp_spelling
    form = release.view_inverse_form
    forward, (with_views, without_views) = _lambda(g, view_copy, f, is_reverse=False, spelling=spelling, form=form)
    reverse, (inverse,) = _lambda(g, view_copy, f, is_reverse=True, spelling=spelling, form=form)
    view_op = "inplace_view" not in f.tags
    multi = f",\n        /*is_multi_output=*/{str(isinstance(f.func.returns[0].type, ListType)).lower()}"
    if release.view_meta_knows_symbolic_inputs:
        flags = multi + f",\n        /*is_as_strided=*/{str(str(f.func.name) == 'as_strided').lower()}" if view_op else ""
        tail = f",\n        /*has_symbolic_inputs=*/has_symbolic_inputs{flags}"
    else:
        tail = multi if view_op and release.view_meta_knows_multi_output else ""
    return f"""at::functionalization::ViewMeta view_meta = at::functionalization::ViewMeta(
        {forward} {{
          if (reapply_views) {{
            return {with_views}
          }} else {{
            return {without_views}
          }}
        }},
        {reverse} {{
          return {inverse}
        }}{tail}
      );"""


# ------------------------------------------------------------------ RegisterFunctionalization kernels

def meta_reference_guard(release: Release) -> str:
    """What follows the condition of a meta reference run: TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1
    turns those runs off from 2.7."""
    return " && !disable_meta_reference()" if release.meta_reference_can_be_disabled else ""


@record
class _ViewKernel:
    """The pieces of a view op's (or an inplace view op's) functionalization kernel."""

    defn: str  # the wrapper's head
    view_tensor: str  # its first argument, the tensor viewed
    view_op: str  # at::_ops::<view_op>: the op itself (redispatched as is, and run on meta tensors)
    copy_op: str  # at::_ops::<copy_op>: its _copy variant, called when views are not reapplied
    unwrap: str  # the arguments' unwrapping from functional tensors
    redispatch_args: str
    return_type: str
    reference_meta: str  # the reference run on meta tensors for XLA / LTC (_reference_meta)
    set_reference_strides: str  # the reference's sizes and strides copied over to the result
    view_meta: str  # the ViewMeta replaying the view (`view_meta`)
    symbolic: str  # the has_symbolic_inputs line (none before 2.4)
    replay_mode: str  # reapply_views from the thread's setting (and the inverses' mode, from 2.3)


def _view_kernel(g: NativeFunctionsViewGroup, view_copy: NativeFunction, f: NativeFunction,
                 release: Release) -> _ViewKernel:
    spelling = release.cpp_spelling
    call_sig = _dispatcher_sig(view_copy.func, f, spelling)
    sig = _dispatcher_sig(f.func, f, spelling)
    check_view_op(f.func)
    view_tensor = sig.arguments()[0].name
    return_type = sig.returns_type().remove_const_ref().cpp_type(spelling)
    unwrap, unwrapped_ctx = unwrap_tensor_args(sig, is_view_op=True)
    redispatch_args = ", ".join(e.expr for e in translate(unwrapped_ctx, call_sig.arguments(), spelling=spelling))
    meta_conversion, meta_ctx = convert_to_meta_tensors(sig)
    meta_call = f"at::_ops::{f.func.name.unambiguous_name()}::call" \
                f"({', '.join(e.expr for e in translate(meta_ctx, call_sig.arguments(), spelling=spelling))})"
    symbolic = f"      {has_symbolic_inputs(call_sig)}\n" if release.view_meta_knows_symbolic_inputs else ""
    defn = sig.defn(name=wrapper_name(f.func), is_redispatching_fn=True)
    view_meta = f"auto view_meta = {view_meta_new(f, release)};" if release.functionalization_view_meta_classes else \
        lambda_view_meta(g, view_copy, f, release)
    guard = f"compute_reference_meta{meta_reference_guard(release)}" \
        if release.functionalization_reference_meta_for_xla_lazy_only else None
    return _ViewKernel(
        defn=defn, view_tensor=view_tensor, view_op=f.func.name.unambiguous_name(),
        copy_op=view_copy.func.name.unambiguous_name(), unwrap=unwrap, redispatch_args=redispatch_args,
        return_type=return_type,
        reference_meta=_reference_meta(view_tensor, return_type, guard, meta_conversion, meta_call),
        set_reference_strides=_set_reference_strides(view_tensor if "inplace_view" in f.tags else "out", guard),
        view_meta=view_meta, symbolic=symbolic,
        replay_mode=_replay_mode(release.view_inverse_form))


# Both view kernels choose how views are replayed from the thread's setting (and from 2.3 how inverses return).
_REAPPLY_VIEWS = "auto reapply_views = at::functionalization::impl::getFunctionalizationReapplyViewsTLS();"
_RETURN_MODE = """
      auto inverse_return_mode = (
          reapply_views ? at::functionalization::InverseReturnMode::ViewOrScatterInverse
            : at::functionalization::InverseReturnMode::NeverView
      );"""


def _replay_mode(form: ViewInverseForm) -> str:
    return _REAPPLY_VIEWS + (_RETURN_MODE if form.takes_return_mode else "")


def _reference_meta(view_tensor: str, return_type: str, guard: str | None, meta_conversion: str,
                    meta_call: str) -> str:
    """The view op run on meta tensors for XLA and LTC, whose sizes and strides the kernel then copies over: under
    `guard` from 2.0; before, for every tensor (guard None: Release.functionalization_reference_meta_for_xla_lazy_only)."""
    if guard is None:
        return f"""{return_type} reference_tensor_output;
      {{
        at::AutoDispatchSkipFunctionalize func_guard;
        c10::impl::ExcludeDispatchKeyGuard guard(exclude_keys_for_meta_dispatch);
        {meta_conversion}
        reference_tensor_output = {meta_call};
      }}"""
    return f"""auto compute_reference_meta =
        {view_tensor}.key_set().has_backend(c10::BackendComponent::XLABit) ||
        {view_tensor}.key_set().has_backend(c10::BackendComponent::LazyBit);
      {return_type} reference_tensor_output;
      if ({guard}) {{
        {meta_conversion}
        at::AutoDispatchSkipFunctionalize func_guard;
        c10::impl::ExcludeDispatchKeyGuard guard(exclude_keys_for_meta_dispatch);
        reference_tensor_output = {meta_call};
      }}"""


def _set_reference_strides(tensor: str, guard: str | None) -> str:
    """The reference run's sizes and strides copied over to `tensor` (under `guard`, as _reference_meta)."""
    copy = f"at::functionalization::impl::set_sizes_strides_offset({tensor}, reference_tensor_output);"
    return copy if guard is None else f"""if ({guard}) {{
        {copy}
      }}"""


def _inplace_view_kernel(k: _ViewKernel, release: Release) -> str:
    """An inplace view op's kernel: the view meta is added to the tensor itself, which is returned."""
    running = "runnin" if release.inplace_view_comment_says_runnin else "running"
    return f"""
    {k.defn} {{
      if (!at::functionalization::impl::isFunctionalTensor({k.view_tensor})) {{
        // functionalization is re-entrant, but will no-op if it wasn't passed a FunctionalTensorWrapper.
        {k.unwrap}
        at::AutoDispatchSkipFunctionalize guard;
        return at::_ops::{k.view_op}::call({k.redispatch_args});
      }}
      {k.replay_mode}
{k.symbolic}      {k.view_meta}
      {k.reference_meta}
      // This function adds the above view meta to the current tensor and replays them off the base,
      // mutating the size/stride info of the current FunctionalTensorWrapper.
      // Because of this, we need to make sure to run the reference shape function above,
      // BEFORE doing this (otherwise we'll end up {running} the reference function using the wrong sizes/strides)
      at::functionalization::impl::mutate_view_meta({k.view_tensor}, view_meta);
      // See  Note [Propagating strides in the functionalization pass]
      // XLA/LTC don't implement the logic to propagate strides correctly, so we need to rely
      // on a reference implementation here (instead of relying on the output from the forward lambda
      // having the correct stride info)
      {k.set_reference_strides}
      return {k.view_tensor};
    }}
"""


def _view_op_kernel(k: _ViewKernel) -> str:
    """A view op's kernel: the view (or its copy) of the unwrapped tensor, wrapped with the view meta."""
    return f"""
    {k.defn} {{
      {k.unwrap}
      if (!at::functionalization::impl::isFunctionalTensor({k.view_tensor})) {{
        // functionalization is re-entrant, but will no-op if it wasn't passed a FunctionalTensorWrapper.
        at::AutoDispatchSkipFunctionalize guard;
        return at::_ops::{k.view_op}::call({k.redispatch_args});
      }}
      {k.replay_mode}
      {k.reference_meta}
      {k.return_type} tmp_output;
      {{
        at::AutoDispatchSkipFunctionalize guard;
        if (reapply_views) {{
          tmp_output = at::_ops::{k.view_op}::call({k.redispatch_args});
        }} else {{
          tmp_output = at::_ops::{k.copy_op}::call({k.redispatch_args});
        }}
      }}
{k.symbolic}      {k.view_meta}
      auto out = at::functionalization::impl::create_functional_tensor_with_view_meta(tmp_output, {k.view_tensor}, view_meta);
      // See  Note [Propagating strides in the functionalization pass]
      {k.set_reference_strides}
      return out;
    }}
"""


def view_functionalization_body(g: NativeFunctionsViewGroup, *, view_inplace: bool, release: Release) -> str:
    """RegisterFunctionalization's kernel of a view group's view op (or of its inplace view op)."""
    f = g.view_inplace if view_inplace else g.view
    if f is None or g.view_copy is None:
        raise FunctionalizationError(f"{g.view.func.name}: a non-composite view needs a view_copy variant")
    kernel = _view_kernel(g, g.view_copy, f, release)
    return _inplace_view_kernel(kernel, release) if "inplace_view" in f.tags else _view_op_kernel(kernel)


def _redispatch_return_names(f: NativeFunction, inner: str) -> tuple[list[str], list[str]]:
    aliased, fresh = [], []
    for i, name in enumerate(f.func.aliased_return_names()):
        if name is not None:
            aliased.append(name)
        else:
            fresh.append(inner if len(f.func.returns) == 1 else f"std::get<{i}>({inner})")
    return aliased, fresh


def _propagated_mutation(arg: str, ret: str, xla: XlaDataPropagation, sync: bool) -> str:
    """How a mutated argument takes the functional call's result, the XLA data propagated after the sync
    (PROPAGATE_DIRECT), from the result before it (PROPAGATE) or not at all (NONE); no sync before 2.0 (`sync`)."""
    if xla is not XlaDataPropagation.PROPAGATE_DIRECT:
        propagate = f"  at::functionalization::impl::propagate_xla_data({arg}, {ret});\n" \
            if xla is XlaDataPropagation.PROPAGATE else ""
        synced = f"\n  at::functionalization::impl::sync({arg});" if sync else ""
        return f"""\
{propagate}  at::functionalization::impl::replace_({arg}, {ret});
  at::functionalization::impl::commit_update({arg});{synced}"""
    return f"""\
  auto {arg}_inner = at::functionalization::impl::from_functional_tensor({arg});
  at::functionalization::impl::replace_({arg}, {ret});
  at::functionalization::impl::commit_update({arg});
  at::functionalization::impl::sync({arg});
  auto {arg}_inner_updated = at::functionalization::impl::from_functional_tensor({arg});
  at::functionalization::impl::propagate_xla_data_direct({arg}_inner, {arg}_inner_updated);"""


def _wrap_propagate_mutations_and_return(f: NativeFunction, functional: NativeFunction, inner: str,
                                         release: Release) -> str:
    mutable = mutable_arg_names(f.func)
    aliased_outer, fresh_outer = _redispatch_return_names(f, inner)
    _, fresh_inner = _redispatch_return_names(functional, inner)
    why = lowering_problem(f, functional)  # OPG131: the check refuses such a group
    if why is not None:
        raise FunctionalizationError(why)
    updates, wrapped = [], []
    for i, ret in enumerate(fresh_inner[:len(fresh_outer)]):
        updates.append(f"  auto output_{i} = at::functionalization::impl::to_functional_tensor({ret});")
        wrapped.append(f"output_{i}")
    for arg, ret in zip(mutable, fresh_inner[len(fresh_outer):]):
        updates.append(_propagated_mutation(arg, ret, release.functionalization_xla_data,
                                            release.functionalization_reference_meta_for_xla_lazy_only))
    updates_str = "\n".join(updates)
    return f"""\
{updates_str}
    {return_str(f.func.returns, aliased_outer + wrapped, f, release.cpp_spelling)}"""


def _cumulative_out_dtype(f: NativeFunction, functional_sig: DispatcherSignature, exprs: list[str],
                          release: Release) -> list[str]:
    """Cumulative out= ops' functional call keeps the out tensor's dtype when none is given."""
    if f.func.kind() is not SchemaKind.out or str(f.func.name) not in release.cumulative_out_ops:
        return exprs
    index = next((i for i, a in enumerate(functional_sig.arguments()) if a.name == "dtype"), None)
    if len(f.func.arguments.out) != 1 or index is None:
        raise FunctionalizationError(f"{f.func.name}: expected one out argument and a dtype argument")
    out = list(exprs)
    out[index] = (f"{exprs[index]}.has_value() ? {exprs[index]} : "
                  f"{release.cpp_spelling.optional('at::ScalarType', rooted=False)}"
                  f"({f.func.arguments.out[0].name}_.scalar_type())")
    return out


def _meta_shape_check(f: NativeFunction, sig: DispatcherSignature, release: Release) -> str:
    """The mutating op run on meta tensors first (in-place ops only: the shape errors their functional
    variants would not raise)."""
    flat = f.func.arguments.flat_all
    # (from 2.0 an op with a Storage argument is not run: its storage would need a meta one)
    storage_rule = release.functionalization_reference_meta_for_xla_lazy_only
    any_storage = storage_rule and any(a.type == BaseType(BaseTy.Storage) for a in flat)
    run_meta = str(not any_storage and f.func.kind() is SchemaKind.inplace).lower()
    meta_conversion, meta_ctx = convert_to_meta_tensors(sig)
    technically = "technicaly" if release.meta_comment_says_technicaly else "technically"
    guards = """at::AutoDispatchSkipFunctionalize func_guard;
        c10::impl::ExcludeDispatchKeyGuard guard(exclude_keys_for_meta_dispatch);"""
    # (before 2.0 the guards come before the conversion, which then runs under them)
    setup = f"{meta_conversion}\n        {guards}" if storage_rule else f"{guards}\n        {meta_conversion}"
    return f"""if ({run_meta}{meta_reference_guard(release)}) {{
        // Before converting the mutable op to its functional variant, run meta tensors through the original op.
        // This will help us catch shape errors that apply to inplace ops that wouldn't apply to their functional variants.
        // (We can only do this for inplace ops today though, because they {technically} all support meta tensors).
        {setup}
        at::_ops::{f.func.name.unambiguous_name()}::call({", ".join(a.name for a in meta_ctx)});
      }}"""


def _functional_tensor_tests(f: NativeFunction) -> tuple[str, str, str]:
    """C++ conditions: every written tensor is functional; some read tensor is; some read tensor is on XLA."""
    flat = f.func.arguments.flat_all
    mutated = [a.name for a in flat if a.type.is_tensor_like() and a.annotation is not None]
    non_mutated = [a.name for a in flat if a.type.is_tensor_like() and a.annotation is None]
    non_mutated_tensors = [a.name for a in flat if a.type == _TENSOR and a.annotation is None]
    return (" && ".join(["true"] + [f"at::functionalization::impl::isFunctionalTensor({a})" for a in mutated]),
            " || ".join(["false"] + [f"at::functionalization::impl::isFunctionalTensor({a})" for a in non_mutated]),
            " || ".join(["false"] + [f"{a}.device().type() == c10::DeviceType::XLA" for a in non_mutated_tensors]))


def _noop_redispatch(f: NativeFunction, sig: DispatcherSignature, unwrapped_ctx: list[Binding],
                     release: Release) -> str:
    """Case 2 of the kernel: no functional tensor is written, so the op itself runs on the unwrapped arguments."""
    spelling = sig.options.spelling
    create_output = ""
    if f.func.returns:
        create_output = f"{_returns_cpp(f.func.returns, f, spelling).remove_const_ref().cpp_type(spelling)} tmp_output = "
    inplace_exprs = ", ".join(e.expr for e in translate(unwrapped_ctx, sig.arguments(), spelling=spelling))
    aliased, fresh = _redispatch_return_names(f, "tmp_output")
    return f"""at::AutoDispatchSkipFunctionalize guard;
         {create_output}at::_ops::{f.func.name.unambiguous_name()}::call({inplace_exprs});
         {return_str(f.func.returns, aliased + fresh, f, spelling)}{";" if release.noop_redispatch_return_ends_twice else ""}"""


def _functional_call(f: NativeFunction, g: NativeFunctionsGroup, unwrapped_ctx: list[Binding],
                     release: Release) -> str:
    """The functional variant's call on the unwrapped arguments, into tmp_output."""
    spelling = release.cpp_spelling
    return_type = _returns_cpp(g.functional.func.returns, f, spelling).remove_const_ref().cpp_type(spelling)
    functional_sig = _dispatcher_sig(g.functional.func, f, spelling)
    functional_exprs = _cumulative_out_dtype(
        f, functional_sig, [e.expr for e in translate(unwrapped_ctx, functional_sig.arguments(), spelling=spelling)],
        release)
    return f"""{return_type} tmp_output;
        {{
          at::AutoDispatchSkipFunctionalize guard;
          tmp_output = at::_ops::{g.functional.func.name.unambiguous_name()}::call({", ".join(functional_exprs)});
        }}"""


def inplace_functionalization_body(f: NativeFunction, g: NativeFunctionsGroup, release: Release) -> str:
    """RegisterFunctionalization's kernel of a group's out=, in-place or mutable op: its functional variant's
    result is written back into the arguments it mutates."""
    if not writes_an_argument(f):
        raise FunctionalizationError(f"Expected function to modify arguments: {f.func}")
    sig = _dispatcher_sig(f.func, f, release.cpp_spelling)
    unwrap, unwrapped_ctx = unwrap_tensor_args(sig, is_view_op=False)
    all_mutated_functional, any_non_mutated_functional, any_xla = _functional_tensor_tests(f)
    functional_call = _functional_call(f, g, unwrapped_ctx, release)
    noop = _noop_redispatch(f, sig, unwrapped_ctx, release)
    if release.functionalization_xla_data is XlaDataPropagation.NONE:  # until 2.0: no XLA exception
        mixing_check = f"if (({any_non_mutated_functional})) {{"
    else:
        mixing_check = f"""// We want to disable this check if there are any XLA tensors.
        // cpu_tensor.copy_(xla_tensor) is valid code.
        if (!({any_xla}) && ({any_non_mutated_functional})) {{"""
    return f"""
    {sig.defn(name=wrapper_name(f.func), is_redispatching_fn=True)} {{
      {_meta_shape_check(f, sig, release)}
      {unwrap}
      if (!({all_mutated_functional})) {{
        {mixing_check}
         // case 1: trying to mutate a non functional tensor with a functional tensor is an error
         TORCH_INTERNAL_ASSERT(false,
           "mutating a non-functional tensor with a functional tensor is not allowed.",
           " Please ensure that all of your inputs are wrapped inside of a functionalize() call.");
        }} else {{
         // case 2: arguments are not functional tensors, so we no-op and redispatch.
         {noop}
        }}
      }} else {{
        {functional_call}
        {_wrap_propagate_mutations_and_return(f, g.functional, "tmp_output", release)}
      }}
    }}"""


Grouped = NativeFunction | NativeFunctionsGroup | NativeFunctionsViewGroup


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per view group or group and release: frozen.PER_OP_MEMO says why the bound fits
def compute_functionalization_definitions(g: Grouped, release: Release) -> tuple[str, ...]:
    if isinstance(g, NativeFunctionsViewGroup):
        if g.view.has_composite_implicit_autograd_kernel:
            return ()
        out = [view_functionalization_body(g, view_inplace=False, release=release)]
        if g.view_inplace is not None:
            out.append(view_functionalization_body(g, view_inplace=True, release=release))
        return tuple(out)
    if isinstance(g, NativeFunction):
        if functionalization_refuses(g, release):
            raise FunctionalizationError(f"{g.func.name}: a mutable op that is not grouped with a functional variant "
                                         "needs a CompositeImplicitAutograd kernel")
        return ()
    return tuple(inplace_functionalization_body(f, g, release) for f in (g.out, g.inplace, g.mutable)
                 if f is not None)


def _registration(f: NativeFunction, cia_index: BackendIndex, spelling: CppSpelling) -> str:
    if f.has_composite_implicit_autograd_kernel:
        meta = cia_index.get_kernel(f)
        if meta is None:
            raise FunctionalizationError(f"Expected metadata for composite implicit autograd kernel: {f.func}")
        sig = NativeSignature(f.func, meta.supports_symint(), _opts(f, spelling))
        target = f"static_cast<{sig.ptr_type()}>(at::native::{meta.kernel})"
    else:
        target = f"TORCH_FN(functionalization::{wrapper_name(f.func)})"
    return f'm.impl("{f.func.name}", {target});'


def compute_functionalization_registrations(g: Grouped, cia_index: BackendIndex,
                                            release: Release) -> list[str]:
    if isinstance(g, NativeFunctionsViewGroup):
        if str(g.view.func.name) == "lift_fresh":
            return []
        composite = release.functionalization_registers_composite is not CompositeRegistrations.NONE
        return [_registration(f, cia_index, release.cpp_spelling) for f in _view_and_inplace(g)
                if composite or not f.has_composite_implicit_autograd_kernel]
    if isinstance(g, NativeFunctionsGroup):
        by_hand = release.functionalization_leaves_set_source_tensor and g.inplace is not None \
            and str(g.inplace.func.name) == "set_.source_Tensor"
        fns = [] if by_hand else list(g.functions())
    else:
        if skips_functionalization(str(g.func.name), release):
            return []
        fns = [g]
    view = view_registered_as_mutation(tuple(fns))  # OPG128 for a group's; a loose one is in a view group
    if view is not None:
        raise FunctionalizationError(f"Unexpected view op: {view.func}")
    every_composite = release.functionalization_registers_composite is CompositeRegistrations.EVERY_OP
    out = []
    for f in fns:
        composite = f.has_composite_implicit_autograd_kernel
        if composite and not every_composite:
            continue
        if str(f.func.name) in ("lift", "resize_"):
            return []
        # Until 2.0 composite ops are registered to their kernels too, so that they decompose first.
        if writes_an_argument(f) or composite:
            out.append(_registration(f, cia_index, release.cpp_spelling))
    return out


# ------------------------------------------------------------------ CompositeViewCopyKernels.cpp

_VIEW_COPY = """\
at::Tensor view_copy_symint(const at::Tensor & self, at::SymIntArrayRef size) {
  c10::SymDimVector shape = infer_size_dv(size, self.sym_numel());
  if (!at::detail::computeStride(self.sym_sizes(), self.sym_strides(), shape).has_value()) {
    return self.reshape_symint(size);
  } else {
    auto output = at::_ops::view::call(self, size);
    return output.CLONE;
  }
}
"""
_CONTIGUOUS_CLONE = "clone(/*memory_format=*/at::MemoryFormat::Contiguous)"


def compute_view_copy_kernel(g: NativeFunctionsViewGroup, index: BackendIndex, release: Release) -> str | None:
    """The CompositeExplicitAutogradNonFunctional kernel of a generated {view}_copy op: from 2.0 named and
    (SymInt or not) as the backend index says, its outputs cloned contiguous; before, the native name, int
    signature and a plain clone() (Release.view_copy_kernels_by_backend_index)."""
    if g.view_copy is None or g.view_copy.func.name.name.base != f"{g.view.func.name.name}_copy":
        return None
    spelling = release.cpp_spelling
    by_index = release.view_copy_kernels_by_backend_index
    clone = _CONTIGUOUS_CLONE if by_index else "clone()"
    meta = index.get_kernel(g.view_copy) if by_index else None
    if by_index and meta is None:
        raise FunctionalizationError(f"Expected metadata for view_copy kernel: {g.view_copy.func}")
    if str(g.view_copy.func.name) == "view_copy":
        why = view_copy_kernel_problem(g.view_copy, meta.kernel) if meta is not None else None  # OPG128
        if why is not None:
            raise FunctionalizationError(why)
        return _VIEW_COPY.replace("CLONE", clone)
    ctx = g.view
    copy_sig = NativeSignature(g.view_copy.func, meta is not None and meta.supports_symint(), _opts(ctx, spelling))
    view_sig = _dispatcher_sig(g.view.func, ctx, spelling)
    exprs = ", ".join(e.expr for e in translate(copy_sig.arguments(), view_sig.arguments(), spelling=spelling))
    returns = g.view.func.returns
    if len(returns) != 1 or returns[0].type not in (_TENSOR, ListType(_TENSOR, None)):
        raise FunctionalizationError(f"{g.view.func.name}: a view op must return one Tensor or Tensor[]")
    if returns[0].type == _TENSOR:
        cloned = f"  return output.{clone};"
    else:
        cloned = f"""\
  {copy_sig.returns_type().cpp_type(spelling)} out_clone;
  for (const auto i : c10::irange(output.size())) {{
    out_clone.push_back(output[i].{clone});
  }}
  return out_clone;"""
    return f"""
{copy_sig.defn(name=meta.kernel if meta is not None else None)} {{
  auto output = at::_ops::{g.view.func.name.unambiguous_name()}::call({exprs});
  {cloned}
}}
"""


def _nonaliased_inner_rets(func: FunctionSchema, out_var: str) -> list[str]:
    tuple_ = len(func.returns) > 1
    return [f"std::get<{i}>({out_var})" if tuple_ else out_var
            for i, r in enumerate(func.aliased_return_names()) if r is None]


def compute_composite_functional_kernel(g: NativeFunctionsGroup, spelling: CppSpelling) -> str | None:
    """The functional kernel of a generated functional op, calling its in-place or mutable variant."""
    if "generated" not in g.functional.tags:
        return None
    if g.inplace is not None and "generated" not in g.inplace.tags:
        target = g.inplace
    elif g.mutable is not None and "generated" not in g.mutable.tags:
        target = g.mutable
    else:
        raise FunctionalizationError(f"{g.functional.func}: no in-place or mutable variant to generate it from")
    ctx = g.out
    options = _opts(ctx, spelling)
    sig = _dispatcher_sig(g.functional.func, ctx, spelling)
    target_sig = _dispatcher_sig(target.func, ctx, spelling)
    context: list[Binding | Expr] = []
    clones, cloned = [], []
    for cur, tgt in zip(dispatcher.jit_arguments(g.functional.func), dispatcher.jit_arguments(target.func)):
        if tgt.annotation is not None and tgt.annotation.is_write:
            clones.append(f"auto {cur.name}_clone = clone_arg({cur.name});")
            context.append(Expr(f"{cur.name}_clone", dispatcher.argument(cur, options=options).nctype))
            cloned.append(f"{cur.name}_clone")
        else:
            context.append(dispatcher.argument(cur, options=options))
    exprs = ", ".join(e.expr for e in translate(context, target_sig.arguments(), spelling=spelling))
    assign = "auto output = " if target.func.returns else ""
    ret = return_str(g.functional.func.returns, _nonaliased_inner_rets(target.func, "output") + cloned, ctx, spelling)
    suffix = "_symint" if g.out.func.has_symint(returns_too=spelling.symint_returns_follow_signature) else ""
    clones_str = "\n".join(clones)
    return f"""
{sig.defn(name=sig.name() + suffix)} {{
  {clones_str}
  {assign}at::_ops::{target.func.name.unambiguous_name()}::call({exprs});
  {ret}
}}
"""


def compute_composite_out_kernel(g: NativeFunctionsGroup, spelling: CppSpelling) -> str | None:
    """The out= kernel of a generated out= op, calling the functional variant and copying into out."""
    if "generated" not in g.out.tags:
        return None
    ctx = g.out
    sig = _dispatcher_sig(g.out.func, ctx, spelling)
    target_sig = _dispatcher_sig(g.functional.func, ctx, spelling)
    exprs = ", ".join(e.expr for e in translate(sig.arguments(), target_sig.arguments(), spelling=spelling))
    single = len(g.functional.func.returns) == 1

    def ret_of(i: int) -> str:
        return "tmp_output" if single else f"std::get<{i}>(tmp_output)"

    copies = "\n".join(f"""\
  resize_out_helper({a.name}, {ret_of(i)});
  copy_arg({a.name}, {ret_of(i)});""" for i, a in enumerate(g.out.func.arguments.out))
    rets = [name if name is not None else ret_of(i) for i, name in enumerate(g.out.func.aliased_return_names())]
    suffix = "_symint" if g.out.func.has_symint(returns_too=spelling.symint_returns_follow_signature) else ""
    return f"""
{sig.defn(name=g.out.func.name.unambiguous_name() + suffix)} {{
  auto tmp_output = at::_ops::{g.functional.func.name.unambiguous_name()}::call({exprs});
  {copies}
  {return_str(g.out.func.returns, rets, ctx, spelling)}
}}
"""
