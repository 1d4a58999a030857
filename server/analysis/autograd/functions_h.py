"""The autograd Node struct of one derivatives.yaml formula set, as torchgen writes it into Functions.h.

Each node class (AbsBackward0, ...) keeps what its backward formulas need: tensors as SavedVariable,
tensor lists as vectors of them, sizes as owned vectors, everything else by value. The struct's text
follows gen_autograd_functions' declaration of the release byte for byte.
"""

from __future__ import annotations

from ...pieces.api.types import (
    ArrayRefCType,
    BaseCType,
    ListCType,
    MutRefCType,
    OptionalCType,
    SymIntT,
    VectorCType,
    doubleT,
    intArrayRefT,
    iTensorListRefT,
    longT,
    optionalIntArrayRefT,
    optionalSymIntArrayRefT,
    scalarT,
    symIntArrayRefT,
    tensorListT,
    tensorT,
)
from ...releases import Release
from .formulas import SavedAttribute, uses
from .load import NodeInfo

# The C++ types of the arguments that count as one list input each (a size field records their length).
TENSOR_LIST_TYPES = ("at::TensorList", "const c10::List<::std::optional<at::Tensor>> &", "const at::ITensorListRef &")

# Ops whose nodes derive from Node rather than TraceableFunction: the view functions (VIEW_FUNCTIONS of
# gen_inplace_or_view_type, with the views whose metadata changes).
VIEW_FUNCTIONS = frozenset((
    "numpy_T", "alias", "as_strided", "diagonal", "expand", "permute", "select", "slice", "slice_inverse", "split",
    "split_with_sizes", "squeeze", "t", "transpose", "unfold", "unsqueeze", "flatten", "view", "unbind", "_indices",
    "_values", "indices", "values", "crow_indices", "col_indices", "ccol_indices", "row_indices",
    "sparse_coo_tensor_with_dims_and_tensors", "_reshape_alias", "_test_autograd_multiple_dispatch_view",
    "view_as_complex", "view_as_real", "_conj", "_neg_view", "_nested_get_values", "_nested_view_from_buffer",
    "_nested_view_from_jagged",
))

TEST_DISPATCH_VIEW = "_test_autograd_multiple_dispatch_view"  # a view function from 2.1 only

stringT = BaseCType("c10::string_view")
_SAVED_VARIABLE = (tensorT, OptionalCType(tensorT), MutRefCType(OptionalCType(tensorT)))
_SAVED_LIST = (tensorListT, iTensorListRefT, VectorCType(tensorT))
_OWNED_ARRAYS: dict[object, str] = {
    intArrayRefT: "std::vector<int64_t>",
    symIntArrayRefT: "std::vector<c10::SymInt>",
    optionalIntArrayRefT: "c10::OptionalArray<int64_t>",
    optionalSymIntArrayRefT: "c10::OptionalArray<c10::SymInt>",
    OptionalCType(intArrayRefT): "c10::OptionalArray<int64_t>",
    OptionalCType(symIntArrayRefT): "c10::OptionalArray<c10::SymInt>",
    OptionalCType(ArrayRefCType(doubleT)): "c10::OptionalArray<double>",
}


def _fields(saved: SavedAttribute, is_output: bool, release: Release) -> tuple[list[str], list[str]]:
    """The struct fields that keep one saved value, and the lines that release it."""
    name, ctype = saved.name, saved.nctype.type
    if ctype in _SAVED_VARIABLE or (ctype == scalarT and is_output):
        return [f"SavedVariable {name}_;"], [f"{name}_.reset_data();"]
    if ctype in _SAVED_LIST or ctype == ListCType(OptionalCType(tensorT)):
        return ([f"std::vector<SavedVariable> {name}_;", f"bool {name}_released_ = false;"],
                [f"{name}_.clear();", f"{name}_released_ = true;"])
    if ctype in _OWNED_ARRAYS:
        return [f"{_OWNED_ARRAYS[ctype]} {name};"], []
    if ctype == longT:
        return [f"{ctype.cpp_type(release.cpp_spelling)} {name} = 0;"], []
    if ctype == SymIntT:
        return [f"c10::SymInt {name};"], []
    if ctype == stringT:
        return [f"std::string {name};"], []
    if ctype == OptionalCType(stringT):
        std = "std" if release.autograd.node_optional_strings_are_std else "c10"
        return [f"{std}::optional<std::string> {name};"], []
    if ctype == ArrayRefCType(scalarT):
        return [f"std::vector<at::Scalar> {name};", f"bool {name}_released_ = false;"], [f"{name}.clear();"]
    return [f"{ctype.cpp_type(release.cpp_spelling)} {name};"], []


def _by_name(saved: tuple[SavedAttribute, ...]) -> list[SavedAttribute]:
    return sorted(saved, key=lambda s: s.name)


def _as_saved(saved: tuple[SavedAttribute, ...]) -> list[SavedAttribute]:
    return list(saved)


def node_declaration(node: NodeInfo, release: Release) -> str:
    """The struct of the node class in the release's Functions.h (from `#ifdef _WIN32`, before 2.1 from `struct`,
    to `};`, newline-terminated)."""
    info = node.key
    saved, release_lines = [], []
    order = _by_name if release.autograd.node_compiled_autograd else _as_saved
    for var in order(info.all_saved_inputs):
        fields, releases = _fields(var, False, release)
        saved += fields
        release_lines += releases
    for var in order(info.all_saved_outputs):
        fields, releases = _fields(var, True, release)
        saved += fields
        release_lines += releases
    sizes = [f"size_t {a.name}_size_;" for a in info.args_with_derivatives if a.type in TENSOR_LIST_TYPES]
    lock = "std::lock_guard<std::mutex> lock(mutex_);" if release_lines else ""
    retains = any(uses("retain_variables", d.formula) for d in info.derivatives)
    view = node.name in VIEW_FUNCTIONS and (node.name != TEST_DISPATCH_VIEW or release.autograd.test_dispatch_view_is_a_view)
    superclass = "Node" if view else "TraceableFunction"
    op = node.op
    const = " const" if release.autograd.node_compiled_args_const else ""
    will_release = ("  bool retain_variables = true;\n  void will_release_variables() override {\n"
                    "    retain_variables = false;\n  }\n" if retains else "\n")
    compiled = release.autograd.node_compiled_autograd
    opening = f"struct TORCH_API {op} : public {superclass} {{\n"
    if compiled:
        opening = f"#ifdef _WIN32\nstruct {op} : public {superclass} {{\n  TORCH_API {op}() = default;\n#else\n{opening}#endif\n"
    members = (f"  void compiled_args(CompiledNodeArgs& args){const} override;\n"
               "  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;\n"
               if compiled else "")
    return (
        opening +
        f"  using {superclass}::{superclass};\n"
        f"  variable_list apply(variable_list&& grads) override;\n"
        f"  std::string name() const override {{ return \"{op}\"; }}\n"
        f"  void release_variables() override {{\n"
        + _line("    ", [lock] if lock else []) + _line("    ", release_lines) +
        "  }\n"
        + will_release + members
        + _line("  ", saved) + _line("  ", sizes) +
        "};\n"
    )


def _line(indent: str, items: list[str]) -> str:
    """A template line holding a list: one item per line at the line's indentation; none leaves it empty."""
    return "".join(f"{indent}{item}\n" for item in items) if items else "\n"
