"""A new operator, scaffolded: from one functional schema, every edit a PyTorch developer makes by hand.

- native_functions.yaml: the functional, in-place and out= entries (the in-place one when the op takes
  `Tensor self` and returns one Tensor, the out= one when it returns only Tensors), plain or structured
  (`structured_delegate` to the out= entry), with the tags asked for;
- the C++ kernel stubs, their declarations computed by the same pieces that write NativeFunctions.h
  (kernel_nav.kernel_declaration and stub_for, as the hover and the missing-kernel fix use them), in the source
  file given (a new file gets the includes a kernel file of ATen has);
- optionally a derivatives.yaml entry (`not_implemented` for each differentiable input) and the backend
  yaml's `supported:` line.

Pure: texts in, insertions out (`Insertion`: a point of a file and the text put there). A request the codegen
would reject comes back as a ScaffoldError naming why.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence

from ..frozen import record
from ..index.backend import check_backend
from ..index.native import NativeParser, NativeSnapshot
from ..model.lower import LoweredEntry
from ..model.schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, SchemaKind, Type
from ..model.schema_parser import parse_schema
from ..releases import Release
from ..text import Span
from . import cursor
from .backend_kernels import expected_kernels, stub
from .kernel_nav import KERNEL, META_FUNC, KernelRef, append_point, group_of, kernel_declaration, meta_name, stub_for

DEFAULT_DISPATCH = ("CPU",)


class ScaffoldError(ValueError):
    """A request that cannot be scaffolded; the message says why."""


@record
class ScaffoldRequest:
    schema: str  # the functional schema, e.g. "my_op(Tensor self, Scalar alpha=1) -> Tensor"
    structured: bool = False
    tags: tuple[str, ...] = ()
    dispatch: tuple[str, ...] = DEFAULT_DISPATCH  # the dispatch keys the kernels are registered for
    derivatives: bool = False
    backend_op: bool = False  # add the op to the backend yaml's supported: list


@record
class TreeTexts:
    """The files the scaffold edits, as they are now (None: the file does not exist yet)."""

    native_path: str
    native_text: str
    valid_tags: frozenset[str]  # the names tags.yaml defines
    kernel_path: str
    kernel_text: str | None
    derivatives_path: str | None = None
    derivatives_text: str | None = None
    backend_path: str | None = None
    backend_text: str | None = None
    # The backend's C++ kernel file (its stubs, methods of <Backend>NativeFunctions, are appended; None: none).
    backend_kernel_path: str | None = None
    backend_kernel_text: str | None = None
    # The functional entry is already there, without kernels: (line, column) where its last key ends. Its keys
    # are kept; the dispatch (or structured_delegate) goes after them, the other entries after it.
    entry_end: tuple[int, int] | None = None


@record
class Insertion:
    """Put `text` at (line, col) of `path`, replacing up to (end_line, end_col); `create`: the file is new."""

    path: str
    line: int
    col: int
    text: str
    create: bool = False
    end_line: int | None = None
    end_col: int | None = None


@record
class Scaffold:
    op: str  # the functional op's name
    entries: tuple[str, ...]  # the names of the entries written (functional, in-place, out=)
    insertions: tuple[Insertion, ...]


# ---------------------------------------------------------------- schemas

_DECL = re.compile(r"([^(]+)\((.*)\) -> (.*)\Z", re.S)


def _differentiable(ty: Type) -> bool:
    if isinstance(ty, BaseType):
        return ty.name == BaseTy.Tensor
    if isinstance(ty, (OptionalType, ListType)):
        return _differentiable(ty.elem)
    return False


def _plain_tensor(ty: Type) -> bool:
    return isinstance(ty, BaseType) and ty.name == BaseTy.Tensor


def parse_functional(text: str) -> FunctionSchema:
    """The schema, which must parse and be functional (no out=, no mutation, no trailing _)."""
    parsed = parse_schema(text.strip())
    errors = [i for i in parsed.issues if not i.code.startswith("OPG2") or parsed.schema is None]
    if parsed.schema is None or errors:
        raise ScaffoldError(f"not a schema: {text.strip()!r}"
                            + (f" ({parsed.issues[0].message})" if parsed.issues else ""))
    if parsed.namespace not in ("", "aten"):
        raise ScaffoldError("only aten ops are scaffolded (no namespace:: prefix)")
    schema = parsed.schema
    if schema.kind() != SchemaKind.functional or schema.name.name.inplace or schema.is_mutable:
        raise ScaffoldError(f"{schema.name} is not functional: give the functional schema (no out=, no (a!), "
                            "no trailing _); the in-place and out= entries are derived from it")
    return schema


def _variant_name(schema: FunctionSchema, inplace: bool = False, out: bool = False) -> str:
    base = schema.name.name.base + ("_" if inplace else "")
    overload = schema.name.overload_name
    if out:
        overload = f"{overload}_out" if overload else "out"
    return f"{base}.{overload}" if overload else base


def _split(schema: FunctionSchema) -> tuple[str, str]:
    m = _DECL.match(str(schema))
    assert m is not None  # str() of a parsed schema has this shape
    return m.group(2), m.group(3)


def inplace_schema(schema: FunctionSchema) -> str | None:
    """The in-place variant, when the op takes `Tensor self` first and returns one Tensor."""
    self_arg = schema.arguments.self_arg
    if (self_arg is None or schema.arguments.pre_self_positional or len(schema.returns) != 1
            or not _plain_tensor(schema.returns[0].type) or not _plain_tensor(self_arg.argument.type)):
        return None
    args, _ = _split(schema)
    rest = args[len("Tensor self"):]
    return f"{_variant_name(schema, inplace=True)}(Tensor(a!) self{rest}) -> Tensor(a!)"


def out_schema(schema: FunctionSchema) -> str | None:
    """The out= variant, when the op returns only Tensors (one out argument each, named after the return); a
    factory's out= variant takes no tensor options (the out tensor has them), as PyTorch's factories' do."""
    if not schema.returns or not all(_plain_tensor(r.type) for r in schema.returns):
        return None
    taken = {a.name for a in schema.arguments.flat_all}
    names = [r.name or ("out" if len(schema.returns) == 1 else f"out{i}") for i, r in enumerate(schema.returns)]
    if len(set(names)) != len(names) or taken & set(names):
        return None
    outs = [f"Tensor({chr(ord('a') + i)}!) {n}" for i, n in enumerate(names)]
    a = schema.arguments
    positional = [str(x) for x in a.flat_positional]
    kwarg_only = [str(x) for x in a.pre_tensor_options_kwarg_only + a.post_tensor_options_kwarg_only] + outs
    all_args = ", ".join(positional + ["*"] + kwarg_only)
    returns = "Tensor(a!)" if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return f"{_variant_name(schema, out=True)}({all_args}) -> {returns}"


def can_be_structured(schema: FunctionSchema) -> bool:
    """Whether the op has an out= variant that groups with it (a factory's drops the tensor options)."""
    return out_schema(schema) is not None and schema.arguments.tensor_options is None


def _kernel_name(op_name: str) -> str:
    return op_name.replace(".", "_")


def _tags_line(tags: Sequence[str]) -> str:
    if not tags:
        return ""
    return f"  tags: {tags[0]}\n" if len(tags) == 1 else f"  tags: [{', '.join(tags)}]\n"


def yaml_entries(schema: FunctionSchema, request: ScaffoldRequest) -> list[tuple[str, str, str]]:
    """(op name, `- func:` line, the keys after it) of each entry, functional first."""
    inplace, out = inplace_schema(schema), out_schema(schema)
    if request.structured and not can_be_structured(schema):
        raise ScaffoldError(f"{schema.name} cannot be structured: a structured op needs an out= variant with the "
                            "functional's arguments, and only an op returning Tensors, with no tensor options "
                            "(a factory), has one")
    keys = ", ".join(request.dispatch)
    tags = _tags_line(request.tags)
    out_name = _variant_name(schema, out=True)

    def entry(func: str, name: str) -> tuple[str, str, str]:
        if request.structured and name != out_name:
            return name, f"- func: {func}\n", f"  structured_delegate: {out_name}\n" + tags
        structured = "  structured: True\n" if request.structured else ""
        return name, f"- func: {func}\n", structured + f"  dispatch:\n    {keys}: {_kernel_name(name)}\n" + tags

    found = [entry(str(schema), str(schema.name))]
    if inplace is not None:
        found.append(entry(inplace, _variant_name(schema, inplace=True)))
    if out is not None:
        found.append(entry(out, out_name))
    return found


def derivatives_entry(schema: FunctionSchema) -> str:
    """A derivatives.yaml entry saying each differentiable input's formula is not written yet."""
    lines = [f"- name: {schema}"]
    for a in schema.arguments.flat_all:
        if _differentiable(a.type):
            lines.append(f"  {a.name}: not_implemented(\"{schema.name}\")")
    if len(lines) == 1:
        lines.append("  output_differentiability: [False]" if len(schema.returns) == 1 else
                     f"  output_differentiability: [{', '.join('False' for _ in schema.returns)}]")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- C++

def kernel_file_head(op: str, structured: bool) -> str:
    """The top of a new kernel file: the includes an ATen kernel file has (per-operator headers or not)."""
    meta = "#include <ATen/TensorMeta.h>\n" if structured else ""
    return ("#define TORCH_ASSERT_ONLY_METHOD_OPERATORS\n"
            "#include <ATen/core/Tensor.h>\n"
            f"{meta}"
            "#include <c10/util/Exception.h>\n\n"
            "#ifndef AT_PER_OPERATOR_HEADERS\n"
            "#include <ATen/NativeFunctions.h>\n"
            "#else\n"
            f"#include <ATen/ops/{op}_native.h>\n"
            "#endif\n")


def _stubs(snapshot: NativeSnapshot, names: Sequence[str]) -> list[str]:
    """The stubs of the new entries' kernels (and meta function), from the declarations the codegen writes."""
    by_name = {}
    problems = []
    for placed in snapshot.document.entries:
        value = placed.result.value
        if isinstance(value, LoweredEntry) and value.name is not None and str(value.name) in names:
            by_name[str(value.name)] = value
            problems += [d for d in value.diagnostics if d.is_error]
    if problems:
        raise ScaffoldError(f"the new entries have errors: {problems[0].message} [{problems[0].code}]")
    missing = [n for n in names if n not in by_name or by_name[n].function is None]
    if missing:
        raise ScaffoldError(f"the new entry {missing[0]} did not lower")
    stubs: list[str] = []
    nowhere = Span(0, 0, 0, 0)
    for name in names:
        lowered = by_name[name]
        function = lowered.function
        assert function is not None
        group = group_of(snapshot, function) if function.structured else None
        if group is not None:
            macro_name = group.functional.func.name
            macro = (f"TORCH_META_FUNC2({macro_name.name}, {macro_name.overload_name})"
                     if macro_name.overload_name else f"TORCH_META_FUNC({macro_name.name})")
            keys = tuple(k for k, m in lowered.metadata if m.structured)
            ref = KernelRef(META_FUNC, function, keys, meta_name(group), "at::meta", True, nowhere, macro)
            stub = stub_for(ref, kernel_declaration(snapshot, ref))
            if stub is None:
                raise ScaffoldError(f"no meta function declaration for {name}")
            stubs.append(stub)
        seen: set[str] = set()
        for key, meta in lowered.metadata:
            if meta.kernel in seen:  # one kernel for several keys (CPU, CUDA: k) is defined once
                continue
            seen.add(meta.kernel)
            ref = KernelRef(KERNEL, function, (key,), meta.kernel, meta.cpp_namespace, meta.structured, nowhere)
            stub = stub_for(ref, kernel_declaration(snapshot, ref))
            if stub is None:
                raise ScaffoldError(f"no kernel declaration for {meta.kernel} ({name})")
            stubs.append(stub)
    return stubs


_NAMESPACED = re.compile(r"namespace (\S+) \{\n\n(.*)\n\} // namespace \1\n\Z", re.S)


def _merged(stubs: Sequence[str]) -> str:
    """The stubs with the definitions of one namespace in one block (stub_for wraps each in its own)."""
    blocks: list[tuple[str, list[str]]] = []
    for code in stubs:
        m = _NAMESPACED.match(code)
        if m is None:
            blocks.append(("", [code]))
        elif blocks and blocks[-1][0] == m.group(1):
            blocks[-1][1].append(m.group(2))
        else:
            blocks.append((m.group(1), [m.group(2)]))
    return "\n".join(f"namespace {ns} {{\n\n" + "\n".join(body) + f"\n}} // namespace {ns}\n" if ns else body[0]
                     for ns, body in blocks)


def backend_stubs(snapshot: NativeSnapshot, backend_text: str, op: str) -> str:
    """The backend's kernel for the new op (a method of its NativeFunctions class, as the missing-kernel fix writes
    it), from the backend yaml that lists it."""
    backend = check_backend(backend_text, snapshot)
    resolved = backend.resolved
    errors = [d for d in backend.diagnostics if d.is_error]
    if resolved is None or resolved.class_name is None or errors:
        why = f": {errors[0].message} [{errors[0].code}]" if errors else ""
        raise ScaffoldError(f"the backend yaml, with the op added, cannot be resolved{why}")
    namespace = resolved.yaml.cpp_namespace.value
    native = {op.function.func.name: op.function for op in snapshot.functions.ops}
    wanted = [e for e in expected_kernels(resolved, native, resolved.class_name,
                                                snapshot.release.cpp_spelling) if str(e.op) == op]
    if not wanted or not isinstance(namespace, str):
        raise ScaffoldError(f"the backend yaml asks for no kernel of {op}")
    return _merged([stub(e, namespace)[1] for e in wanted])


# ---------------------------------------------------------------- yaml insertion points

def _end(path: str, text: str, block: str) -> Insertion:
    """Append a block at the end of a file (a blank line before it)."""
    line, col, sep = append_point(text.split("\n"))
    if text and not text.endswith("\n"):
        return Insertion(path, line, col, "\n\n" + block)
    if text == "":
        return Insertion(path, 0, 0, block)
    return Insertion(path, line, col, ("\n" if sep == "\n" else sep) + block)


_SUPPORTED = re.compile(r"^supported\s*:\s*(#.*)?$")
_EMPTY_SUPPORTED = re.compile(r"^supported\s*:\s*\[\s*\]\s*(#.*)?$")
_ITEM = re.compile(r"^(\s*)- ")


def backend_line(path: str, text: str, op: str) -> Insertion:
    """`- op` at the end of the backend yaml's supported: list (a new list when it has none)."""
    lines = text.split("\n")
    empty = next((i for i, ln in enumerate(lines) if _EMPTY_SUPPORTED.match(ln)), None)
    if empty is not None:  # `supported: []` becomes a block list
        return Insertion(path, empty, 0, f"supported:\n- {op}", end_line=empty, end_col=len(lines[empty]))
    start = next((i for i, ln in enumerate(lines) if _SUPPORTED.match(ln)), None)
    if start is None:
        return _end(path, text, f"supported:\n- {op}\n")
    last, indent = start, ""
    for i in range(start + 1, len(lines)):
        m = _ITEM.match(lines[i])
        if m is not None:
            last, indent = i, m.group(1)
        elif lines[i].strip() and not lines[i].lstrip().startswith("#") and not lines[i].startswith((" ", "\t")):
            break
    return Insertion(path, last + 1, 0, f"{indent}- {op}\n")


# ---------------------------------------------------------------- the whole scaffold

def scaffold(request: ScaffoldRequest, tree: TreeTexts, release: Release) -> Scaffold:
    """Every insertion of the scaffold; ScaffoldError when the op cannot be scaffolded as asked."""
    schema = parse_functional(request.schema)
    entries = yaml_entries(schema, request)
    names = [n for n, _, _ in entries]
    if tree.entry_end is None:
        native = _end(tree.native_path, tree.native_text, "\n".join(head + keys for _, head, keys in entries))
    else:
        others = "".join("\n" + head + keys for _, head, keys in entries[1:])
        added = entries[0][2].removesuffix(_tags_line(request.tags))  # the entry keeps its own tags
        native = Insertion(tree.native_path, *tree.entry_end, "\n" + added.rstrip("\n") + "\n" + others.rstrip("\n"))
    new_native = _apply_text(tree.native_text, native)
    snapshot = NativeParser(release=release).parse(new_native, tree.valid_tags)
    written = Counter(str(op.function.func.name) for op in snapshot.functions.ops)
    taken = sorted(n for n in names if written[n] > 1)  # the file had it before
    if taken:
        raise ScaffoldError(f"native_functions.yaml already has {', '.join(taken)}")
    stubs = _stubs(snapshot, names)
    code = _merged(stubs)
    if tree.kernel_text is None:
        kernel = Insertion(tree.kernel_path, 0, 0, kernel_file_head(schema.name.name.base, request.structured)
                           + "\n" + code, create=True)
    else:
        kernel = _end(tree.kernel_path, tree.kernel_text, code)
    out = [native, kernel]
    if request.derivatives:
        if tree.derivatives_path is None:
            raise ScaffoldError("no derivatives.yaml to add the entry to")
        out.append(_end(tree.derivatives_path, tree.derivatives_text or "", derivatives_entry(schema))
                   if tree.derivatives_text is not None else
                   Insertion(tree.derivatives_path, 0, 0, derivatives_entry(schema), create=True))
    if request.backend_op:
        if tree.backend_path is None or tree.backend_text is None:
            raise ScaffoldError("no backend yaml to add the op to")
        line = backend_line(tree.backend_path, tree.backend_text, str(schema.name))
        out.append(line)
        if tree.backend_kernel_path is not None:
            code = backend_stubs(snapshot, _apply_text(tree.backend_text, line), str(schema.name))
            out.append(_end(tree.backend_kernel_path, tree.backend_kernel_text, code)
                       if tree.backend_kernel_text is not None else
                       Insertion(tree.backend_kernel_path, 0, 0, code, create=True))
    return Scaffold(str(schema.name), tuple(names), tuple(out))


def _apply_text(text: str, insertion: Insertion) -> str:
    lines = text.split("\n")
    start = sum(len(ln) + 1 for ln in lines[:insertion.line]) + insertion.col
    if insertion.end_line is None:
        end = start
    else:
        end = sum(len(ln) + 1 for ln in lines[:insertion.end_line]) + (insertion.end_col or 0)
    return text[:start] + insertion.text + text[end:]


def apply(text: str | None, insertions: Sequence[Insertion]) -> str:
    """The file's text after its insertions (given in any order; none may overlap)."""
    out = text or ""
    for insertion in sorted(insertions, key=lambda i: (i.line, i.col), reverse=True):
        out = _apply_text(out, insertion)
    return out


# ---------------------------------------------------------------- an entry without kernels yet


@record
class EntryWithoutKernels:
    schema: str
    tags: tuple[str, ...]
    end: tuple[int, int]  # where its last key ends (TreeTexts.entry_end)
    span: Span  # the func: line


_KERNEL_KEYS = ("dispatch", "structured", "structured_delegate", "autogen")


def entry_without_kernels(snapshot: NativeSnapshot, line: int) -> EntryWithoutKernels | None:
    """The functional entry at `line` when it names no kernels yet (no dispatch table, not structured) and its
    in-place and out= variants are not in the file: what the scaffold can complete."""
    entry = cursor.entry_at(snapshot.document, line)
    if entry is None or entry.result.mapping is None or not isinstance(entry.result.value, LoweredEntry):
        return None
    function = entry.result.value.function
    mapping = entry.result.mapping
    if function is None or any(mapping.value(k) is not None for k in _KERNEL_KEYS):
        return None
    schema = function.func
    if schema.kind() != SchemaKind.functional or schema.name.name.inplace or function.manual_kernel_registration:
        return None
    taken = {str(op.function.func.name) for op in snapshot.functions.ops}
    if {_variant_name(schema, inplace=True), _variant_name(schema, out=True)} & taken:
        return None
    found = cursor.func_scalar(entry)
    span = found[0].span.shifted(entry.line) if found is not None else Span(entry.line, 0, entry.line, 0)
    return EntryWithoutKernels(str(schema), tuple(sorted(function.tags)), cursor.content_end(entry), span)


# ---------------------------------------------------------------- where the files are

NATIVE_DIR = ("aten", "src", "ATen", "native")
DERIVATIVES = ("tools", "autograd", "derivatives.yaml")


def tree_root(native_path: str) -> str | None:
    """The PyTorch checkout holding native_functions.yaml at its usual place, if it is there."""
    folder = os.path.dirname(os.path.abspath(native_path))
    parts = folder.split(os.sep)
    if tuple(parts[-len(NATIVE_DIR):]) != NATIVE_DIR:
        return None
    return os.sep.join(parts[:-len(NATIVE_DIR)]) or os.sep


def default_kernel_path(native_path: str, op: str) -> str:
    """A new source file named after the op, beside native_functions.yaml (aten/src/ATen/native/<op>.cpp)."""
    return os.path.join(os.path.dirname(native_path), f"{op.split('.')[0]}.cpp")


def default_derivatives_path(native_path: str) -> str | None:
    root = tree_root(native_path)
    return os.path.join(root, *DERIVATIVES) if root is not None else None


def op_base(schema_text: str) -> str:
    """The op's base name as written (for default file names before the schema is checked)."""
    return schema_text.strip().split("(", 1)[0].split(".", 1)[0].split("::")[-1].strip() or "new_op"
