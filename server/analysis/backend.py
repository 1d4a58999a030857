"""Queries on a backend yaml (gen_backend_stubs' input) resolved against native_functions.yaml.

Hover on an op (the method the backend must implement, and whether it is
defined), hover on a top-level key, completion of `name.overload` in the op
lists, go to definition of an op (its entry in native_functions.yaml), and
the kernel definitions found in the backend's C++ files.

Positions are 0-based (line, column in code points). Code generation is a
layer above analysis, so the generated declaration comes from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..frozen import record
from ..index.backend import BackendSnapshot
from ..index.native import NativeSnapshot
from ..model.backend import ListedOp
from ..releases import migration_note, schema_change_note
from ..text import Span
from . import vendor as vendor_query
from .completion import OP, Candidate
from .definition import declaration_span, find_op
from .hover import HoverText, function_summary
from .lazy import LazySettings

# Sections whose items are op names, in the order a backend yaml usually has them.
OP_SECTIONS = ("supported", "autograd", "full_codegen", "symint", "ir_gen")
# Sections whose ops gen_lazy_tensor generates code for (IR node classes; kernels too for full_codegen).
LAZY_SECTIONS = ("full_codegen", "ir_gen")

BACKEND_KEYS: dict[str, str] = {
    "backend": "the dispatch key the kernels register to (an out-of-tree key such as `XLA` or `PrivateUse1`); "
               "required",
    "class_name": "the C++ class whose static methods are the kernels; default `<backend>NativeFunctions`",
    "cpp_namespace": "the C++ namespace of that class (at most two levels, e.g. `torch_xla`); required",
    "use_out_as_primary": "true: the out= kernel is the one to write, and functional/in-place variants without a "
                          "kernel get generated wrappers around it; false (default): the functional kernel is",
    "device_guard": "true: the generated registration wrappers set a device guard from the arguments; "
                    "default false",
    "supported": "ops whose kernels the backend implements, registered to the backend key",
    "autograd": "ops whose kernels handle autograd themselves, registered to `Autograd<backend>`",
    "symint": "ops (also listed above) whose kernels take SymInt arguments as `c10::SymInt` (kernel name "
              "`<name>_symint`)",
    "full_codegen": "ops whose kernels gen_lazy_tensor generates (lazy tensor backends); registered like supported",
    "ir_gen": "ops gen_lazy_tensor generates IR classes for, without kernels",
    "non_native": "ops gen_lazy_tensor declares that are not in native_functions.yaml",
}


def listed_op_at(snapshot: BackendSnapshot, line: int, col: int) -> ListedOp | None:
    if snapshot.vendor is not None:
        return vendor_query.listed_op_at(snapshot.vendor.yaml, line, col)
    yaml = snapshot.yaml
    if yaml is None:
        return None
    for section in (yaml.supported, yaml.full_codegen, yaml.autograd, yaml.symint, yaml.ir_gen):
        for item in section:
            if item.span.contains(line, col):
                return item
    return None


def key_at(snapshot: BackendSnapshot, line: int, col: int) -> tuple[str, Span] | None:
    yaml = snapshot.yaml
    if yaml is None:
        return None
    return next(((k, s) for k, s in yaml.keys if s.contains(line, col)), None)


def kernel_of(snapshot: BackendSnapshot, item: ListedOp) -> tuple[str, str | None] | None:
    """The kernel name the op's listing makes the backend implement, and the class it belongs to."""
    resolved = snapshot.resolved
    if resolved is None or item.name is None:
        return None
    kernels = resolved.autograd_kernels if item.section == "autograd" else resolved.forward_kernels
    meta = kernels.get(item.name) or resolved.forward_kernels.get(item.name) or resolved.autograd_kernels.get(item.name)
    return (meta.kernel, resolved.class_name) if meta is not None else None


def dispatch_key_of(snapshot: BackendSnapshot, item: ListedOp) -> str | None:
    yaml = snapshot.yaml
    if yaml is None or not isinstance(yaml.backend.value, str):
        return None
    backend = yaml.backend.value
    return f"Autograd{backend}" if item.section == "autograd" else backend


@record
class KernelDefinition:
    path: str
    line: int
    col: int  # where the kernel's name starts


def declaration_markdown(native: NativeSnapshot, op: str, key: str) -> str:
    """Markdown: the declaration the backend's <Key>NativeFunctions.h gets for the op (opgen explain --backend)."""
    snippets = native.explainer.explain(op, key)
    return "\n\n".join(f"**{s.title}** ({s.file})\n```cpp\n{s.code}\n```" for s in snippets)


def hover(snapshot: BackendSnapshot, native: NativeSnapshot | None, line: int, col: int,
          definitions: Callable[[str, str], Sequence[KernelDefinition] | None] | None = None,
          lazy: LazySettings | None = None) -> HoverText | None:
    """Hover on a listed op or a top-level key.

    definitions(class name, kernel): where the kernel is defined; None when no C++ files are known.
    lazy: with it, a full_codegen / ir_gen op shows what gen_lazy_tensor generates for it (analysis/lazy/hover.py).
    """
    if snapshot.vendor is not None:
        return vendor_query.hover(snapshot.vendor.yaml, native, line, col)
    found = key_at(snapshot, line, col)
    if found is not None:
        key, span = found
        what = BACKEND_KEYS.get(key)
        return HoverText(f"**{key}**: {what}" if what else f"`{key}`: not a key of backend yamls", span)
    item = listed_op_at(snapshot, line, col)
    if item is None or item.text is None:
        return None
    if native is None:
        return HoverText(f"**{item.text}**: no native_functions.yaml is known to look it up in", item.span)
    op = find_op(native, item.text)
    if op is None:
        moved = migration_note(str(item.name) if item.name is not None else item.text, native.release)
        return HoverText(f"**{item.text}**: " + (moved or "native_functions.yaml declares no such operator"),
                         item.span)
    parts = []
    changed = schema_change_note(str(op.function.func.name), native.release)
    if changed is not None:
        parts.append(f"In {native.release}: {changed}.")
    kernel = kernel_of(snapshot, item)
    dispatch_key = dispatch_key_of(snapshot, item)
    if kernel is not None:
        name, class_name = kernel
        owner = f"{class_name}::" if class_name else ""
        who = "gen_lazy_tensor generates" if item.section == "full_codegen" else "The backend implements"
        parts.append(f"{who} `{owner}{name}`" + (f" (registered to `{dispatch_key}`)" if dispatch_key else "") + ".")
        if definitions is not None and class_name and item.section != "full_codegen":
            places = definitions(class_name, name)
            if places is None:
                parts.append("No C++ files are known to look for its definition (setting `opgen.implPaths`).")
            elif places:
                shown = ", ".join(f"`{p.path}:{p.line + 1}`" for p in places)
                parts.append(f"Defined in {shown}.")
            else:
                parts.append("**Not defined** in the backend's C++ files.")
    if dispatch_key:
        code = declaration_markdown(native, item.text, dispatch_key)
        if code:
            parts.append(code)
    if lazy is not None and item.section in LAZY_SECTIONS and snapshot.resolved is not None:
        from .lazy.hover import lazy_hover  # (loaded with the first lazy op hovered)

        code = lazy_hover(op.function, item, snapshot.resolved, lazy, native.release)
        if code:
            parts.append(code)
    parts.append(function_summary(op.function))
    return HoverText("\n\n".join(parts), item.span)


def definition(snapshot: BackendSnapshot, native: NativeSnapshot | None, line: int, col: int) -> Span | None:
    """Where native_functions.yaml declares the op listed under the cursor (a span in that file)."""
    item = listed_op_at(snapshot, line, col)
    if item is None or item.text is None or native is None:
        return None
    op = find_op(native, item.text)
    return declaration_span(native, op) if op is not None else None


# ---------------------------------------------------------------- completion

_ITEM = re.compile(r"(\s*)-\s+([\w.]*)\Z")
_FUNC_ITEM = re.compile(r"\s*-\s+func:\s*([\w.]*)\Z")
_INLINE = re.compile(r"([A-Za-z_]\w*):\s*\[(?:[^\]]*,)?\s*([\w.]*)\Z")
_TOP_KEY = re.compile(r"([A-Za-z_]\w*)\s*:")


def section_of(lines: Sequence[str], line: int) -> str | None:
    """The top-level key whose block holds `line` (the closest key at column 0 above it)."""
    for i in range(line - 1, -1, -1):
        text = lines[i]
        if not text or text[0] in " \t#-":
            continue
        m = _TOP_KEY.match(text)
        return m.group(1) if m else None
    return None


def complete(lines: Sequence[str], line: int, col: int, native: NativeSnapshot | None) -> list[Candidate]:
    """`name.overload` of every operator, with its schema, on an item of an op list."""
    if native is None or not 0 <= line < len(lines):
        return []
    prefix = lines[line][:col]
    func = _FUNC_ITEM.match(prefix)
    if func is not None:  # a vendor file's `- func: name` (or one of a native_functions.yaml-like list)
        if section_of(lines, line) in vendor_query.CUSTOM_SECTIONS:
            return []
        section, word = None, func.group(1)
    elif (m := _ITEM.match(prefix)) is not None:
        section = section_of(lines, line)
        word = m.group(2)
    else:
        m = _INLINE.match(prefix)
        if m is None:
            return []
        section, word = m.group(1), m.group(2)
    if func is None and section not in OP_SECTIONS + vendor_query.OP_SECTIONS:
        return []
    replace = Span(line, col - len(word), line, col)
    out = []
    for op in native.functions.ops:
        name = str(op.function.func.name)
        out.append(Candidate(name, OP, str(op.function.func), f"`{op.function.func}`", name, replace,
                             ("1" if op.generated else "0") + name))
    return out


# ---------------------------------------------------------------- kernel definitions in C++ files

def kernel_definitions(text: str, class_name: str) -> dict[str, list[tuple[int, int]]]:
    """`Class::kernel(` occurrences in C++ text (torchgen's missing-kernel check counts them the same way),
    by kernel name, with (line, column of the kernel name)."""
    out: dict[str, list[tuple[int, int]]] = {}
    if class_name not in text:
        return out
    pattern = re.compile(rf"\b{re.escape(class_name)}::(\w+)\s*\(")
    line, line_start, scanned = 0, 0, 0
    for m in pattern.finditer(text):
        start = m.start(1)
        line += text.count("\n", scanned, start)
        line_start = text.rfind("\n", 0, start) + 1
        scanned = start
        out.setdefault(m.group(1), []).append((line, start - line_start))
    return out
