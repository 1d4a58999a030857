"""`opgen explain`: every piece of code torchgen generates for one operator."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frozen import record
from ..model.dispatch import parse_dispatch_key
from ..model.lower import cpp_name
from ..model.native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup, Variant
from ..model.native_yaml import NativeFunctions
from ..model.schema import OperatorName
from ..releases import Release
from ..suggest import closest
from .dest.functions import (
    compute_function,
    compute_operator_declaration,
    compute_schema_registration,
    compute_tensor_method_declaration,
    compute_tensor_method_definition,
    symint_template_form,
    tag_vector_indices,
    tags_initializer,
)
from .dest.native_declarations import (
    compute_meta_function_declaration,
    compute_native_function_declaration,
    merged_variant,
)
from .dest.register import compute_registration, compute_wrapper, is_structured_for
from .dest.register_structured import compute_structured_registration, compute_structured_wrapper


def as_in_file(code: str, indent: str = "", *, drop_blank_lines: bool = False) -> str:
    """The code as a torchgen template places it: indented, trailing blanks stripped, no blank edges.

    Register<Key>.cpp files are assembled from lists of lines, which loses every blank line.
    """
    lines = [(indent + line).rstrip() if line.strip() else "" for line in code.splitlines()]
    if drop_blank_lines:
        lines = [line for line in lines if line]
    return "\n".join(lines).strip("\n")


@record
class Snippet:
    title: str
    # The generated file it belongs to, relative to gen.py's install dir, plain (not per-operator) layout.
    file: str
    code: str
    # The indentation the file gives it (TensorBody.h's class body, RegisterSchema.cpp's library block).
    indent: str = ""


@dataclass(frozen=True)
class Explainer:
    """Answers explain queries for one analysed native_functions.yaml."""

    model: NativeFunctions
    release: Release  # the torch release whose generated code is shown (the model's)
    # Derived from model by __post_init__.
    _by_name: dict[str, NativeFunction] = field(init=False, repr=False, compare=False)
    _groups: dict[OperatorName, NativeFunctionsGroup] = field(init=False, repr=False, compare=False)
    _tags: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {op.function.func.name: op.function for op in self.model.ops}
        groups = {f.func.name: g for g in self.model.groups if isinstance(g, NativeFunctionsGroup) for f in g.functions()}
        object.__setattr__(self, "_by_name", {str(k): v for k, v in by_name.items()})
        object.__setattr__(self, "_groups", groups)
        object.__setattr__(self, "_tags", tag_vector_indices(self.model.native_functions))

    def function(self, name: str) -> NativeFunction | None:
        return self._by_name.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def closest(self, name: str) -> list[str]:
        return closest(name, self.names)

    def explain(self, name: str, backend: str | None = None) -> list[Snippet]:
        """Every piece for the op; with a backend key, only that key's pieces (an out-of-tree key
        gets the declaration its <Key>NativeFunctions.h would have if the op were listed as supported)."""
        f = self.function(name)
        if f is None:
            return []
        try:
            if backend is not None:
                return [s for s in self._backend_pieces(f, backend)]
            return self._pieces(f)
        except Exception as exc:  # a model with errors (say, a method whose self is a list): say so, never raise
            return [Snippet("Cannot generate", "", f"// torchgen cannot generate code for {name}: "
                                                   f"{type(exc).__name__}: {exc}")]

    def _pieces(self, f: NativeFunction) -> list[Snippet]:
        group = self._groups.get(f.func.name)
        operators = "MethodOperators.h" if Variant.method in f.variants else "Operators.h"
        out = [Snippet("Operator struct (at::_ops)", operators, compute_operator_declaration(
            f, self.release.operator_names_static_constexpr, self.release.cpp_spelling))]
        functions = compute_function(f, symint_template_form(self.release),
                                     self.release.cpp_default_qualifies_memory_format, self.release.cpp_spelling)
        if functions:
            out.append(Snippet("C++ API (at::)", "Functions.h", functions))
        method = compute_tensor_method_declaration(f, self.release.cpp_default_qualifies_memory_format,
                                                   self.release.cpp_spelling)
        if method:
            out.append(Snippet("Tensor method declaration", "core/TensorBody.h", method, "  "))
            out.append(Snippet("Tensor method definition", "core/TensorBody.h",
                               compute_tensor_method_definition(f, self.release.cpp_spelling) or ""))
        declarations = [s for index in self.model.backend_indices.values()
                        for s in self._kernel_declarations(f, group, index)]
        if self.release.device_family_kernel_exports:  # NativeFunctions.h merges a kernel shared by CPU and CUDA
            in_tree = [s.code for s in declarations if s.file == "NativeFunctions.h"]
            declarations = [Snippet(s.title, s.file, merged_variant(s.code, in_tree), s.indent)
                            if s.file == "NativeFunctions.h" else s for s in declarations]
        out.extend(declarations)
        for index in self.model.backend_indices.values():
            out.extend(self._registrations(f, group, index))
        if group is not None and f is group.out and group.structured:
            meta = compute_meta_function_declaration(group, self.release.cpp_spelling)
            if meta:
                out.append(Snippet("Structured meta class", "NativeMetaFunctions.h", meta))
        tags = tags_initializer(f)
        tags_index = self._tags.get(tags) if tags != "{}" and self.release.schema_tags_shared else None
        out.append(Snippet("Schema registration", "RegisterSchema.cpp", compute_schema_registration(f, tags_index),
                           "  "))
        return [Snippet(s.title, s.file, as_in_file(s.code, s.indent, drop_blank_lines=s.file.startswith("Register")
                                                    and s.file != "RegisterSchema.cpp"))
                for s in out]

    def _kernel_declarations(self, f: NativeFunction, group: NativeFunctionsGroup | None, index: BackendIndex
                             ) -> list[Snippet]:
        if index.get_kernel(f) is None:
            return []
        target: NativeFunction | NativeFunctionsGroup = f
        meta = index.get_kernel(group) if group is not None else None
        if group is not None and meta is not None and meta.structured:
            target = group
        file = f"{index.dispatch_key}NativeFunctions.h" if index.external else "NativeFunctions.h"
        return [Snippet(f"{index.dispatch_key} kernel declaration", file, decl)
                for decl in compute_native_function_declaration(target, index, self.release)]

    def _registrations(self, f: NativeFunction, group: NativeFunctionsGroup | None, index: BackendIndex
                       ) -> list[Snippet]:
        # (a release that does not shard Register<Key>.cpp writes one file of that name)
        file = f"Register{index.dispatch_key}{'Everything' if self.release.register_dispatch_key_sharded else ''}.cpp"
        if group is not None and is_structured_for(group, index):
            wrapper = compute_structured_wrapper(f, group, index, self.release, rocm=False)
            registration = compute_structured_registration(f, index, self.release)
        else:
            wrapper = compute_wrapper(f, index, release=self.release)
            registration = compute_registration(f, index, self.release)
        if wrapper is None or registration is None:
            return []
        return [Snippet(f"{index.dispatch_key} registration wrapper", file, wrapper),
                Snippet(f"{index.dispatch_key} registration", file, registration)]

    def _backend_pieces(self, f: NativeFunction, backend: str) -> list[Snippet]:
        key = parse_dispatch_key(backend)
        if key is None:
            return []
        group = self._groups.get(f.func.name)
        index = self.model.backend_indices.get(key)
        if index is None or index.get_kernel(f) is None:
            # As gen_backend_stubs would declare it for an out-of-tree backend listing the op.
            kernel = BackendMetadata(cpp_name(f.func), False, f"at::{key}")
            index = BackendIndex(key, use_out_as_primary=False, device_guard=False, external=True,
                                 index={f.func.name: kernel})
            group = None
        return [Snippet(s.title, s.file, as_in_file(s.code)) for s in self._kernel_declarations(f, group, index)]
