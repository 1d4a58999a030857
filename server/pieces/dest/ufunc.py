"""The bodies of UfuncCPU_<op>.cpp, UfuncCPUKernel_<op>.cpp and UfuncCUDA_<op>.cu.

Per dtype, an AT_DISPATCH_CASE calls the op's inner-loop template (ufunc::<name>): on CPU
through cpu_kernel / cpu_kernel_vec lambdas, on CUDA through generated functors, with a
specialization for a CPU-scalar operand of binary ops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from ...frozen import PER_OP_MEMO, record
from ...model.codegen_rules import cuda_functor_dtype_problems
from ...model.native_function import NativeFunctionsGroup, ScalarType, UfuncInnerLoop, UfuncKey
from ...model.schema import Argument, BaseTy, BaseType
from ...releases.profile import CppSpelling
from ..api import structured, ufunc
from ..api.translate import translate
from ..api.types import Binding, CType, Expr, NamedCType, VectorizedCType, opmath_t, scalar_t

_SCALAR = BaseType(BaseTy.Scalar)


def _loops(g: NativeFunctionsGroup) -> dict[UfuncKey, UfuncInnerLoop]:
    return dict(g.out.ufunc_inner_loop)


def _exprs(ctx: Sequence[Binding | Expr], goals: Sequence[Binding], spelling: CppSpelling) -> str:
    return ", ".join(e.expr for e in translate(ctx, goals, spelling=spelling))


# ---------------------------------------------------------------------------------------------- signatures


@record
class StubSignature:
    """The DispatchStub of a ufunc op: <op>_stub of type <op>_fn, implemented by <op>_kernel."""

    g: NativeFunctionsGroup
    spelling: CppSpelling

    @property
    def base(self) -> str:
        return str(self.g.functional.func.name.name)

    @property
    def name(self) -> str:
        return f"{self.base}_stub"

    @property
    def kernel_name(self) -> str:
        return f"{self.base}_kernel"

    @property
    def type_name(self) -> str:
        return f"{self.base}_fn"

    def arguments(self) -> list[Binding]:
        return ufunc.stub_arguments(self.g, self.spelling)

    def type_defn(self) -> str:
        types = ", ".join(a.type for a in self.arguments())
        return f"using {self.type_name} = void(*)(TensorIteratorBase&, {types})"

    def dispatch_decl(self) -> str:
        return f"DECLARE_DISPATCH({self.type_name}, {self.name})"

    def kernel_defn(self) -> str:
        args = ", ".join(a.defn() for a in self.arguments())
        return f"void {self.kernel_name}(TensorIteratorBase& iter, {args})"

    def call(self, ctx: Sequence[Binding]) -> str:
        return f"{self.name}(device_type(), *this, {_exprs(ctx, self.arguments(), self.spelling)})"

    def direct_call(self, ctx: Sequence[Binding]) -> str:
        return f"{self.kernel_name}(*this, {_exprs(ctx, self.arguments(), self.spelling)})"


def impl_defn(g: NativeFunctionsGroup, key: str, spelling: CppSpelling) -> str:
    args = ", ".join(a.defn() for a in structured.impl_arguments(g, spelling))
    return f"TORCH_IMPL_FUNC({ufunc.kernel_name(g, key)})({args})"


@record
class UfuncSignature:
    """A call of the inner-loop template, computing in compute_t."""

    g: NativeFunctionsGroup
    name: str
    compute_t: CType
    spelling: CppSpelling

    def call(self, ctx: Sequence[Binding | Expr]) -> str:
        return f"{self.name}({_exprs(ctx, ufunc.ufunc_arguments(self.g, self.compute_t, self.spelling), self.spelling)})"


@record
class UfunctorSignature:
    """A CUDA functor: some arguments in the constructor (kept as fields named <arg>_), tensors in operator()."""

    g: NativeFunctionsGroup
    scalar_tensor_idx: int | None
    name: str
    spelling: CppSpelling

    def arguments(self) -> ufunc.UfunctorBindings:
        return ufunc.ufunctor_arguments(self.g, self.scalar_tensor_idx, self.spelling)

    def fields(self) -> list[Binding]:
        return [b.with_name(f"{b.name}_") for b in self.arguments().ctor]

    def decl_fields(self) -> str:
        return "\n".join(f"{f.type} {f.name};" for f in self.fields())

    def inline_defn_ctor(self) -> str:
        ctor = self.arguments().ctor
        args = ", ".join(a.decl() for a in ctor)
        init = ", ".join(f"{a.name}_({a.name})" for a in ctor)
        return f"{self.name}({args}) : {init} {{}}"

    def decl_apply(self) -> str:
        args = ", ".join(a.decl() for a in self.arguments().apply)
        return f"{scalar_t.cpp_type(self.spelling)} operator()({args}) const"


# ---------------------------------------------------------------------------------------------- CUDA

# A CUDA functor key -> which tensor (counting from 0) its constructor takes as a CPU scalar.
_SCALAR_TENSOR_IDX = {UfuncKey.CUDAFunctorOnSelf: 1, UfuncKey.CUDAFunctorOnOther: 0, UfuncKey.CUDAFunctor: None}


def eligible_for_binary_scalar_specialization(g: NativeFunctionsGroup) -> bool:
    return sum(1 for a in g.functional.func.arguments.flat_non_out if a.type.is_tensor_like()) == 2


def _cuda_functor_keys(g: NativeFunctionsGroup) -> list[UfuncKey]:
    if eligible_for_binary_scalar_specialization(g):
        return [UfuncKey.CUDAFunctorOnSelf, UfuncKey.CUDAFunctorOnOther, UfuncKey.CUDAFunctor]
    loops = _loops(g)
    for k in (UfuncKey.CUDAFunctorOnSelf, UfuncKey.CUDAFunctorOnOther):
        if k in loops:
            raise ufunc.UfuncError(f"cannot use {k.name} on non-binary function")
    return [UfuncKey.CUDAFunctor]


def _generic_loop(g: NativeFunctionsGroup) -> tuple[str, tuple[ScalarType, ...]]:
    """The ScalarOnly and Generic loops together: their (shared) name and their dtypes, in order."""
    loops = _loops(g)
    name: str | None = None
    dtypes: dict[ScalarType, None] = {}
    for lk in (UfuncKey.ScalarOnly, UfuncKey.Generic):
        if lk not in loops:
            continue
        if name is not None and name != loops[lk].name:
            raise ufunc.UfuncError("ScalarOnly and Generic must have same ufunc name")
        name = loops[lk].name
        dtypes.update(dict.fromkeys(loops[lk].supported_dtypes))
    if name is None:
        raise ufunc.UfuncError(f"{g.out.func.name}: a CUDA functor needs a ScalarOnly or Generic loop")
    return name, tuple(dtypes)


def _functor_definition(sig: UfunctorSignature, ufunc_name: str) -> str:
    call = UfuncSignature(sig.g, f"ufunc::{ufunc_name}", opmath_t, sig.spelling).call(sig.fields() + list(sig.arguments().apply))
    return f"""
template <typename scalar_t>
struct {sig.name} {{
  using opmath_t = at::opmath_type<scalar_t>;
  {sig.decl_fields()}
  {sig.inline_defn_ctor()}
  __device__ {sig.decl_apply()} {{
    return {call};
  }}
}};
"""


def compute_ufunc_cuda_functors(g: NativeFunctionsGroup, spelling: CppSpelling
                                ) -> tuple[dict[ScalarType, dict[UfuncKey, UfunctorSignature]], str]:
    """The functors by dtype and key, and the text of the ones to generate (keys given directly are the user's)."""
    why = next((message for _, message in cuda_functor_dtype_problems(g.functional, g.out)), None)
    if why is not None:  # OPG127: the check refuses it
        raise ufunc.UfuncError(why)
    sigs: dict[ScalarType, dict[UfuncKey, UfunctorSignature]] = {}
    texts: list[str] = []
    loops = _loops(g)
    for k in _cuda_functor_keys(g):
        if k in loops:
            sig = UfunctorSignature(g, _SCALAR_TENSOR_IDX[k], loops[k].name, spelling)
            dtypes = loops[k].supported_dtypes
        else:
            ufunc_name, dtypes = _generic_loop(g)
            sig = UfunctorSignature(g, _SCALAR_TENSOR_IDX[k], f"{k.name}_{ufunc_name}", spelling)
            texts.append(_functor_definition(sig, ufunc_name))
        for dtype in dtypes:
            sigs.setdefault(dtype, {})[k] = sig
    return sigs, "\n".join(texts)


# (scalar operand index, the tensor the constructor gets as that scalar, the functor key)
_BINARY_SCALAR_SPECIALIZATIONS = ((0, "self", UfuncKey.CUDAFunctorOnOther), (1, "other", UfuncKey.CUDAFunctorOnSelf))


def compute_ufunc_cuda_dtype_body(inner: Mapping[UfuncKey, UfunctorSignature], parent: Sequence[Binding]) -> str:
    body = "using opmath_t = at::opmath_type<scalar_t>;if (false) {}\n"
    for idx, ctor_tensor, key in _BINARY_SCALAR_SPECIALIZATIONS:
        if key not in inner:
            continue
        sig = inner[key]
        operand = idx + 1
        scalar = Expr(f"iter.scalar_value<opmath_t>({operand})", NamedCType(ctor_tensor, opmath_t))
        ctx: list[Binding | Expr] = [*parent, scalar]
        body += f"""\
else if (iter.is_cpu_scalar({operand})) {{
  {sig.name}<scalar_t> ufunctor({_exprs(ctx, sig.arguments().ctor, sig.spelling)});
  iter.remove_operand({operand});
  gpu_kernel(iter, ufunctor);
}}"""
    sig = inner[UfuncKey.CUDAFunctor]
    body += f"""
else {{
  gpu_kernel(iter, {sig.name}<scalar_t>({_exprs(parent, sig.arguments().ctor, sig.spelling)}));
}}
    """
    return body


def _dispatch_case(dtype: ScalarType, body: str) -> str:
    return f"""
AT_DISPATCH_CASE(at::ScalarType::{dtype.name},
  [&]() {{
    {body}
  }}
)
"""


@lru_cache(maxsize=PER_OP_MEMO)  # per group: frozen.PER_OP_MEMO says why the bound fits
def compute_ufunc_cuda(g: NativeFunctionsGroup, end: str, spelling: CppSpelling) -> str:
    """UfuncCUDA_<op>.cu's definitions: the functors, the stub kernel (dtype switch) and TORCH_IMPL_FUNC. `end`
    follows the DECLARE_DISPATCH / REGISTER_DISPATCH lines (Release.dispatch_stub_macros_end)."""
    sigs, functors = compute_ufunc_cuda_functors(g, spelling)
    impl_name = ufunc.kernel_name(g, "CUDA")
    parent = structured.impl_arguments(g, spelling)
    cases = "\n".join(_dispatch_case(dtype, compute_ufunc_cuda_dtype_body(inner, parent))
                      for dtype, inner in sigs.items())
    stub = StubSignature(g, spelling)
    return f"""
{functors}

{stub.type_defn()};
{stub.dispatch_decl()}{end}

{stub.kernel_defn()} {{
  AT_DISPATCH_SWITCH(iter.common_dtype(), "{impl_name}",
    {cases}
  );
}}
REGISTER_DISPATCH({stub.name}, &{stub.kernel_name}){end}

{impl_defn(g, "CUDA", spelling)} {{
  {stub.direct_call(parent)};
}}
"""


# ---------------------------------------------------------------------------------------------- CPU


@lru_cache(maxsize=PER_OP_MEMO)  # per group: frozen.PER_OP_MEMO says why the bound fits
def compute_ufunc_cpu(g: NativeFunctionsGroup, end: str, spelling: CppSpelling) -> str:
    """UfuncCPU_<op>.cpp's definitions: the stub's declaration (followed by `end`) and definition, and
    TORCH_IMPL_FUNC calling it."""
    stub = StubSignature(g, spelling)
    return f"""
{stub.type_defn()};
{stub.dispatch_decl()}{end}
DEFINE_DISPATCH({stub.name});

{impl_defn(g, "CPU", spelling)} {{
  {stub.call(structured.impl_arguments(g, spelling))};
}}
"""


def _cpu_loop_keys(loops: Mapping[UfuncKey, object], k: UfuncKey) -> list[UfuncKey]:
    """The loops implementing CPUScalar or CPUVector, in order of precedence."""
    lks = [k] if k in loops else []
    if UfuncKey.ScalarOnly in loops and k is UfuncKey.CPUScalar:
        lks.append(UfuncKey.ScalarOnly)
    if UfuncKey.Generic in loops:
        lks.append(UfuncKey.Generic)
    return lks


def cpu_ufunc_sigs(g: NativeFunctionsGroup, spelling: CppSpelling) -> dict[ScalarType, dict[UfuncKey, UfuncSignature]]:
    loops = _loops(g)
    compute: dict[UfuncKey, CType] = {UfuncKey.CPUScalar: scalar_t, UfuncKey.CPUVector: VectorizedCType(scalar_t)}
    sigs: dict[ScalarType, dict[UfuncKey, UfuncSignature]] = {}
    for k in (UfuncKey.CPUScalar, UfuncKey.CPUVector):
        for lk in _cpu_loop_keys(loops, k):
            for dtype in loops[lk].supported_dtypes:
                sigs.setdefault(dtype, {}).setdefault(k, UfuncSignature(g, f"ufunc::{loops[lk].name}", compute[k],
                                                                                spelling))
    return sigs


def _lambda_bindings(g: NativeFunctionsGroup, t: CType, spelling: CppSpelling) -> list[Binding]:
    out = []
    for a in g.functional.func.arguments.flat_non_out:
        if not a.type.is_tensor_like():
            continue
        if a.type != BaseType(BaseTy.Tensor):
            raise ufunc.UfuncError(f"ufunc codegen expects plain Tensor arguments, not {a.type}")
        out.append(Binding(a.name, NamedCType(a.name, t), a, spelling))
    return out


def compute_ufunc_cpu_dtype_body(g: NativeFunctionsGroup, dtype: ScalarType,
                                 inner: Mapping[UfuncKey, UfuncSignature], parent: Sequence[Binding]) -> str:
    if UfuncKey.CPUScalar not in inner:
        raise ufunc.UfuncError(f"{g.out.func.name}: no CPUScalar loop for {dtype.name}")
    scalar_loop = inner[UfuncKey.CPUScalar]
    vec_loop = inner.get(UfuncKey.CPUVector)
    scalars = [b for b in parent if isinstance(b.argument, Argument) and b.argument.type == _SCALAR]
    body = [f"auto _s_{b.name} = {b.name}.to<scalar_t>();" for b in scalars]
    ctx: list[Expr | Binding] = [Expr(f"_s_{b.name}", NamedCType(b.nctype.name, scalar_t)) for b in scalars]
    if vec_loop is not None:
        body += [f"auto _v_{b.name} = at::vec::Vectorized<scalar_t>(_s_{b.name});" for b in scalars]
        ctx += [Expr(f"_v_{b.name}", NamedCType(b.nctype.name, VectorizedCType(scalar_t))) for b in scalars]
    scalar_bindings = _lambda_bindings(g, scalar_t, scalar_loop.spelling)
    scalar_lambda = (f"[=]({', '.join(b.decl() for b in scalar_bindings)}) "
                     f"{{ return {scalar_loop.call([*ctx, *scalar_bindings])}; }}")
    body_str = "\n".join(body)
    if vec_loop is None:
        return f"""
{body_str}
cpu_kernel(iter,
  {scalar_lambda}
);
"""
    vec_bindings = _lambda_bindings(g, VectorizedCType(scalar_t), vec_loop.spelling)
    vec_lambda = (f"[=]({', '.join(b.decl() for b in vec_bindings)}) "
                  f"{{ return {vec_loop.call([*ctx, *vec_bindings])}; }}")
    return f"""
{body_str}
cpu_kernel_vec(iter,
  {scalar_lambda},
  {vec_lambda}
);
"""


@lru_cache(maxsize=PER_OP_MEMO)  # per group: frozen.PER_OP_MEMO says why the bound fits
def compute_ufunc_cpu_kernel(g: NativeFunctionsGroup, end: str, spelling: CppSpelling) -> str:
    """UfuncCPUKernel_<op>.cpp's definitions: the stub kernel (a dtype switch over the loops) and its registration
    (the DECLARE_DISPATCH / REGISTER_DISPATCH lines followed by `end`)."""
    stub = StubSignature(g, spelling)
    parent = stub.arguments()
    cases = "\n".join(_dispatch_case(dtype, compute_ufunc_cpu_dtype_body(g, dtype, inner, parent))
                      for dtype, inner in cpu_ufunc_sigs(g, spelling).items())
    return f"""
namespace {{

{stub.kernel_defn()} {{
  AT_DISPATCH_SWITCH(iter.common_dtype(), "{stub.name}",
    {cases}
  );
}}

}} // anonymous namespace

{stub.type_defn()};
{stub.dispatch_decl()}{end}
REGISTER_DISPATCH({stub.name}, &{stub.kernel_name}){end}
"""
