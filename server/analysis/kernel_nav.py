"""From a kernel name in a dispatch table to its C++ definitions, and stubs for kernels that are missing.

Pure queries over a native snapshot and a KernelIndex:

- `kernel_at`: the kernel under the cursor in a `dispatch:` table (with its op, keys and namespace);
- `kernel_for_diagnostic`: the kernel an OPG600/OPG601 warning is about;
- `places`: where the index has it (definitions, else declarations);
- `hover_markdown`: where it is defined and the declaration it must have;
- `stub_for` and `stub_file`: the C++ to append for a missing kernel, and the file to append it to
  (the first source file defining kernels of the same op family).

The expected declaration comes from the codegen, a layer above; callers pass it in as text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..frozen import record
from ..index.documents import PlacedEntry
from ..index.kernels import KernelIndex, Located
from ..index.native import NativeSnapshot
from ..model import dispatch as dk
from ..model.lower import LoweredEntry
from ..model.native_function import BackendMetadata, NativeFunction, NativeFunctionsGroup
from ..syntax.cpp_scan import DECLARATION, DEFINITION, IMPL, META, split_parameters
from ..syntax.cpp_types import types_key
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from ..text import Span
from . import cursor

KERNEL = "kernel"  # a dispatch kernel (a function in its namespace, or a structured TORCH_IMPL_FUNC)
META_FUNC = "meta"  # a structured group's TORCH_META_FUNC

HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".cuh")


@record
class KernelRef:
    what: str  # KERNEL or META_FUNC
    function: NativeFunction
    keys: tuple[dk.DispatchKey, ...]  # the dispatch keys registering this kernel (empty for META_FUNC)
    name: str  # the kernel's name, without namespace (META_FUNC: the structured class suffix, e.g. add_Tensor)
    namespace: str  # at::native, at::meta, ...
    structured: bool
    span: Span  # where the name is written in the yaml (absolute)
    macro: str = ""  # META_FUNC: TORCH_META_FUNC(name) or TORCH_META_FUNC2(name, overload)

    @property
    def qualified(self) -> str:
        if self.what == META_FUNC:
            return f"at::meta::structured_{self.name}::meta"
        if self.structured:
            return f"{self.namespace}::structured_{self.name}::impl"
        return f"{self.namespace}::{self.name}"


def _lowered(entry: PlacedEntry) -> tuple[NativeFunction | None, dict[dk.DispatchKey, BackendMetadata]]:
    """The entry's function and kernels (none when it did not lower)."""
    value = entry.result.value
    if not isinstance(value, LoweredEntry):
        return None, {}
    return value.function, dict(value.metadata)


def kernel_at(snapshot: NativeSnapshot, line: int, col: int) -> KernelRef | None:
    """The kernel named under (line, col) in a dispatch table, if any."""
    entry = cursor.entry_at(snapshot.document, line)
    if entry is None or entry.result.mapping is None:
        return None
    table = entry.result.mapping.value("dispatch")
    if not isinstance(table, YMap):
        return None
    function, metadata = _lowered(entry)
    if function is None:
        return None
    rel = line - entry.line
    for k, v in table.pairs:
        if not (isinstance(k, YScalar) and isinstance(v, YScalar) and isinstance(v.value, str)
                and isinstance(k.value, str) and v.span.contains(rel, col)):
            continue
        keys = tuple(key for key in (dk.parse_dispatch_key(name) for name, _, _ in cursor.pieces(k.value))
                     if key is not None and key in metadata)
        if not keys:
            return None
        meta: BackendMetadata = metadata[keys[0]]
        written = v.value.strip()
        name = written.split("::")[-1]
        start = v.value.rfind(name)
        span = ScalarText(v).span(start, start + len(name)).shifted(entry.line)
        return KernelRef(KERNEL, function, keys, meta.kernel, meta.cpp_namespace, meta.structured, span)
    return None


def meta_name(group: NativeFunctionsGroup) -> str:
    return str(group.functional.func.name).replace(".", "_")


def group_of(snapshot: NativeSnapshot, f: NativeFunction) -> NativeFunctionsGroup | None:
    for g in snapshot.functions.groups:
        if isinstance(g, NativeFunctionsGroup) and g.out.func.name == f.func.name:
            return g
    return None


def kernel_declaration(snapshot: NativeSnapshot, ref: KernelRef) -> str:
    """The C++ the codegen declares for the kernel (NativeFunctions.h / NativeMetaFunctions.h)."""
    from ..pieces.dest.native_declarations import (  # the per-op pieces load on first use
        compute_meta_function_declaration,
        compute_native_function_declaration,
    )

    group = group_of(snapshot, ref.function) if ref.structured else None
    try:
        if ref.what == META_FUNC:
            return compute_meta_function_declaration(group, snapshot.release.cpp_spelling) or "" if group is not None else ""
        index = snapshot.functions.backend_indices.get(ref.keys[0]) if ref.keys else None
        if index is None:
            return ""
        return "\n".join(compute_native_function_declaration(group if group is not None else ref.function, index,
                                                              snapshot.release))
    except Exception:  # a model the codegen cannot declare: show what is known without it
        return ""


def kernel_parameters(snapshot: NativeSnapshot, ref: KernelRef) -> str | None:
    """The parameter types of a plain kernel's declaration (cpp_types.types_key), None when not known."""
    from ..pieces.dest.native_declarations import kernel_parameter_types  # the per-op pieces load on first use

    if ref.what == META_FUNC or ref.structured or not ref.keys:
        return None
    index = snapshot.functions.backend_indices.get(ref.keys[0])
    found = (kernel_parameter_types(ref.function, index, snapshot.release.cpp_spelling)
             if index is not None else None)
    return types_key(found) if found is not None else None


def kernel_for_diagnostic(snapshot: NativeSnapshot, code: str, span: Span) -> KernelRef | None:
    """The kernel an OPG600 (missing kernel) or OPG601 (missing meta function) diagnostic is about."""
    if code == "OPG600":
        ref = kernel_at(snapshot, span.start_line, span.start_col)
        if ref is not None:
            return ref
        # The implicit CompositeImplicitAutograd kernel of an entry without a dispatch table.
        entry = cursor.entry_at(snapshot.document, span.start_line)
        if entry is None:
            return None
        function, metadata = _lowered(entry)
        meta = metadata.get(dk.CIA)
        if function is None or meta is None:
            return None
        return KernelRef(KERNEL, function, (dk.CIA,), meta.kernel, meta.cpp_namespace, meta.structured, span)
    if code == "OPG601":
        entry = cursor.entry_at(snapshot.document, span.start_line)
        function, metadata = _lowered(entry) if entry is not None else (None, {})
        group = group_of(snapshot, function) if function is not None else None
        if function is None or group is None:
            return None
        name = group.functional.func.name
        macro = (f"TORCH_META_FUNC2({name.name}, {name.overload_name})" if name.overload_name
                 else f"TORCH_META_FUNC({name.name})")
        keys = tuple(k for k, m in metadata.items() if m.structured)
        return KernelRef(META_FUNC, function, keys, meta_name(group), "at::meta", True, span, macro)
    return None


def places(index: KernelIndex, ref: KernelRef, params: str | None = None) -> tuple[list[Located], list[Located]]:
    """(definitions, declarations) of the kernel in the index; params: its declaration's parameter types
    (cpp_types.types_key), which leave out the C++ overloads of its name that other ops' kernels are."""
    if ref.what == META_FUNC:
        return index.find(ref.name, (META,)), []
    if ref.structured:
        return index.find(ref.name, (IMPL,)), []
    hits = [h for h in index.find(ref.name, (DEFINITION, DECLARATION)) if h.symbol.namespace == ref.namespace
            and (params is None or h.symbol.params is None or h.symbol.params == params)]
    return [h for h in hits if h.symbol.kind == DEFINITION], [h for h in hits if h.symbol.kind == DECLARATION]


def overloads(index: KernelIndex, ref: KernelRef, params: str | None) -> list[Located]:
    """The definitions of the kernel's name in its namespace with other parameter types (other ops' kernels)."""
    if ref.what == META_FUNC or ref.structured or params is None:
        return []
    return [h for h in index.find(ref.name, (DEFINITION,)) if h.symbol.namespace == ref.namespace
            and h.symbol.params is not None and h.symbol.params != params]


def _shown(path: str, root: str | None) -> str:
    if root:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel
    return path


def hover_markdown(ref: KernelRef, index: KernelIndex | None, declaration: str, root: str | None,
                   building: bool = False, params: str | None = None) -> str:
    """Where the kernel is defined (or that it is not) and the declaration it must have (params: its parameter
    types, places)."""
    if ref.what == META_FUNC:
        head = f"**TORCH_META_FUNC** of `{ref.function.func.name}` (`{ref.qualified}`)"
    else:
        keys = ", ".join(str(k) for k in ref.keys)
        kind = "structured kernel (TORCH_IMPL_FUNC)" if ref.structured else "kernel"
        head = f"**{ref.namespace}::{ref.name}**: the {keys} {kind} of `{ref.function.func.name}`"
    lines = [head, ""]
    if index is None:
        lines.append("The kernel index is being built..." if building else
                     "No kernel index: set `opgen.kernelDirs` (or open a PyTorch checkout) to find definitions.")
    else:
        definitions, declarations = places(index, ref, params)
        if definitions:
            lines.append("Defined in:")
            lines.extend(f"- `{_shown(h.path, root)}:{h.symbol.line + 1}`" for h in definitions)
        else:
            lines.append(f"**Not defined** in {', '.join(_shown(r, root) for r in index.roots)}")
        others = overloads(index, ref, params)
        if others:
            lines += ["", "Overloads of the name with other parameters (other ops' kernels):"]
            lines.extend(f"- `{_shown(h.path, root)}:{h.symbol.line + 1}` ({h.symbol.params})" for h in others)
        if declarations:
            lines += ["", "Declared in:"]
            lines.extend(f"- `{_shown(h.path, root)}:{h.symbol.line + 1}`" for h in declarations)
    if declaration:
        lines += ["", "Expected declaration:", "```cpp", declaration.strip("\n"), "```"]
    return "\n".join(lines)


# ---------------------------------------------------------------- stubs

def _split_top(text: str) -> list[str]:
    return split_parameters(text)


def _without_defaults(params: str) -> str:
    return ", ".join(p.split("=", 1)[0].rstrip() for p in _split_top(params))


_METHOD = re.compile(r"\bvoid\s+(impl|meta)\s*\((.*?)\)\s*;", re.S)
_FUNCTION = re.compile(r"^\s*(?:TORCH_API\s+)?(.*?)\s*\b([A-Za-z_]\w*)\s*\((.*)\)\s*;\s*$", re.S)


def _body(ref: KernelRef) -> str:
    what = "meta function" if ref.what == META_FUNC else "kernel"
    return f"  TORCH_CHECK_NOT_IMPLEMENTED(false, \"{ref.name}: the {what} of {ref.function.func.name} is not " \
           f"implemented yet\");\n"


def stub_for(ref: KernelRef, declaration: str) -> str | None:
    """The definition to write for a missing kernel, inside its namespace; None if the declaration is unusable."""
    if ref.what == META_FUNC:
        m = _METHOD.search(declaration)
        if m is None or m.group(1) != "meta":
            return None
        code = f"{ref.macro} ({_without_defaults(m.group(2))}) {{\n{_body(ref)}}}\n"
    elif ref.structured:
        m = _METHOD.search(declaration)
        if m is None or m.group(1) != "impl":
            return None
        code = f"TORCH_IMPL_FUNC({ref.name}) ({_without_defaults(m.group(2))}) {{\n{_body(ref)}}}\n"
    else:
        first = next((d for d in declaration.split("\n") if d.strip()), "")
        m = _FUNCTION.match(first)
        if m is None:
            return None
        code = f"{m.group(1)} {m.group(2)}({_without_defaults(m.group(3))}) {{\n{_body(ref)}}}\n"
    return f"namespace {ref.namespace} {{\n\n{code}\n}} // namespace {ref.namespace}\n"


def stub_file(index: KernelIndex, snapshot: NativeSnapshot, ref: KernelRef) -> str | None:
    """The source file that already defines kernels of the same op family (same base name), preferring
    files with kernels of the same dispatch key (a CUDA kernel goes beside the other CUDA kernels)."""
    base = ref.function.func.name.name.base
    same_key: list[str] = []
    any_key: list[str] = []
    for op in snapshot.functions.ops:
        if op.generated or op.function.func.name.name.base != base:
            continue
        for key, meta in op.metadata:
            for hit in index.find(meta.kernel, (IMPL,) if meta.structured else (DEFINITION,)):
                if not hit.path.endswith(HEADER_SUFFIXES):
                    (same_key if key in ref.keys else any_key).append(hit.path)
    for path in same_key + any_key:
        return path
    return None


def append_point(lines: Sequence[str]) -> tuple[int, int, str]:
    """(line, column, separator) to append a block at the end of a file given as its lines."""
    if not lines:
        return 0, 0, ""
    last = len(lines) - 1
    text = lines[last]
    if text == "":  # the file ends with a newline
        return last, 0, "\n"
    return last, len(text), "\n\n"


def namespace_close(lines: Sequence[str], namespace: str) -> int | None:
    """The line of the last `} // namespace <namespace>` (a definition goes just before it), if any."""
    if not namespace:
        return None
    pattern = re.compile(rf"^\}}\s*//\s*namespace\s+{re.escape(namespace)}\s*$")
    for i in range(len(lines) - 1, -1, -1):
        if pattern.match(lines[i].strip()):
            return i
    return None
