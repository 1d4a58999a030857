"""<Backend>NativeFunctions.cpp: the kernel of each full_codegen op, tracing into an IR node
(gen_lazy_tensor's GenLazyNativeFuncDefinition), and the shape-inference function each one calls.

The kernel finds the common device, wraps its tensor arguments as lazy tensors,
reuses a cached node or computes the output shapes (through the meta kernel
when the op is structured or a view_copy, else through a hand-written
`compute_shape_<kernel>` declared in the shape-inference header) and builds a
new node, then wraps the node's outputs as tensors.
"""

from __future__ import annotations

from ...frozen import record
from ...model.native_function import BackendIndex, BackendMetadata, NativeFunction
from ...model.schema import BaseTy, BaseType, ListType
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api import dispatcher
from ..api.signatures import DispatcherSignature
from ..api.types import ApiOptions, BaseCType, Binding, OptionalCType, VectorCType, deviceT
from ..dest.native_declarations import kernel_signature
from ..dest.register_backend import call_arguments
from .schema import VALUE_T, LazyArgument, LazyIrSchema, is_value_type, lazy_schema


class LazyKernelError(ValueError):
    """An op the lazy kernel codegen cannot generate (torchgen fails with an AssertionError)."""


@record
class KernelOptions:
    """The customization points of run_gen_lazy_tensor (the command line uses the defaults)."""

    tensor_class: str = "torch::lazy::LazyTensor"
    backend_namespace: str = "torch::lazy"
    get_tensorlist: str = "GetTensorList"
    get_tensor_or_wrap_number: str = "GetLtcTensorOrCreateForWrappedNumber"
    try_get_tensor: str = "TryGetLtcTensor"
    metrics_counter: str = 'TORCH_LAZY_FN_COUNTER("lazy::")'
    create_tensor: str = "LazyTensor::Create"
    create_from_first_tensor: bool = False
    create_aten_from_ltc_tensor: str = "torch::lazy::CreateAtenFromLtcTensor"
    tuple_aten_from_ltc_tensors: str = "torch::lazy::TupleAtenFromLtcTensors"
    lazy_tensor_ptr: str = "LazyTensorPtr"
    get_device_fn: str = "torch::lazy::GetBackendDevice"


def _meta(f: NativeFunction, index: BackendIndex) -> BackendMetadata:
    meta = index.get_kernel(f)
    if meta is None:
        raise LazyKernelError(f"No kernel metadata found for {f.func.name}")
    return meta


def uses_meta_kernel(f: NativeFunction) -> bool:
    """Shapes come from the meta (or view_copy's composite) kernel instead of a compute_shape_ function."""
    return f.structured or f.structured_delegate is not None or "view_copy" in f.tags


@record
class ShapeSignature:
    """compute_shape_<kernel>: declared in the shape-inference header, called by the kernel."""

    kernel: str
    decl_args: str
    call_args: str

    @property
    def decl(self) -> str:
        return f"TORCH_API std::vector<torch::lazy::Shape> compute_shape_{self.kernel}({self.decl_args})"

    @property
    def call(self) -> str:
        return f"torch::lazy::compute_shape_{self.kernel}({self.call_args})"


def shape_signature(f: NativeFunction, kernel: str, *, symint: bool, spelling: CppSpelling) -> ShapeSignature:
    schema = lazy_schema(f.func, symint=symint, generators_in_ir=True)  # (every argument, asked for by name below)
    args = dispatcher.arguments(f.func, options=ApiOptions.of(f, spelling), symint=symint)
    return ShapeSignature(kernel, ", ".join(a.decl() for a in args),
                          ", ".join(a.name for a in schema.filtered_args(generator=True)))


def shape_declaration(f: NativeFunction, index: BackendIndex, spelling: CppSpelling) -> str | None:
    """The declaration the header must have for f (a full_codegen op), None when f uses a meta kernel."""
    meta = _meta(f, index)
    if uses_meta_kernel(f):
        return None
    return shape_signature(f, meta.kernel, symint=meta.supports_symint(), spelling=spelling).decl + ";"


def _to_meta(sig: DispatcherSignature) -> tuple[str, list[Binding]]:
    context, lines = [], []
    for b in sig.arguments():
        arg = b.argument
        if hasattr(arg, "type") and arg.type.is_tensor_like():  # a schema Argument
            lines.append(f"auto {b.name}_meta = to_meta({b.name});")
            context.append(b.with_name(f"{b.name}_meta"))
        else:
            context.append(b)
    return "\n        ".join(lines), context


def _shape_inference(f: NativeFunction, schema: LazyIrSchema, index: BackendIndex, spelling: CppSpelling) -> str:
    meta = _meta(f, index)
    n = len(schema.returns)
    if uses_meta_kernel(f):
        if n > 1:
            shapes = ",".join(f"torch::lazy::Shape(std::get<{i}>(out_meta).scalar_type(), "
                              f"std::get<{i}>(out_meta).sizes().vec())" for i in range(n))
            meta_out = "std::vector<torch::lazy::Shape> shapes{" + shapes + "};"
        else:
            meta_out = ("\nstd::vector<torch::lazy::Shape> shapes{torch::lazy::Shape(out_meta.scalar_type(), "
                        "out_meta.sizes().vec())};")
        sig = DispatcherSignature(f.func, ApiOptions.of(f, spelling))
        conversion, ctx = _to_meta(sig)
        call_args = ", ".join(call_arguments(ctx, sig.arguments(), spelling))
        if "view_copy" in f.tags:
            if not f.has_composite_explicit_autograd_non_functional_kernel:
                raise LazyKernelError(f"view_copy op {f.func.name} must have "
                                      "CompositeExplicitAutogradNonFunctional kernel")
            ns = "compositeexplicitautogradnonfunctional"
        else:
            ns = "meta"
        name = schema.aten_name + ("_symint" if f.func.has_symint(returns_too=spelling.symint_returns_follow_signature)
                                       and meta.supports_symint() else "")
        text = f"""\
        {conversion}
        auto out_meta = at::{ns}::{name}({call_args});
        {meta_out}"""
    else:
        text = f"""
            auto shapes = {shape_signature(f, meta.kernel, symint=meta.supports_symint(), spelling=spelling).call};"""
    text += f"""
            TORCH_INTERNAL_ASSERT(shapes.size() == {n});"""
    inputs = ", ".join(a.name for a in schema.filtered_args())
    text += f"""
            if(torch::lazy::symbolicShapeEnabled()){{
                std::vector<torch::jit::IValue> inputs = {{ {inputs} }};
                const char* schema_str = "aten::{f.func}";
                applySymbolicShapesOnLT(schema_str, inputs, shapes);
            }}
        """
    return text


def ctor_input(a: LazyArgument, spelling: CppSpelling) -> str:
    """How the kernel passes one argument to the node's constructor."""
    t = a.lazy_type
    if is_value_type(t):  # without the node's properties, as torchgen tests it here
        if isinstance(t, BaseCType):
            if a.is_wrapped_scalar:
                return f"node_{a.name}"
            if a.is_tensor_list:
                return f"lazy_{a.name}_tensorlist"
            if a.is_symint_or_list:
                return f"GetSymIntValue({a.name})"
            return f"lazy_{a.name}->GetIrValue()"
        if isinstance(t, OptionalCType):
            make, nullopt = spelling.make_optional(rooted=False), spelling.nullopt()
            if a.is_symint_or_list:
                return f"{a.name} ? {make}(GetSymIntValue(*{a.name})) : {nullopt}"
            if a.is_wrapped_scalar:
                return f"node_{a.name}"
            return f"lazy_{a.name} ? {make}(lazy_{a.name}->GetIrValue()) : {nullopt}"
        raise LazyKernelError(f"TODO not sure if there are other valid types to handle here ({t.cpp_type(spelling)})")
    if isinstance(a.orig_type, ListType) and a.orig_type.elem == BaseType(BaseTy.SymInt):
        return f"GetSymIntArrayRefValue({a.name})" if a.symint else \
            f"std::vector<int64_t>({a.name}.begin(), {a.name}.end())"
    if isinstance(t, VectorCType) and isinstance(t.elem, BaseCType):
        return f"std::vector<{t.elem.cpp_type(spelling)}>({a.name}.begin(), {a.name}.end())"
    if isinstance(t, OptionalCType) and isinstance(t.elem, VectorCType) and isinstance(t.elem.elem, BaseCType):
        return f"torch::lazy::ToOptionalVector<{t.elem.elem.cpp_type(spelling)}>({a.name})"
    return a.name


def ctor_inputs(schema: LazyIrSchema, spelling: CppSpelling) -> str:
    return ", ".join(ctor_input(a, spelling) for a in schema.filtered_args())


def _lazy_tensor_decls(schema: LazyIrSchema, o: KernelOptions, spelling: CppSpelling) -> str:
    out = []
    for a in schema.filtered_args(scalars=False):
        t = a.lazy_type
        if a.is_wrapped_scalar:
            if isinstance(t, OptionalCType):
                out.append(f"""auto node_{a.name} = {a.name} ?
                {spelling.make_optional(rooted=False)}(torch::lazy::LazyGraphExecutor::Get()->
                    GetIrValueForScalarFromCodegen(*{a.name}, *common_device)):
                {spelling.nullopt()};""")
            else:
                out.append(f"""auto node_{a.name} = torch::lazy::LazyGraphExecutor::Get()->
                            GetIrValueForScalarFromCodegen({a.name}, *common_device);""")
        elif a.is_symint_or_list:
            continue
        elif isinstance(t, BaseCType):
            if a.is_tensor_list:
                out.append(f"auto lazy_{a.name}_tensorlist = {o.backend_namespace}::{o.get_tensorlist}({a.name});")
            else:
                out.append(f"{o.lazy_tensor_ptr} lazy_{a.name} = "
                           f"{o.backend_namespace}::{o.get_tensor_or_wrap_number}({a.name}, *common_device);")
        elif isinstance(t, OptionalCType):
            if t.elem != VALUE_T:
                raise LazyKernelError(f"Expected OptionalCType elem to be {VALUE_T.cpp_type(spelling)}, got "
                                      f"{t.elem.cpp_type(spelling)}")
            out.append(f"{o.lazy_tensor_ptr} lazy_{a.name} = "
                       f"{o.backend_namespace}::{o.try_get_tensor}({a.name}.value_or(at::Tensor()));")
        else:
            raise LazyKernelError(f"TODO not sure if there are other valid types to handle here ({t.cpp_type(spelling)})")
    return "\n        ".join(out)


def _device(schema: LazyIrSchema, o: KernelOptions) -> str:
    names = [a.name for a in schema.filtered_args(scalars=False) if not a.is_wrapped_scalar]
    devices = [a.name for a in schema.filtered_args(values=False) if a.lazy_type == OptionalCType(deviceT)]
    if not names and not devices:
        raise LazyKernelError(f"{schema.name}: expected at least one Value or Device type")
    return f"""auto common_device = {o.get_device_fn}({', '.join(names + devices)});
        TORCH_INTERNAL_ASSERT(common_device);
        """


def _create(o: KernelOptions, first: str | None) -> str:
    if o.create_from_first_tensor:
        if first is None:
            raise LazyKernelError("Requires first tensor to create lazy tensor")
        return f"{first}.{o.create_tensor}"
    return f"{o.backend_namespace}::{o.create_tensor}"


def _return(f: NativeFunction, schema: LazyIrSchema, o: KernelOptions) -> str:
    n = len(schema.returns)
    names = [a.name for a in schema.filtered_args(scalars=False) if not a.is_wrapped_scalar]
    first = names[0] if names else None
    text = f"""auto result = {o.create_aten_from_ltc_tensor}(
                {_create(o, first)}(std::move(node), *common_device));"""
    if n > 1:
        if not names:
            raise LazyKernelError(f"{f.func.name}: code below assumes there is at least one tensor arg")
        text = f"""std::vector<{o.lazy_tensor_ptr}> lazy_tensors;
        for (int i = 0; i < {n}; i++) {{
            lazy_tensors.push_back({_create(o, first)}({VALUE_T.name}(node, i), *common_device));
        }}
        auto result = {o.tuple_aten_from_ltc_tensors}<{n}>(lazy_tensors);"""
    if schema.name.name.inplace or f.func.is_out_fn():
        if n != 1:
            raise LazyKernelError(f"{f.func.name}: an in-place or out= op with {n} outputs")
        text = f"""lazy_{first}->SetInPlaceIrValue(node);
        auto& result = {first};"""
    return text + """
        return result;"""


def kernel_definition(f: NativeFunction, index: BackendIndex, class_name: str, o: KernelOptions,
                      release: Release) -> str:
    """The lazy kernel <class_name>::<kernel> of one full_codegen op."""
    spelling = release.cpp_spelling
    sig = kernel_signature(f, index, spelling)
    meta = _meta(f, index)
    schema = lazy_schema(f.func, symint=meta.supports_symint(), generators_in_ir=release.lazy_ir_keeps_generators)
    node = schema.node_name
    inputs = ctor_inputs(schema, spelling)
    build = f"""torch::lazy::NodePtr node = torch::lazy::ReuseNode<{node}>({inputs});
        if (!node) {{
            {_shape_inference(f, schema, index, spelling)}
            node = torch::lazy::MakeNode<{node}>({inputs}, std::move(shapes));
            CacheNode(node);
        }}
        """
    return f"""\
    {sig.decl(name=f"{class_name}::{meta.kernel}")} {{
        
        {o.metrics_counter};
        {_device(schema, o)}
        {_lazy_tensor_decls(schema, o, spelling)}
        {build}
        {_return(f, schema, o)}
    }}\n
    """  # noqa: W293 (the line of spaces is the lazy generator's bytes)
