"""The ways real kernel sources are written, each both found and, once deleted, reported.

Every snippet is our own C++ mimicking a pattern seen in aten/src/ATen/native (see
benchmarks/kernel_accuracy.py for the measurement on real files). Each case is a pair:
the source that defines the kernel, and the same source with the definition deleted
but everything that could be mistaken for it kept (declarations, calls, helpers of
the same name in anonymous namespaces, commented copies, macro definitions).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.analysis.kernels import Requirement, is_met
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.syntax.cpp_scan import DEFINITION, IMPL, META, scan


def met(tmp_path: Path, files: dict[str, str], kind: str, name: str, namespace: str = "at::native") -> bool:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    return is_met(index, Requirement(op=None, kind=kind, name=name, namespace=namespace))  # type: ignore[arg-type]


def assert_found_then_reported(tmp_path: Path, name: str, present: str, deleted: str, *, kind: str = DEFINITION,
                               file: str = "native/Ops.cpp") -> None:
    assert met(tmp_path / "present", {file: present}, kind, name), f"{name} not found"
    assert not met(tmp_path / "deleted", {file: deleted}, kind, name), f"{name} deleted but still found"


# ---------------------------------------------------------------- macros

PASTED = """\
namespace at::native {
#define UNARY_FUNCTIONAL(op)                      \\
  Tensor op##_quux(const Tensor& self) {          \\
    return apply_quux(self, [](const Tensor& t) { \\
      return at::op(t);                           \\
    });                                           \\
  }
#define UNARY_ALL(op)                             \\
  UNARY_FUNCTIONAL(op)                            \\
  Tensor& op##_quux_(Tensor& self) {              \\
    TORCH_CHECK(ok(self), #op " needs ok input"); \\
    return self;                                  \\
  }
UNARY_ALL(wobble);
UNARY_ALL(wibble);
UNARY_FUNCTIONAL(wiggle);
}
"""


@pytest.mark.parametrize("name, deleted", [
    ("wobble_quux_", PASTED.replace("UNARY_ALL(wobble);\n", "")),
    ("wibble_quux", PASTED.replace("UNARY_ALL(wibble);\n", "")),
    ("wiggle_quux", PASTED.replace("UNARY_FUNCTIONAL(wiggle);\n", "")),
], ids=lambda value: value if len(value) < 20 else "")
def test_names_pasted_by_nested_macros(tmp_path: Path, name: str, deleted: str) -> None:
    assert_found_then_reported(tmp_path, name, PASTED, deleted)


X_MACRO = """\
namespace at { namespace native {
#define DEFINE_CMP(op) \\
Tensor& op##_out_fancy(const Tensor& self, const Scalar& other, Tensor& out) { \\
  /* dequantize first */ \\
  return at:: op##_out(out, self.plain(), other); \\
} \\
Tensor op##_fancy(const Tensor& self, const Scalar& other) { return at:: op(self.plain(), other); }

#define FOR_EACH_CMP(_) \\
_(lt)                   \\
_(gt)                   \\

FOR_EACH_CMP(DEFINE_CMP)
#undef FOR_EACH_CMP
}}
"""


def test_a_macro_passed_to_a_list_macro(tmp_path: Path) -> None:
    assert_found_then_reported(tmp_path, "gt_out_fancy", X_MACRO, X_MACRO.replace("_(gt)                   \\\n", ""))
    assert met(tmp_path / "lt", {"native/Ops.cpp": X_MACRO}, DEFINITION, "lt_fancy")


MULTILINE_INVOCATION = """\
namespace at::native {
#define LIST_OP(FUNCTION, NAME, OP)                                  \\
  void foreach_##NAME##_list_gpu_(TensorList a, TensorList b) {      \\
    if (!fast(a, b)) {                                               \\
      return at::native::foreach_##NAME##_list_slow_(a, b);          \\
    }                                                                \\
    FUNCTION##_<OP>(a, b);                                           \\
  }
LIST_OP(
    all_types_half,
    hop,
    std::plus);
LIST_OP(all_types_half, skip, std::minus);
}
"""


def test_a_macro_invocation_over_several_lines_in_a_cu_file(tmp_path: Path) -> None:
    deleted = MULTILINE_INVOCATION.replace("LIST_OP(\n    all_types_half,\n    hop,\n    std::plus);\n", "")
    assert_found_then_reported(tmp_path, "foreach_hop_list_gpu_", MULTILINE_INVOCATION, deleted,
                               file="native/cuda/Ops.cu")


# ---------------------------------------------------------------- structured kernels

STRUCTURED = """\
namespace at {
namespace meta {
#define MAKE_META(func)                           \\
  TORCH_META_FUNC(func) (const Tensor& self) {    \\
    build_unary_op(maybe_get_output(), self);     \\
  }
MAKE_META(twirl)
MAKE_META(swirl)
TORCH_META_FUNC(curl) (const Tensor& self) { build_unary_op(maybe_get_output(), self); }

#define MAKE_CMP_META(func)                                                   \\
  TORCH_META_FUNC2(func, Tensor)(const Tensor& self, const Tensor& other) {   \\
    build_comparison_op(maybe_get_output(), self, other);                     \\
  }                                                                           \\
  TORCH_META_FUNC2(func, Scalar)(const Tensor& self, const Scalar& other) {   \\
    build_comparison_op(maybe_get_output(), self, wrap(other));               \\
  }
MAKE_CMP_META(near)

TORCH_PRECOMPUTE_META_FUNC(squash)
(const Tensor& input, IntArrayRef kernel_size) {
  return TORCH_PRECOMPUTE_STRUCT(squash)().set_k(kernel_size[0]);
}
TORCH_PRECOMPUTE_META_FUNC2(squish, Tensor)(const Tensor& input, const Tensor& index) {
  return TORCH_PRECOMPUTE_STRUCT2(squish, Tensor)().set_dim(0);
}
} // namespace meta
namespace native {
#define MAKE_IMPL(func) \\
TORCH_IMPL_FUNC(func##_out) (const Tensor& self, const Tensor& result) { func##_stub(device_type(), *this); }
MAKE_IMPL(twirl)
MAKE_IMPL(swirl)
TORCH_IMPL_FUNC(curl_out)
(const Tensor& self, const Tensor& result) {
  curl_stub(device_type(), *this);
}
}
}
"""


@pytest.mark.parametrize("kind, name, deleted", [
    (META, "twirl", STRUCTURED.replace("MAKE_META(twirl)\n", "")),
    (META, "swirl", STRUCTURED.replace("MAKE_META(swirl)\n", "")),
    (META, "curl", STRUCTURED.replace("TORCH_META_FUNC(curl) (const Tensor& self) { build_unary_op(maybe_get_output(), "
                                      "self); }\n", "")),
    (META, "near_Scalar", STRUCTURED.replace("MAKE_CMP_META(near)\n", "")),
    (META, "squash", STRUCTURED.replace("TORCH_PRECOMPUTE_META_FUNC(squash)", "static void gone()")),
    (META, "squish_Tensor", STRUCTURED.replace("TORCH_PRECOMPUTE_META_FUNC2(squish, Tensor)", "static void gone()")),
    (IMPL, "twirl_out", STRUCTURED.replace("MAKE_IMPL(twirl)\n", "")),
    (IMPL, "curl_out", STRUCTURED.replace("TORCH_IMPL_FUNC(curl_out)\n", "void curl_helper")),
], ids=lambda value: value if isinstance(value, str) and len(value) < 20 else "")
def test_structured_meta_and_impl_functions(tmp_path: Path, kind: str, name: str, deleted: str) -> None:
    assert_found_then_reported(tmp_path, name, STRUCTURED, deleted, kind=kind)


# ---------------------------------------------------------------- what comes before a definition

DECORATED = """\
#include <ATen/core/Tensor.h>
namespace at::native {
template <class T, template <class> class Op>
std::vector<Tensor> helper_list(TensorList a) { return {}; }
C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED("-Wmissing-prototypes")
C10_ALWAYS_INLINE Tensor& inlined_kernel(Tensor& self) { return self; }
__attribute__((visibility("default"))) Tensor attributed_kernel(const Tensor& self) { return self; }
[[nodiscard]] Tensor nodiscard_kernel(const Tensor& self) { return self; }
template <typename scalar_t = float>
Tensor templated_kernel(const Tensor& self) { return self; }
C10_DIAGNOSTIC_POP()
} // namespace at::native
"""


@pytest.mark.parametrize("name", ["inlined_kernel", "attributed_kernel", "nodiscard_kernel"])
def test_templates_and_attributes_before_a_definition(tmp_path: Path, name: str) -> None:
    deleted = DECORATED.replace(f" {name}(", " renamed_away(")
    assert_found_then_reported(tmp_path, name, DECORATED, deleted)


def test_function_templates_and_device_functions_are_no_kernel_definitions(tmp_path: Path) -> None:
    # the codegen declares a plain host function: a template or a __device__ function of its name is another one
    assert not met(tmp_path / "a", {"native/Ops.cpp": DECORATED}, DEFINITION, "templated_kernel")
    device = ("namespace at::native {\ntemplate <typename scalar_t>\n__device__ inline scalar_t smallest(scalar_t a, "
              "scalar_t b) { return a < b ? a : b; }\n__device__ float clampf(float x) { return x; }\n"
              "__host__ __device__ Tensor both(const Tensor& s) { return s; }\n}\n")
    assert not met(tmp_path / "b", {"native/Up.cuh": device}, DEFINITION, "smallest")
    assert not met(tmp_path / "c", {"native/Up.cuh": device}, DEFINITION, "clampf")
    assert met(tmp_path / "d", {"native/Up.cuh": device}, DEFINITION, "both")


CUDA = """\
namespace at::native {
namespace {
template <typename scalar_t>
__global__ void C10_LAUNCH_BOUNDS_1(256) spread_kernel(scalar_t* out, int64_t n) {
  CUDA_KERNEL_LOOP(i, n) { out[i] = scalar_t(0); }
}
} // namespace
Tensor& spread_out_cuda(const Tensor& self, Tensor& out) {
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "spread", [&] {
    spread_kernel<scalar_t><<<blocks(out), 256, 0, stream()>>>(out.data_ptr<scalar_t>(), out.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}
}
"""


def test_a_cuda_file_with_global_kernels_and_launches(tmp_path: Path) -> None:
    deleted = CUDA.replace("Tensor& spread_out_cuda(", "static Tensor& spread_out_cuda_unused(")
    assert_found_then_reported(tmp_path, "spread_out_cuda", CUDA, deleted, file="native/cuda/Spread.cu")


OBJC = """\
#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
namespace mps {
typedef MPSGraphTensor* (^UnaryBlock)(MPSGraph*, MPSGraphTensor*);
static void unary_op(const Tensor& self, const Tensor& out, UnaryBlock block) {
  @autoreleasepool {
    NSDictionary* feeds = @{key(self) : data(self)};
    run(feeds, block);
  }
}
} // namespace mps
TORCH_IMPL_FUNC(shine_out_mps)(const Tensor& self, const Tensor& output) {
  mps::unary_op(self, output, ^MPSGraphTensor*(MPSGraph* graph, MPSGraphTensor* input) {
    return [graph shineWithTensor:input name:nil];
  });
}
Tensor& glow_out_mps(const Tensor& self, Tensor& output) {
  mps::unary_op(self, output, ^MPSGraphTensor*(MPSGraph* graph, MPSGraphTensor* input) {
    return [graph glowWithTensor:input name:nil];
  });
  return output;
}
} // namespace at::native
"""


def test_objective_c_blocks_in_an_mm_file(tmp_path: Path) -> None:
    assert_found_then_reported(tmp_path, "shine_out_mps", OBJC, OBJC.replace("TORCH_IMPL_FUNC(shine_out_mps)",
                                                                               "static void shine_helper"),
                               kind=IMPL, file="native/mps/operations/Shine.mm")
    assert_found_then_reported(tmp_path / "glow", "glow_out_mps", OBJC,
                               OBJC.replace("Tensor& glow_out_mps(", "static Tensor& glow_helper("),
                               file="native/mps/operations/Shine.mm")


# ---------------------------------------------------------------- linkage and namespaces

LINKAGE = """\
namespace at {
namespace native {
namespace {
Tensor hidden_kernel(const Tensor& self) { return self; }
} // namespace
static Tensor static_kernel(const Tensor& self) { return self; }
inline namespace CPU_CAPABILITY {
Tensor capable_kernel(const Tensor& self) { return self; }
}
extern "C" {
Tensor c_linkage_kernel(const Tensor& self) { return self; }
}
} // namespace native
} // namespace at
"""


def test_internal_linkage_is_no_kernel_definition(tmp_path: Path) -> None:
    assert not met(tmp_path / "a", {"native/Ops.cpp": LINKAGE}, DEFINITION, "hidden_kernel")
    assert not met(tmp_path / "b", {"native/Ops.cpp": LINKAGE}, DEFINITION, "static_kernel")


def test_inline_namespaces_and_extern_blocks_are_transparent(tmp_path: Path) -> None:
    assert met(tmp_path / "a", {"native/Ops.cpp": LINKAGE}, DEFINITION, "capable_kernel")
    assert met(tmp_path / "b", {"native/Ops.cpp": LINKAGE}, DEFINITION, "c_linkage_kernel")


def test_a_kernel_deleted_beside_a_same_named_helper_in_an_anonymous_namespace(tmp_path: Path) -> None:
    present = "namespace at::native {\nnamespace {\nvoid twin(int) {}\n}\nTensor twin(const Tensor& s) { return s; }\n}\n"
    deleted = "namespace at::native {\nnamespace {\nvoid twin(int) {}\n}\n}\n"
    assert_found_then_reported(tmp_path, "twin", present, deleted)


def test_a_namespace_opened_after_macro_invocations_without_semicolons(tmp_path: Path) -> None:
    text = ("#define DEF(n) Tensor n##_k(const Tensor& s) { return s; }\nnamespace at::native {\nDEF(early)\n"
            "namespace detail { int x; }\nTensor late_k(const Tensor& s) { return s; }\n}\n")
    assert met(tmp_path / "a", {"native/Ops.cpp": text}, DEFINITION, "early_k")
    assert met(tmp_path / "b", {"native/Ops.cpp": text}, DEFINITION, "late_k")


# ---------------------------------------------------------------- preprocessor branches

BRANCHES = """\
namespace at::native {
#if !AT_FANCY_ENABLED()
Tensor fancy_relu(const Tensor& input) {
  TORCH_CHECK(false, "fancy_relu: not compiled with FANCY support");
}
#else
Tensor fancy_relu(const Tensor& input) { return fancy::relu(input); }
#endif
#ifdef USE_WIDE
Tensor widen(const Tensor& input, int64_t wide) {
#else
Tensor widen(const Tensor& input) {
#endif
  return input;
}
Tensor after_the_branches(const Tensor& input) { return input; }
}
"""


def test_kernels_in_preprocessor_branches(tmp_path: Path) -> None:
    assert met(tmp_path / "a", {"native/Ops.cpp": BRANCHES}, DEFINITION, "fancy_relu")
    assert met(tmp_path / "b", {"native/Ops.cpp": BRANCHES}, DEFINITION, "widen")
    # one body for two heads: the definitions after it must not be taken for a body's contents
    deleted = BRANCHES.replace("Tensor after_the_branches(", "static Tensor after_the_branches(")
    assert_found_then_reported(tmp_path / "c", "after_the_branches", BRANCHES, deleted)
    both_deleted = BRANCHES.replace("Tensor fancy_relu(", "static Tensor fancy_relu_gone(")
    assert not met(tmp_path / "d", {"native/Ops.cpp": both_deleted}, DEFINITION, "fancy_relu")


# ---------------------------------------------------------------- declarations

HEADER = """\
#pragma once
namespace at::native {
TORCH_API Tensor padded(const Tensor& self, IntArrayRef pad = {}, std::optional<double> value = {});
Tensor helper_after_header(const Tensor& self);
}
"""


def test_a_declaration_with_brace_defaults_is_no_definition(tmp_path: Path) -> None:
    source = "namespace at::native {\nTensor padded(const Tensor& self, IntArrayRef pad, std::optional<double> v) {\n" \
             "  return self;\n}\n}\n"
    assert met(tmp_path / "a", {"native/Pad.h": HEADER, "native/Pad.cpp": source}, DEFINITION, "padded")
    assert not met(tmp_path / "b", {"native/Pad.h": HEADER}, DEFINITION, "padded")


def test_code_under_if_0_is_no_definition(tmp_path: Path) -> None:
    present = "namespace at::native {\n#if 0\nTensor retired(const Tensor& s) { return s; }\n#else\n" \
              "Tensor current(const Tensor& s) { return s; }\n#endif\n}\n"
    assert not met(tmp_path / "a", {"native/Ops.cpp": present}, DEFINITION, "retired")
    assert met(tmp_path / "b", {"native/Ops.cpp": present}, DEFINITION, "current")


SEMICOLONS_IN_MACROS = """\
namespace at::native {
#define MAKE_OUT(op) Tensor& op##_sparse_grid_out(const Tensor& self, Tensor& out) { return out; }
#define MAKE_FUNCTIONAL(op) Tensor op##_sparse_grid(const Tensor& self) { return self; }
#define MAKE_ALL(op)  \\
  MAKE_OUT(op);       \\
  MAKE_FUNCTIONAL(op);
MAKE_ALL(ripple);
MAKE_ALL(wave);
}
"""


def test_macros_that_invoke_macros_with_semicolons(tmp_path: Path) -> None:
    assert_found_then_reported(tmp_path, "ripple_sparse_grid_out", SEMICOLONS_IN_MACROS,
                               SEMICOLONS_IN_MACROS.replace("MAKE_ALL(ripple);\n", ""))


# ---------------------------------------------------------------- macros from another file

MACRO_HEADER = """\
#pragma once
#define DEFINE_GRID_OPS(op)                                      \\
  Tensor op##_grid(const Tensor& self) { return self; }          \\
  Tensor& op##_grid_(Tensor& self) { return self; }
"""
USER = """\
#include <ATen/native/GridOps.h>
namespace at::native {
DEFINE_GRID_OPS(lattice)
DEFINE_GRID_OPS(mesh)
Tensor plain_grid(const Tensor& self) { return self; }
}
"""


def test_a_kernel_defining_macro_from_a_header_of_the_tree(tmp_path: Path) -> None:
    files = {"native/GridOps.h": MACRO_HEADER, "native/Grid.cpp": USER}
    assert met(tmp_path / "a", files, DEFINITION, "mesh_grid_")
    deleted = {**files, "native/Grid.cpp": USER.replace("DEFINE_GRID_OPS(mesh)\n", "")}
    assert not met(tmp_path / "b", deleted, DEFINITION, "mesh_grid_")


def test_the_index_follows_edits_to_the_macro_header_and_its_users(tmp_path: Path) -> None:
    header, user = tmp_path / "native/GridOps.h", tmp_path / "native/Grid.cpp"
    header.parent.mkdir(parents=True)
    header.write_text(MACRO_HEADER)
    user.write_text(USER)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    assert index.find("lattice_grid", (DEFINITION,))
    header.write_text(MACRO_HEADER.replace("op##_grid(", "op##_lattice_grid("))
    index.update(str(header))
    assert not index.find("lattice_grid", (DEFINITION,)) and index.find("lattice_lattice_grid", (DEFINITION,))
    user.write_text(USER.replace("DEFINE_GRID_OPS(lattice)\n", ""))
    index.update(str(user))
    assert not index.find("lattice_lattice_grid", (DEFINITION,)) and index.find("mesh_lattice_grid", (DEFINITION,))
    assert index.find("plain_grid", (DEFINITION,))


def test_dunder_kernels_are_kernels_and_dunder_attributes_are_not(tmp_path: Path) -> None:
    present = ("namespace at::native {\n__global__ void __launch_bounds__(128) helper(int* x) {}\n"
               "Tensor __and__(const Tensor& self, const Scalar& other) { return self; }\n"
               "Tensor& __ilshift__(Tensor& self, const Tensor& other) { return self; }\n}\n")
    deleted = present.replace("Tensor __and__(", "Tensor __or__(")
    assert_found_then_reported(tmp_path, "__and__", present, deleted)
    assert "helper" in {s.name for s in scan(present)}  # __launch_bounds__(128) is passed over


def test_windows_line_endings_and_variadic_macros(tmp_path: Path) -> None:
    crlf = PASTED.replace("\n", "\r\n")
    assert_found_then_reported(tmp_path / "crlf", "wobble_quux_", crlf, crlf.replace("UNARY_ALL(wobble);\r\n", ""))
    variadic = ("namespace at::native {\n#define KERNEL(name, ...) Tensor name(__VA_ARGS__) { return Tensor(); }\n"
                "KERNEL(fanned, const Tensor& a, const Tensor& b)\n}\n")
    assert [(s.name, s.line) for s in scan(variadic) if s.kind == DEFINITION] == [("fanned", 2)]


def test_a_header_created_then_deleted_gives_and_takes_its_macros(tmp_path: Path) -> None:
    user = tmp_path / "native/Grid.cpp"
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    assert not index.find("mesh_grid", (DEFINITION,))
    header = tmp_path / "native/GridOps.h"
    header.write_text(MACRO_HEADER)
    index.update(str(header))
    assert index.find("mesh_grid", (DEFINITION,))
    header.unlink()
    index.update(str(header))
    assert not index.find("mesh_grid", (DEFINITION,)) and index.find("plain_grid", (DEFINITION,))
