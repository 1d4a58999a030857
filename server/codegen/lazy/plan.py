"""The files gen_lazy_tensor writes, as a pure plan.

In the order torchgen writes them: `<Key>NativeFunctions.h` and the
registration files (as gen_backend_stubs, but registered from a deferred
`Register<BackendName><Key>NativeFunctions()` function), then
`<Key>NativeFunctions.cpp` (the full_codegen kernels), `LazyIr.h` (a node
class per full_codegen and ir_gen op) and `LazyNonNativeIr.h`. Op groups are
visited sorted by base name, as gen_lazy_tensor sorts them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...pieces.backend_target import BackendTarget
from ...pieces.lazy.code import Group, LazyPieces
from ...pieces.lazy.options import LazyOptions
from ...releases import Release
from ..backend.stubs import RegistrationOptions, generated_comment, namespace_lines, plan_backend
from ..plan import Env, Manager, PlannedFile, single

GENERATOR = "torchgen/gen_lazy_tensor.py"
TEMPLATES = ("DispatchKeyNativeFunctions.h", "RegisterDispatchKey.cpp", "RegisterDispatchDefinitions.ini",
             "DispatchKeyNativeFunctions.cpp", "LazyIr.h", "LazyNonNativeIr.h")


def registration(options: LazyOptions) -> RegistrationOptions:
    """How gen_lazy_tensor's Register<Key>.cpp hooks the kernels up: from a deferred function."""
    return RegistrationOptions(eager=False, backend_name=options.backend_name, build_in_tree=options.build_in_tree,
                               per_operator_headers=options.per_operator_headers, release=options.release)


def ltc_helper_functions(release: Release) -> str:
    """The helpers every generated lazy kernel file defines (to_meta for tensors, optionals and lists); the
    meta tensor's dtype, layout and device through std::make_optional until 2.5 (Release.lazy_to_meta_makes_optionals);
    optionals spelled as the release does (Release.cpp_spelling)."""
    spelling = release.cpp_spelling
    make, nullopt, optional_tensor = (spelling.make_optional(rooted=False), spelling.nullopt(rooted=False),
                                      spelling.optional("at::Tensor", rooted=False))
    if release.lazy_to_meta_makes_optionals:
        options = (f"/*dtype=*/{make}(tensor.scalar_type()), /*layout=*/{make}(tensor.layout()), "
                   f"/*device=*/{make}(c10::Device(c10::kMeta)), ")
    else:
        options = "/*dtype=*/tensor.scalar_type(), /*layout=*/tensor.layout(), /*device=*/c10::Device(c10::kMeta), "
    return (
        "at::Tensor to_meta(const at::Tensor& tensor) {\n"
        "  // undefined tensors can't be converted to the meta device, since they don't have sizes/strides\n"
        "  if (!tensor.defined()) return tensor;\n"
        "  auto out = at::native::empty_strided_meta_symint(tensor.sym_sizes(), tensor.sym_strides(), "
        f"{options}/*pin_memory=*/{nullopt});\n"
        "  // needs to handle wrapped numbers, so dtype promotion works properly.\n"
        "  if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) {\n"
        "    out.unsafeGetTensorImpl()->set_wrapped_number(true);\n"
        "  }\n"
        "  return out;\n"
        "}\n"
        f"{optional_tensor} to_meta(const {optional_tensor}& tensor) {{\n"
        "  if (tensor.has_value()) {\n"
        "    return to_meta(*tensor);\n"
        "  }\n"
        f"  return {nullopt};\n"
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
# ... before 2.5 (Release.lazy_ir_includes_std_optional)
_IR_SYSTEM_INCLUDES_C10_OPTIONAL = ("ATen/core/Formatting.h", "c10/core/ScalarType.h", "c10/util/Optional.h",
                                    "torch/csrc/lazy/core/hash.h", "torch/csrc/lazy/core/ir.h",
                                    "torch/csrc/lazy/core/shape.h", "vector")
_NON_NATIVE_INCLUDES = ("torch/csrc/lazy/core/ir.h", "torch/csrc/lazy/core/ir_builder.h",
                        "torch/csrc/lazy/core/internal_ops/ltc_ops.h", "torch/csrc/lazy/core/shape_inference.h")


def kernels_cpp(target: BackendTarget, output_dir: str, pieces: LazyPieces, options: LazyOptions) -> Env:
    prologue, epilogue = namespace_lines(target.cpp_namespace)
    paths = [options.tensor_class_hdr, options.shape_inference_hdr, *_KERNEL_INCLUDES,
             f"{output_dir}/{target.backend_key}NativeFunctions.h", f"{output_dir}/LazyIr.h"]
    return {
        "generated_comment": generated_comment("DispatchKeyNativeFunctions.cpp", GENERATOR, options.release),
        "includes": [f"#include <{p}>" for p in paths],
        "helper_fns": ltc_helper_functions(options.release),
        "native_functions_include": "",
        "namespace_prologue": prologue,
        "namespace_epilogue": epilogue,
        "native_function_definitions": list(pieces.kernels),
    }


def lazy_ir_h(target: BackendTarget, pieces: LazyPieces, options: LazyOptions) -> Env:
    prologue, epilogue = namespace_lines(target.cpp_namespace)
    return {
        "lazy_ir_sysinc": [f"#include <{p}>" for p in (
            _IR_SYSTEM_INCLUDES if options.release.lazy_ir_includes_std_optional else _IR_SYSTEM_INCLUDES_C10_OPTIONAL)],
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
    files = plan_backend(target, groups, output_dir, templates, registration(options), GENERATOR)
    files.append(single(Manager.cpu, f"{target.backend_key}NativeFunctions.cpp",
                        lambda: kernels_cpp(target, output_dir, pieces, options),
                        template="DispatchKeyNativeFunctions.cpp"))
    files.append(single(Manager.cpu, "LazyIr.h", lambda: lazy_ir_h(target, pieces, options), template="LazyIr.h"))
    files.append(single(Manager.cpu, "LazyNonNativeIr.h", lambda: non_native_ir_h(target, pieces, options),
                        template="LazyNonNativeIr.h"))
    return files
