"""Rename and references across an operator's files: native_functions.yaml, derivatives.yaml, deprecated.yaml,
backend yamls and the C++ kernels the kernel index knows.

Three kinds of symbol, each found from any place that names it:

- an operator (`OPERATOR`): the base name of a family, `add` of `add.Tensor`, `add_.Tensor` (in-place),
  `add.out` and `_foo_functional`; a rename replaces the base and keeps the suffix and overload;
- an overload (`OVERLOAD`): `Tensor` of the `add` family; `Tensor_out` (the out= overload torchgen derives
  for autogen) follows it, so every occurrence replaces only the `Tensor` part;
- a kernel (`KERNEL`): a dispatch value, with its C++ definitions and declarations (TORCH_IMPL_FUNC for a
  structured one) and its qualified call sites (`native::name`).

An operator's rename also carries the names torchgen derives from it in C++: the implicit
CompositeImplicitAutograd kernel of an entry without a dispatch table (named after the op), the
TORCH_META_FUNC(2) of a structured group, qualified calls of the generated `at::` functions and
`at::_ops::` structs, and the `#include`s of its generated per-operator headers (`ATen/ops/add_native.h`).
An overload's carries its TORCH_META_FUNC2 and `at::_ops::` structs.

Every occurrence is a span whose text is exactly the old name: the edit replaces it with the new name.
Pure: texts, the native snapshot and the kernel index in, spans and reasons out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from ..frozen import record
from ..index.documents import PlacedEntry
from ..index.kernels import KernelIndex
from ..index.native import NativeSnapshot
from ..model.cpp_names import identifier_problem, latin1_problem
from ..model.lower import LoweredEntry
from ..model.native_function import NativeFunctionsGroup
from ..syntax.cpp_scan import DECLARATION, DEFINITION, IMPL, META, blank_comments_and_literals
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from ..text import LineIndex, Span
from . import cursor
from .backend import kernel_definitions

OPERATOR = "operator"
OVERLOAD = "overload"
KERNEL = "kernel"

NATIVE_NAMESPACE = "at::native"
# The suffixes of a base name that torchgen reads as part of the operator's name, not of its base.
INPLACE = "_"
FUNCTIONAL = "_functional"
OUT_OVERLOAD = "_out"  # an autogen out= overload: `<functional overload>_out`


@record
class NameParts:
    """An operator name as written (`add_.Tensor`): where its base and its overload are, as offsets in it."""

    base: str  # without the in-place or _functional suffix
    base_start: int
    overload: str
    overload_start: int  # -1 when there is no overload
    head_end: int  # where the name before the '.' ends (after an in-place or _functional suffix)
    dunder: bool = False

    @property
    def base_end(self) -> int:
        return self.base_start + len(self.base)


_OP_NAME = re.compile(r"[A-Za-z_]\w*(?:\.\w+)?")


def split_name(text: str, start: int = 0) -> NameParts | None:
    """The parts of the operator name written at text[start:] (up to a '(' or the end), None if it is none."""
    m = _OP_NAME.match(text, start)
    if m is None:
        return None
    head, _, overload = m.group(0).partition(".")
    overload_start = start + len(head) + 1 if overload else -1
    if len(head) > 4 and head.startswith("__") and head.endswith("__"):
        return NameParts(head, start, overload, overload_start, start + len(head), dunder=True)
    base = head
    if head.endswith(FUNCTIONAL) and len(head) > len(FUNCTIONAL):
        base = head[:-len(FUNCTIONAL)]
    elif head.endswith(INPLACE) and len(head) > 1:
        base = head[:-1]
    return NameParts(base, start, overload, overload_start, start + len(head))


@record
class Target:
    """What a rename or a search for references is about."""

    kind: str  # OPERATOR, OVERLOAD or KERNEL
    name: str  # the base, the overload or the kernel name
    span: Span  # where it is written under the cursor (the part a rename replaces)
    base: str = ""  # OVERLOAD: the family's base
    namespace: str = ""  # KERNEL: its C++ namespace

    def describe(self) -> str:
        if self.kind == OPERATOR:
            return f"operator {self.name}"
        if self.kind == OVERLOAD:
            return f"overload {self.base}.{self.name}"
        return f"kernel {self.namespace}::{self.name}"


def _name_spans(parts: NameParts, line: int, col: int) -> tuple[Span, Span | None]:
    """(base span, overload span) of a name written at (line, col) on one line."""
    base = Span.on_line(line, col + parts.base_start, col + parts.base_end)
    if parts.overload_start < 0:
        return base, None
    return base, Span.on_line(line, col + parts.overload_start, col + parts.overload_start + len(parts.overload))


def _target_of(parts: NameParts, line: int, col: int, at: int) -> Target | None:
    """The target the cursor (column `at`) is on in a name written at (line, col)."""
    base, overload = _name_spans(parts, line, col)
    if overload is not None and overload.start_col <= at <= overload.end_col:
        return Target(OVERLOAD, parts.overload, overload, base=parts.base)
    # (the whole head: a cursor on the in-place `_` is on the operator too)
    if base.start_col <= at <= col + parts.head_end and not parts.dunder:
        return Target(OPERATOR, parts.base, base)
    return None


# ---------------------------------------------------------------- occurrences in native_functions.yaml

@record
class Written:
    """An operator name written in a yaml: its parts and where it starts (absolute, one line)."""

    parts: NameParts
    line: int
    col: int  # what parts' offsets count from
    key: str = ""  # native_functions.yaml: the entry key it is written under


def _scalar_names(scalar: YScalar, entry_line: int, key: str) -> Iterator[Written]:
    if not isinstance(scalar.value, str) or not ScalarText(scalar).exact:
        return
    origin = ScalarText(scalar).span(0, 0).shifted(entry_line)
    if key == "func":
        head = scalar.value.split("(", 1)[0]
        starts = [len(head) - len(head.lstrip())]
    else:
        starts = [start for _piece, start, _end in cursor.pieces(scalar.value)]
    for start in starts:
        parts = split_name(scalar.value, start)
        if parts is not None:
            yield Written(parts, origin.start_line, origin.start_col, key)


def native_names(entry: PlacedEntry) -> Iterator[Written]:
    """The operator names an entry writes: its func: name, its structured_delegate and autogen values."""
    mapping = entry.result.mapping
    if mapping is None:
        return
    for key in ("func", "structured_delegate", "autogen"):
        node = mapping.value(key)
        if isinstance(node, YScalar):
            yield from _scalar_names(node, entry.line, key)


@record
class KernelWritten:
    """A kernel named in a dispatch table: its name, namespace and where the name is (absolute)."""

    name: str
    namespace: str
    span: Span


def dispatch_kernels(entry: PlacedEntry) -> Iterator[KernelWritten]:
    mapping = entry.result.mapping
    table = mapping.value("dispatch") if mapping is not None else None
    if not isinstance(table, YMap):
        return
    value = entry.result.value
    # The C++ namespace torchgen gives each kernel (`custom::k` is custom::native::k), by the kernel's name.
    namespaces = {m.kernel: m.cpp_namespace for _key, m in value.metadata} if isinstance(value, LoweredEntry) else {}
    for _key, v in table.pairs:
        if not (isinstance(v, YScalar) and isinstance(v.value, str) and ScalarText(v).exact):
            continue
        written = v.value.strip()
        namespace, _, name = written.rpartition("::")
        start = v.value.rfind(name)
        if not name:
            continue
        span = ScalarText(v).span(start, start + len(name)).shifted(entry.line)
        yield KernelWritten(name, namespaces.get(name) or namespace or NATIVE_NAMESPACE, span)


def derived(snapshot: NativeSnapshot, target: Target) -> Target:
    """An `<overload>_out` whose family has `<overload>` stands for that overload (it is derived from it)."""
    if target.kind != OVERLOAD or not target.name.endswith(OUT_OVERLOAD):
        return target
    stem = target.name[:-len(OUT_OVERLOAD)]
    if not any(op.function.func.name.name.base == target.base and op.function.func.name.overload_name == stem
               for op in snapshot.functions.ops):
        return target
    span = target.span
    return Target(OVERLOAD, stem, Span.on_line(span.start_line, span.start_col, span.start_col + len(stem)),
                  base=target.base)


def native_target(snapshot: NativeSnapshot, line: int, col: int) -> Target | None:
    """The operator, overload or kernel under the cursor in native_functions.yaml."""
    entry = cursor.entry_at(snapshot.document, line)
    if entry is None:
        return None
    for written in native_names(entry):
        if written.line != line:
            continue
        found = _target_of(written.parts, written.line, written.col, col)
        if found is not None:
            return derived(snapshot, found)
    for kernel in dispatch_kernels(entry):
        if kernel.span.contains(line, col):
            return Target(KERNEL, kernel.name, kernel.span, namespace=kernel.namespace)
    return None


def _matches(parts: NameParts, target: Target) -> Iterator[int]:
    """Where (offsets in the written name) the target's name is: the base, the overload or its `_out` prefix."""
    if parts.dunder:
        return
    if target.kind == OPERATOR and parts.base == target.name:
        yield parts.base_start
    elif target.kind == OVERLOAD and parts.base == target.base and parts.overload_start >= 0 and \
            parts.overload in (target.name, target.name + OUT_OVERLOAD):
        yield parts.overload_start


def _written_spans(written: Iterable[Written], target: Target) -> list[Span]:
    out = []
    for w in written:
        for start in _matches(w.parts, target):
            out.append(Span.on_line(w.line, w.col + start, w.col + start + len(target.name)))
    return out


def native_occurrences(snapshot: NativeSnapshot, target: Target) -> list[Span]:
    """Every place of native_functions.yaml naming the target, in file order."""
    out: list[Span] = []
    for entry in snapshot.document.entries:
        if target.name not in entry.result.text:  # (most entries: a substring test, not a parse of their names)
            continue
        if target.kind == KERNEL:
            out.extend(k.span for k in dispatch_kernels(entry)
                       if k.name == target.name and k.namespace == target.namespace)
        else:
            out.extend(_written_spans(native_names(entry), target))
    return sorted(out)


def declaration(snapshot: NativeSnapshot, target: Target) -> Span | None:
    """Where the target is declared: the first func: naming it (a kernel: its first dispatch value)."""
    for entry in snapshot.document.entries:
        if target.name not in entry.result.text:
            continue
        if target.kind == KERNEL:
            spans = [k.span for k in dispatch_kernels(entry) if k.name == target.name and k.namespace == target.namespace]
        else:
            spans = _written_spans([w for w in native_names(entry) if w.key == "func"], target)
        if spans:
            return spans[0]
    return None


# ---------------------------------------------------------------- other yamls (line by line)

DERIVATIVES = "derivatives"
DEPRECATED = "deprecated"
BACKEND = "backend"

_NAME_LINE = re.compile(r"^(\s*-?\s*name:\s*['\"]?)(?=[A-Za-z_][\w.]*\s*\()")
_ATEN_LINE = re.compile(r"^(\s*aten:\s*['\"]?)(?=[A-Za-z_][\w.]*\s*\()")
_LIST_ITEM = re.compile(r"^(\s*-\s+['\"]?)(?=[A-Za-z_]\w*(?:\.\w+)?['\"]?\s*(?:#.*)?$)")


def yaml_names(kind: str, text: str) -> Iterator[Written]:
    """The operator names a derivatives.yaml (`name:`), deprecated.yaml (`name:`, `aten:`) or backend yaml
    (list items: supported, autograd, full_codegen, ...) writes."""
    patterns = {DERIVATIVES: (_NAME_LINE,), DEPRECATED: (_NAME_LINE, _ATEN_LINE), BACKEND: (_LIST_ITEM,)}[kind]
    for number, line in enumerate(text.split("\n")):
        for pattern in patterns:
            m = pattern.match(line)
            if m is None:
                continue
            parts = split_name(line, m.end())
            if parts is not None and pattern is _ATEN_LINE:
                parts = _call_name(parts)
            if parts is not None:
                yield Written(parts, number, 0)


def _call_name(parts: NameParts) -> NameParts:
    """deprecated.yaml's `aten:` calls the C++ function: an out= op's is `<base>_out`."""
    if parts.overload_start < 0 and parts.base.endswith(OUT_OVERLOAD) and len(parts.base) > len(OUT_OVERLOAD):
        return NameParts(parts.base[:-len(OUT_OVERLOAD)], parts.base_start, "", -1, parts.head_end)
    return parts


def yaml_target(kind: str, text: str, line: int, col: int) -> Target | None:
    lines = text.split("\n")
    for written in yaml_names(kind, lines[line] if 0 <= line < len(lines) else ""):
        found = _target_of(written.parts, line, 0, col)
        if found is not None:
            return found
    return None


def yaml_occurrences(kind: str, text: str, target: Target) -> list[Span]:
    if target.kind == KERNEL:
        return []
    return _written_spans(yaml_names(kind, text), target)


# ---------------------------------------------------------------- C++

@record
class CppNames:
    """What to look for in C++ for a target: the names of kernels (and the meta functions' macros) to edit."""

    kernels: tuple[tuple[str, str], ...]  # (namespace, name) of plain or TORCH_IMPL_FUNC kernels
    metas: tuple[tuple[str, str], ...] = ()  # (base, overload) of TORCH_META_FUNC(2)
    calls: tuple[str, ...] = ()  # names of the generated at:: functions (operators)
    ops: tuple[tuple[str, int], ...] = ()  # the at::_ops:: structs (unambiguous names), where the old name is in each
    headers: str = ""  # an operator: the base of the generated ATen/ops/<base>*.h headers its rename renames
    other_bases: frozenset[str] = frozenset()  # (the other operators' bases: their headers are not its)


def _implicit_kernels(snapshot: NativeSnapshot, base: str) -> list[str]:
    """The kernels of the family's entries without a dispatch table: named after the operator."""
    out: list[str] = []
    for entry in snapshot.document.entries:
        value = entry.result.value
        mapping = entry.result.mapping
        if not isinstance(value, LoweredEntry) or value.function is None or mapping is None:
            continue
        if mapping.value("dispatch") is not None or value.function.structured_delegate is not None:
            continue
        if value.function.func.name.name.base != base or value.function.func.name.name.dunder_method:
            continue
        out.extend(m.kernel for _key, m in value.metadata if m.kernel.startswith(base) and m.kernel not in out)
    return out


def cpp_names(snapshot: NativeSnapshot, target: Target) -> CppNames:
    if target.kind == KERNEL:
        return CppNames(((target.namespace, target.name),))
    if target.kind == OVERLOAD:
        metas = tuple((str(g.functional.func.name.name), target.name) for g in _groups(snapshot, target.base)
                      if g.functional.func.name.overload_name == target.name)
        # (`add_.Tensor` is at::_ops::add__Tensor: the overload starts after the head and its '_')
        ops = tuple((op.function.func.name.unambiguous_name(), len(str(op.function.func.name.name)) + 1)
                    for op in snapshot.functions.ops if op.function.func.name.name.base == target.base
                    and op.function.func.name.overload_name in (target.name, target.name + OUT_OVERLOAD))
        return CppNames((), metas, ops=ops)
    metas = tuple((str(g.functional.func.name.name), g.functional.func.name.overload_name)
                  for g in _groups(snapshot, target.name))
    heads = sorted({str(op.function.func.name.name) for op in snapshot.functions.ops
                    if op.function.func.name.name.base == target.name and not op.function.func.name.name.dunder_method})
    # (the generated at:: functions: the op's own, its out= forms and the SymInt one; an in-place head has none)
    calls = tuple(sorted({h + suffix for h in heads for suffix in ("", "_out", "_outf", "_symint")
                          if suffix == "" or not h.endswith(INPLACE)}))
    family = [op.function.func.name for op in snapshot.functions.ops
              if op.function.func.name.name.base == target.name and not op.function.func.name.name.dunder_method]
    others = frozenset(op.function.func.name.name.base for op in snapshot.functions.ops) - {target.name}
    return CppNames(tuple((NATIVE_NAMESPACE, k) for k in _implicit_kernels(snapshot, target.name)), metas, calls,
                    tuple((name.unambiguous_name(), 0) for name in family), target.name, others)


def _groups(snapshot: NativeSnapshot, base: str) -> list[NativeFunctionsGroup]:
    return [g for g in snapshot.functions.groups if isinstance(g, NativeFunctionsGroup) and g.structured
            and g.functional.func.name.name.base == base and not g.functional.func.name.name.inplace]


class Source:
    """A C++ file's text, its lines and offsets."""

    __slots__ = ("text", "lines", "index")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.index = LineIndex(text)

    def position(self, offset: int) -> tuple[int, int]:
        return self.index.position(offset)


_MACRO_ARGS = re.compile(r"\w+\s*\(\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)")


def cpp_occurrences(index: KernelIndex, names: CppNames, target: Target, text_of: Callable[[str], str | None]
                    ) -> dict[str, list[Span]]:
    """path -> the spans to edit in each C++ file: kernel definitions and declarations, TORCH_IMPL_FUNC and
    TORCH_META_FUNC(2) arguments, and qualified calls. text_of(path) reads a file (the editor's text when open)."""
    found: dict[str, set[Span]] = {}
    texts: dict[str, Source | None] = {}

    def lines(path: str) -> Source | None:
        if path not in texts:
            text = text_of(path)
            texts[path] = Source(text) if text is not None else None
        return texts[path]

    old = target.name
    for namespace, kernel in names.kernels:
        for hit in index.find(kernel, (DEFINITION, DECLARATION)):
            if hit.symbol.namespace == namespace:
                found.setdefault(hit.path, set()).add(_part(hit.symbol.line, hit.symbol.col, kernel, old))
        for hit in index.find(kernel, (IMPL,)):
            at = _macro_arg(lines(hit.path), hit.symbol.line, hit.symbol.col, 0, kernel)
            if at is not None:
                found.setdefault(hit.path, set()).add(_part(at[0], at[1], kernel, old))
    for base, overload in names.metas:
        meta = f"{base}_{overload}" if overload else base
        for hit in index.find(meta, (META,)):
            which = 1 if target.kind == OVERLOAD else 0
            at = _macro_arg(lines(hit.path), hit.symbol.line, hit.symbol.col, which,
                            overload if which else base)
            if at is not None:
                found.setdefault(hit.path, set()).add(Span.on_line(at[0], at[1], at[1] + len(old)))
    qualified = {("native::", k): k.find(old) for _ns, k in names.kernels}
    qualified.update({("at::", c): c.find(old) for c in names.calls})
    qualified.update({("_ops::", op): at for op, at in names.ops})
    if qualified:
        for path, spans in _qualified_calls(index, qualified, len(old), lines).items():
            found.setdefault(path, set()).update(spans)
    if names.headers:
        for path, spans in _header_includes(index, names.headers, names.other_bases, lines).items():
            found.setdefault(path, set()).update(spans)
    return {path: sorted(spans) for path, spans in sorted(found.items())}


def _part(line: int, col: int, written: str, old: str) -> Span:
    """The old name's place in a name written at (line, col) that starts with it."""
    return Span.on_line(line, col + written.find(old), col + written.find(old) + len(old))


def _macro_arg(lines: Source | None, line: int, col: int, which: int, expected: str) -> tuple[int, int] | None:
    """(line, column) of the `which`-th argument of the macro invoked at (line, col), when it is `expected`."""
    if lines is None or line >= len(lines.lines):
        return None
    text = lines.lines[line]
    m = _MACRO_ARGS.match(text, col)
    if m is None or m.group(which + 1) != expected:
        return None
    return line, m.start(which + 1)


def _qualified_calls(index: KernelIndex, names: dict[tuple[str, str], int], width: int,
                     lines: Callable[[str], Source | None]) -> dict[str, list[Span]]:
    """The old name's span (at names[(prefix, name)] in the name, `width` long) in each `at::native::name` /
    `native::name`, `at::name` and `at::_ops::name` / `_ops::name` of the indexed sources (comments and strings
    left out)."""
    wanted = {name for _prefix, name in names}
    pattern = re.compile(r"(?<![\w:])(?:(?:at::)?(native::|_ops::)|at::)(" +
                         "|".join(sorted(map(re.escape, wanted), key=len, reverse=True)) + r")\b")
    out: dict[str, list[Span]] = {}
    needles = tuple(wanted)
    for path in sorted(index.files):
        if not index.files[path].symbols:
            continue
        found = lines(path)
        if found is None or not any(n in found.text for n in needles):
            continue
        code = blank_comments_and_literals(found.text)
        for m in pattern.finditer(code):
            at = names.get((m.group(1) or "at::", m.group(2)))
            if at is None:
                continue
            line, col = found.position(m.start(2) + at)
            out.setdefault(path, []).append(Span.on_line(line, col, col + width))
    return out


# `#include <ATen/ops/add_native.h>`: a generated per-operator header, named after the operator's base.
_OPS_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]ATen/ops/(\w+)\.h[>"]', re.M)
# What follows the base in those names: nothing (the at:: functions), _native, _ops, _meta and
# _<dispatch key, lower case>_dispatch.
_OPS_HEADER_SUFFIX = re.compile(r"(?:_native|_ops|_meta|_[a-z0-9]+_dispatch)?")


def operator_header(stem: str, base: str, other_bases: frozenset[str]) -> bool:
    """Whether ATen/ops/<stem>.h is a header torchgen generates for the operator `base` (not another op's:
    `add_relu_native.h` is add_relu's)."""
    return stem.startswith(base) and stem not in other_bases and \
        _OPS_HEADER_SUFFIX.fullmatch(stem, len(base)) is not None


def _header_includes(index: KernelIndex, base: str, other_bases: frozenset[str], lines: Callable[[str], Source | None]
                     ) -> dict[str, list[Span]]:
    """The base's span in each `#include <ATen/ops/<base>*.h>` of the operator's generated headers."""
    out: dict[str, list[Span]] = {}
    needle = f"ATen/ops/{base}"
    for path in sorted(index.files):
        found = lines(path) if index.files[path].symbols else None
        if found is None or needle not in found.text:
            continue
        for m in _OPS_INCLUDE.finditer(found.text):
            if operator_header(m.group(1), base, other_bases):
                line, col = found.position(m.start(1))
                out.setdefault(path, []).append(Span.on_line(line, col, col + len(base)))
    return out


# ---------------------------------------------------------------- a backend's C++ kernels

_BACKEND_SETTING = re.compile(r"^(backend|class_name):[ \t]*['\"]?([\w:]+)", re.M)


def backend_class(text: str) -> str | None:
    """The class a backend yaml's kernels are methods of: `class_name`, else `<backend>NativeFunctions`."""
    settings = {m.group(1): m.group(2) for m in _BACKEND_SETTING.finditer(text)}
    if "class_name" in settings:
        return settings["class_name"]
    return f"{settings['backend']}NativeFunctions" if "backend" in settings else None


def backend_kernel_names(snapshot: NativeSnapshot, target: Target) -> frozenset[str]:
    """The names of a backend's kernels an operator's rename changes: torchgen names them after the op's head
    (`add`, `add_`, and `add_out` for an out= op)."""
    if target.kind != OPERATOR:
        return frozenset()
    heads = {str(op.function.func.name.name) for op in snapshot.functions.ops
             if op.function.func.name.name.base == target.name and not op.function.func.name.name.dunder_method}
    return frozenset(h + suffix for h in heads for suffix in ("", "_out", "_symint", "_out_symint"))


def backend_cpp_occurrences(text: str, class_name: str, names: frozenset[str], target: Target) -> list[Span]:
    """The `Class::kernel(` definitions of a backend's C++ file naming the operator."""
    found = kernel_definitions(text, class_name)
    return sorted(_part(line, col, name, target.name) for name in names & found.keys() for line, col in found[name])


# ---------------------------------------------------------------- what a rename may not do

def rename_problem(snapshot: NativeSnapshot, index: KernelIndex | None, target: Target, new: str) -> str | None:
    """Why the target cannot be renamed to `new` (an invalid or colliding name, a broken generated name);
    None when it can."""
    if new == target.name:
        return f"{target.describe()} already has that name"
    what = {OPERATOR: "operator name", OVERLOAD: "overload name", KERNEL: "kernel name"}[target.kind]
    problem = identifier_problem(new, what) or (latin1_problem(new) if target.kind == OPERATOR else None)
    if problem is None and new != new.strip():
        problem = f"the {what} {new!r} has spaces around it"
    if problem is not None:
        return problem
    if target.kind == OPERATOR:
        return _operator_problem(snapshot, target, new)
    if target.kind == OVERLOAD:
        return _overload_problem(snapshot, target, new)
    return _kernel_problem(snapshot, index, target, new)


def _collision(snapshot: NativeSnapshot, renames: dict[str, str]) -> str | None:
    """Why renaming ops (old name -> new name) would collide with an op that stays: the same name, or the same
    name in generated code (`add.Tensor` and `add_Tensor` are both at::_ops::add_Tensor)."""
    kept = [str(op.function.func.name) for op in snapshot.functions.ops if str(op.function.func.name) not in renames]
    names = set(kept)
    generated = {name.replace(".", "_"): name for name in kept}
    for old, new in renames.items():
        if new in names:
            return f"renaming {old} would collide with the existing operator {new}"
        unambiguous = new.replace(".", "_")
        if unambiguous in generated:
            return (f"renaming {old} to {new} would collide with the operator {generated[unambiguous]} in generated "
                    f"code (both are at::_ops::{unambiguous})")
    return None


def _operator_problem(snapshot: NativeSnapshot, target: Target, new: str) -> str | None:
    if new.startswith("__") and new.endswith("__"):
        return f"operator name '{new}' is a dunder method name"
    if new.endswith(INPLACE):
        return f"operator name '{new}' ends with '_', which torchgen reads as the in-place variant of '{new[:-1]}'"
    if new.endswith(FUNCTIONAL):
        return f"operator name '{new}' ends with '_functional', which torchgen reads as a functional variant"
    renames = {}
    for op in snapshot.functions.ops:
        name = op.function.func.name
        if name.name.base == target.name and not name.name.dunder_method:
            renamed = new + (INPLACE if name.name.inplace else FUNCTIONAL if name.name.functional_overload else "")
            renames[str(name)] = f"{renamed}.{name.overload_name}" if name.overload_name else renamed
    problem = _collision(snapshot, renames)
    if problem is not None:
        return problem
    for kernel in _implicit_kernels(snapshot, target.name):
        for entry in snapshot.document.entries:
            for k in dispatch_kernels(entry):
                if k.name == kernel and k.namespace == NATIVE_NAMESPACE:
                    return (f"the kernel at::native::{kernel} is named after the operator (an entry without a dispatch "
                            f"table) and is also named in a dispatch table (line {k.span.start_line + 1}); rename that "
                            "kernel first")
    return None


def _overload_problem(snapshot: NativeSnapshot, target: Target, new: str) -> str | None:
    if new == "default":
        return "the overload name 'default' is reserved (the dispatcher calls an op without overload so)"
    renames = {str(op.function.func.name): f"{op.function.func.name.name}.{new}"
                                              f"{op.function.func.name.overload_name[len(target.name):]}"
               for op in snapshot.functions.ops if op.function.func.name.name.base == target.base
               and op.function.func.name.overload_name in (target.name, target.name + OUT_OVERLOAD)}
    return _collision(snapshot, renames)


def _kernel_problem(snapshot: NativeSnapshot, index: KernelIndex | None, target: Target, new: str) -> str | None:
    for entry in snapshot.document.entries:
        for k in dispatch_kernels(entry):
            if k.name == new and k.namespace == target.namespace:
                return (f"the kernel {target.namespace}::{new} already exists (a dispatch table names it on line "
                        f"{k.span.start_line + 1})")
    if index is not None:
        for hit in index.find(new, (DEFINITION, DECLARATION, IMPL)):
            if hit.symbol.namespace == target.namespace or hit.symbol.kind == IMPL:
                return f"{target.namespace}::{new} is already defined in C++ ({hit.path}:{hit.symbol.line + 1})"
    return None
