"""The files gen_lazy_tensor writes, as a pure plan.

In the order torchgen writes them: `<Key>NativeFunctions.h` and the
registration files (as gen_backend_stubs, but registered from a deferred
`Register<BackendName><Key>NativeFunctions()` function), then
`<Key>NativeFunctions.cpp` (the full_codegen kernels), `LazyIr.h` (a node
class per full_codegen and ir_gen op) and `LazyNonNativeIr.h`. Op groups are
visited sorted by base name, as gen_lazy_tensor sorts them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import OperatorName
from ...pieces.api.translate import UnsatError
from ...releases import DEFAULT, Release
from ..backend.stubs import BackendTarget, RegistrationOptions, namespace_lines, plan_backend
from ..plan import Env, Manager, PlannedFile, single
from .ir import IrOptions, node_class
from .kernels import KernelOptions, LazyKernelError, kernel_definition
from .nonnative import NonNativeOp
from .schema import LazyTypeError, lazy_schema

GENERATOR = "torchgen/gen_lazy_tensor.py"
TEMPLATES = ("DispatchKeyNativeFunctions.h", "RegisterDispatchKey.cpp", "RegisterDispatchDefinitions.ini",
             "DispatchKeyNativeFunctions.cpp", "LazyIr.h", "LazyNonNativeIr.h")

Group = NativeFunction | NativeFunctionsGroup


@dataclass(frozen=True)
class LazyOptions:
    """gen_lazy_tensor's settings (command-line flags and run_gen_lazy_tensor's parameters)."""

    node_base: str = "Node"
    node_base_hdr: str | None = None
    shape_inference_hdr: str = "torch/csrc/lazy/core/shape_inference.h"
    tensor_class: str = "torch::lazy::LazyTensor"
    tensor_class_hdr: str = "torch/csrc/lazy/core/tensor.h"
    backend_name: str = "TorchScript"
    gen_ts_lowerings: bool = False
    build_in_tree: bool = False
    per_operator_headers: bool = False
    use_lazy_shape: bool = True
    kernel: KernelOptions = field(default_factory=KernelOptions)
    release: Release = DEFAULT  # the torch release whose gen_lazy_tensor is matched

    @property
    def registration(self) -> RegistrationOptions:
        return RegistrationOptions(eager=False, backend_name=self.backend_name, build_in_tree=self.build_in_tree,
                                   per_operator_headers=self.per_operator_headers, release=self.release)

    @property
    def ir(self) -> IrOptions:
        return IrOptions(self.node_base, self.use_lazy_shape, self.gen_ts_lowerings, self.release)


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
    return node_class(lazy_schema(f.func, symint=meta is not None and meta.supports_symint()), options)


def compute_pieces(groups: tuple[Group, ...], index: BackendIndex, class_name: str,
                   full_codegen: tuple[OperatorName, ...], ir_gen: tuple[OperatorName, ...],
                   non_native: tuple[NonNativeOp, ...], options: LazyOptions) -> LazyPieces:
    problems: list[tuple[OperatorName, str]] = []
    kernels, nodes = [], []
    for f in selected(groups, full_codegen):
        try:
            kernels.append(kernel_definition(f, index, class_name, options.kernel))
        except _CODEGEN_ERRORS as exc:
            problems.append((f.func.name, str(exc)))
    ir = options.ir
    for f in selected(groups, full_codegen + ir_gen):
        try:
            nodes.append(ir_declaration(f, index, ir))
        except _CODEGEN_ERRORS as exc:
            problems.append((f.func.name, str(exc)))
    extra = []
    for op in non_native:
        try:
            extra.append(node_class(op.schema, ir))
        except _CODEGEN_ERRORS as exc:
            problems.append((op.schema.name, str(exc)))
    return LazyPieces(tuple(kernels), tuple(nodes), tuple(extra), tuple(problems))


def ltc_helper_functions() -> str:
    """The helpers every generated lazy kernel file defines (to_meta for tensors, optionals and lists)."""
    return (
        "at::Tensor to_meta(const at::Tensor& tensor) {\n"
        "  // undefined tensors can't be converted to the meta device, since they don't have sizes/strides\n"
        "  if (!tensor.defined()) return tensor;\n"
        "  auto out = at::native::empty_strided_meta_symint(tensor.sym_sizes(), tensor.sym_strides(), "
        "/*dtype=*/tensor.scalar_type(), /*layout=*/tensor.layout(), "
        "/*device=*/c10::Device(c10::kMeta), /*pin_memory=*/std::nullopt);\n"
        "  // needs to handle wrapped numbers, so dtype promotion works properly.\n"
        "  if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) {\n"
        "    out.unsafeGetTensorImpl()->set_wrapped_number(true);\n"
        "  }\n"
        "  return out;\n"
        "}\n"
        "std::optional<at::Tensor> to_meta(const std::optional<at::Tensor>& tensor) {\n"
        "  if (tensor.has_value()) {\n"
        "    return to_meta(*tensor);\n"
        "  }\n"
        "  return std::nullopt;\n"
        "}\n"
        "\n"
        "std::vector<at::Tensor> to_meta(at::ITensorListRef t_list) {\n"
        "  std::vector<at::Tensor> outs;\n"
        "  outs.reserve(t_list.size());\n"
        "  for (const auto& tensor : t_list) {\n"
        "    outs.push_back(to_meta(tensor));\n"
        "  }\n"
        "  return outs;\n"
        "}\n"
    )


_KERNEL_INCLUDES = ("ATen/Functions.h", "ATen/native/TensorConversions.h", "ATen/NativeFunctions.h",
                    "ATen/CompositeExplicitAutogradNonFunctionalFunctions.h", "ATen/MetaFunctions.h",
                    "ATen/Operators.h", "ATen/native/CPUFallback.h", "torch/csrc/lazy/core/ir_builder.h",
                    "torch/csrc/lazy/core/lazy_graph_executor.h", "torch/csrc/lazy/core/metrics.h",
                    "torch/csrc/lazy/core/shape.h")
_IR_SYSTEM_INCLUDES = ("ATen/core/Formatting.h", "c10/core/ScalarType.h", "torch/csrc/lazy/core/hash.h",
                       "torch/csrc/lazy/core/ir.h", "torch/csrc/lazy/core/shape.h", "optional", "vector")
_NON_NATIVE_INCLUDES = ("torch/csrc/lazy/core/ir.h", "torch/csrc/lazy/core/ir_builder.h",
                        "torch/csrc/lazy/core/internal_ops/ltc_ops.h", "torch/csrc/lazy/core/shape_inference.h")


def kernels_cpp(target: BackendTarget, output_dir: str, pieces: LazyPieces, options: LazyOptions) -> Env:
    prologue, epilogue = namespace_lines(target.cpp_namespace)
    paths = [options.tensor_class_hdr, options.shape_inference_hdr, *_KERNEL_INCLUDES,
             f"{output_dir}/{target.backend_key}NativeFunctions.h", f"{output_dir}/LazyIr.h"]
    return {
        "generated_comment": "@" + f"generated by {GENERATOR} from DispatchKeyNativeFunctions.cpp",
        "includes": [f"#include <{p}>" for p in paths],
        "helper_fns": ltc_helper_functions(),
        "native_functions_include": "",
        "namespace_prologue": prologue,
        "namespace_epilogue": epilogue,
        "native_function_definitions": list(pieces.kernels),
    }


def lazy_ir_h(target: BackendTarget, pieces: LazyPieces, options: LazyOptions) -> Env:
    prologue, epilogue = namespace_lines(target.cpp_namespace)
    return {
        "lazy_ir_sysinc": [f"#include <{p}>" for p in _IR_SYSTEM_INCLUDES],
        "lazy_ir_inc": [f'#include "{options.node_base_hdr}"'] if options.node_base_hdr is not None else [],
        "ir_declarations": list(pieces.ir_declarations),
        "namespace_prologue": prologue,
        "namespace_epilogue": epilogue,
    }


def non_native_ir_h(target: BackendTarget, pieces: LazyPieces, options: LazyOptions) -> Env:
    prologue, epilogue = namespace_lines(target.cpp_namespace)
    paths = [*_NON_NATIVE_INCLUDES, *([options.node_base_hdr] if options.node_base_hdr else [])]
    return {
        "lazy_non_native_ir_inc": [f"#include <{p}>" for p in paths if p],
        "non_native_ir_nodes": list(pieces.non_native),
        "namespace_prologue": prologue,
        "namespace_epilogue": epilogue,
    }


def plan_lazy(target: BackendTarget, groups: tuple[Group, ...], output_dir: str, templates: Mapping[str, str],
              pieces: LazyPieces, options: LazyOptions) -> list[PlannedFile]:
    """gen_lazy_tensor's files in its order; groups must already be sorted (sort_groups)."""
    files = plan_backend(target, groups, output_dir, templates, options.registration, GENERATOR)
    files.append(single(Manager.cpu, f"{target.backend_key}NativeFunctions.cpp",
                        lambda: kernels_cpp(target, output_dir, pieces, options),
                        template="DispatchKeyNativeFunctions.cpp"))
    files.append(single(Manager.cpu, "LazyIr.h", lambda: lazy_ir_h(target, pieces, options), template="LazyIr.h"))
    files.append(single(Manager.cpu, "LazyNonNativeIr.h", lambda: non_native_ir_h(target, pieces, options),
                        template="LazyNonNativeIr.h"))
    return files
