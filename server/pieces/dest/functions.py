"""The public API pieces of one operator: Functions.h, TensorBody.h, Operators.h, RegisterSchema.cpp."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from ...frozen import PER_OP_MEMO
from ...model.native_function import NativeFunction, Variant
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api.signatures import CppSignatureGroup, dispatcher_signature
from ..api.translate import translate


def cpp_string(s: str) -> str:
    """A Python string as a C++ string literal."""
    for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\a", "\\a"), ("\b", "\\b"), ("\f", "\\f"),
                         ("\n", "\\n"), ("\v", "\\v"), ("\t", "\\t")):
        s = s.replace(raw, escaped)
    return f'"{s}"'


def symint_template_form(release: Release) -> bool | None:
    """compute_function's is_same_v: None before 2.0 (no symint templates), else the form of their enable_if."""
    return release.symint_templates_use_is_same_v if release.functions_symint_templates else None


def in_functions_h(f: NativeFunction, release: Release) -> bool:
    """Whether f has an entry in Functions.h's list: every op from 2.0 (a method's symint templates are there, and
    a method without them is an empty entry); before, only the ops with a function variant."""
    return release.functions_symint_templates or Variant.function in f.variants


@functools.lru_cache(maxsize=PER_OP_MEMO)  # pure in the (hashable, frozen) function; hovers ask again and again
def compute_function(f: NativeFunction, is_same_v: bool | None, qualified_memory_format: bool,
                     spelling: CppSpelling) -> str:
    """at::op(...) inline definitions (Functions.h), one per C++ overload, plus the symint templates (whose
    enable_if says std::is_same_v<...>, or std::is_same<...>::value when not `is_same_v`:
    Release.symint_templates_use_is_same_v; none when it is None: before 2.0, functions_symint_templates);
    defaults spelled as types.spelled_default says)."""
    group = CppSignatureGroup.from_native_function(f, method=False, spelling=spelling,
                                                   fallback_binding=f.manual_cpp_binding)
    target = dispatcher_signature(f, spelling=spelling)
    op = f.func.name.unambiguous_name()
    if is_same_v is None:  # before 2.0: each definition ends its line, and no templates
        return "".join(f"""
// aten::{f.func}
inline {sig.decl(qualified_memory_format=qualified_memory_format)} {{
    return at::_ops::{op}::call({", ".join(e.expr for e in translate(sig.arguments(), target.arguments(),
                                                                     spelling=spelling))});
}}
""" for sig in group.signatures()) if Variant.function in f.variants else ""
    has_symint = f.func.has_symint(returns_too=spelling.symint_returns_follow_signature)
    out = ""
    for sig in group.signatures():
        exprs = ", ".join(e.expr for e in translate(sig.arguments(), target.arguments(), spelling=spelling))
        if Variant.function in f.variants:
            out += f"""
// aten::{f.func}
inline {sig.decl(qualified_memory_format=qualified_memory_format)} {{
    return at::_ops::{op}::call({exprs});
}}"""
        if has_symint:
            intlike = "c10::SymInt" if sig.symint else "int64_t"
            same = f"std::is_same_v<T, {intlike}>" if is_same_v else f"std::is_same<T, {intlike}>::value"
            out += f"""
namespace symint {{
  template <typename T, typename = std::enable_if_t<{same}>>
  {sig.decl(suppress_symint_suffix=True, qualified_memory_format=qualified_memory_format)} {{
    return at::_ops::{op}::call({exprs});
  }}
}}
"""
    return out


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_tensor_method_declaration(f: NativeFunction, qualified_memory_format: bool, spelling: CppSpelling
                                       ) -> str | None:
    """Tensor::op(...) declarations in the Tensor class (TensorBody.h); defaults as types.spelled_default says."""
    if Variant.method not in f.variants:
        return None
    group = CppSignatureGroup.from_native_function(f, method=True, spelling=spelling,
                                                   fallback_binding=f.manual_cpp_binding)
    return "".join(f"{sig.decl(qualified_memory_format=qualified_memory_format)} const;\n"
                   for sig in group.signatures())


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_tensor_method_definition(f: NativeFunction, spelling: CppSpelling) -> str | None:
    """Tensor::op(...) inline definitions (TensorBody.h)."""
    if Variant.method not in f.variants:
        return None
    group = CppSignatureGroup.from_native_function(f, method=True, spelling=spelling,
                                                   fallback_binding=f.manual_cpp_binding)
    target = dispatcher_signature(f, spelling=spelling)
    out = ""
    for sig in group.signatures():
        exprs = ", ".join(e.expr for e in translate(sig.arguments(), target.arguments(), spelling=spelling, method=True))
        out += f"""
// aten::{f.func}
inline {sig.defn(prefix="Tensor::")} const {{
    return at::_ops::{f.func.name.unambiguous_name()}::call({exprs});
}}
"""
    return out


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_operator_declaration(f: NativeFunction, static_constexpr: bool, spelling: CppSpelling) -> str:
    """The at::_ops::<op> struct (Operators.h): schema type, names, call and redispatch. The names are
    `static constexpr const char*` members, or with not `static_constexpr` the Windows-CUDA macro of gen.py
    before 2.6 (Release.operator_names_static_constexpr)."""
    sig = dispatcher_signature(f, spelling=spelling)
    name = f.func.name.unambiguous_name()
    strings = (("name", f'"aten::{f.func.name.name}"'), ("overload_name", f'"{f.func.name.overload_name}"'),
               ("schema_str", cpp_string(str(f.func))))
    members = "".join(f"  static constexpr const char* {member} = {value};\n" if static_constexpr else
                      f"  STATIC_CONSTEXPR_STR_INL_EXCEPT_WIN_CUDA({member}, {value})\n" for member, value in strings)
    return f"""
struct TORCH_API {name} {{
  using schema = {sig.type()};
  using ptr_schema = schema*;
  // See Note [static constexpr char* members for windows NVCC]
{members}  static {sig.defn(name="call", is_redispatching_fn=False)};
  static {sig.defn(name="redispatch", is_redispatching_fn=True)};
}};"""


def tags_initializer(f: NativeFunction) -> str:
    # Sorted in every release: before 2.1 gen.py's order is a set's, which no one run fixes (Release.schema_tags_sorted).
    return "{" + ", ".join(f"at::Tag::{tag}" for tag in sorted(f.tags)) + "}"


def compute_schema_registration(f: NativeFunction, tags_index: int | None) -> str:
    """The m.def line of RegisterSchema.cpp; ops with tags name the shared tags_<index> vector (None: the tags
    spelled in the line, as for an op without tags and before 2.2)."""
    if tags_index is None:
        return f"m.def({cpp_string(str(f.func))}, {tags_initializer(f)});\n"
    return f"m.def({cpp_string(str(f.func))}, tags_{tags_index});\n"


def tag_vector_indices(functions: Iterable[NativeFunction]) -> dict[str, int]:
    """RegisterSchema.cpp numbers each distinct tag list in order of first use."""
    indices: dict[str, int] = {}
    for f in functions:
        tags = tags_initializer(f)
        if tags != "{}" and tags not in indices:
            indices[tags] = len(indices)
    return indices
