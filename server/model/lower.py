"""Lower one composed native_functions.yaml entry to a NativeFunction.

Implements every rule torchgen 2.13 applies to a single entry
(NativeFunction.from_yaml and its __post_init__, FunctionSchema's rules),
but collects every problem as a diagnostic at the tightest span instead of
stopping at the first assertion. Spans are relative to the entry's first line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, diag
from ..frozen import fast_init
from ..releases import DEFAULT, Release
from ..suggest import did_you_mean
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YNode, YScalar, YSeq, to_python
from ..syntax.schema import Issue, SchemaSpans, parse_argument_text, parse_operator_name, parse_schema
from ..text import Span
from . import dispatch as dk
from .cpp_names import identifier_problem, qualified_name_problem
from .native_function import (
    DTYPE_CLASSES,
    BackendMetadata,
    DeviceCheckType,
    EntrySource,
    NativeFunction,
    Precompute,
    ScalarType,
    UfuncInnerLoop,
    UfuncKey,
    Variant,
)
from .schema import TENSOR, BaseTy, FunctionSchema, OperatorName, SchemaKind, SchemaKindError
from .codegen_rules import mutable_optional_tensors, structured_out_problems, untranslatable_types
from .schema_rules import check_schema

ENTRY_KEYS: dict[str, str] = {
    "func": "the operator's schema: name.overload(arguments) -> returns",
    "variants": "'function', 'method' or 'function, method': whether at::op(...) and/or Tensor::op(...) are generated",
    "dispatch": "kernels per dispatch key; several keys may share a line: 'CPU, CUDA: kernel'",
    "structured": "True on the out= variant of a structured kernel (meta + impl functions)",
    "structured_delegate": "the structured out= op this functional/in-place variant is implemented by",
    "structured_inherits": "the base class of the generated meta class (default at::impl::MetaBase)",
    "precomputed": "values the meta function computes and passes to the impl function",
    "ufunc_inner_loop": "ufunc codegen: the inner loop name and dtypes, per ufunc key",
    "device_guard": "False to omit the generated DeviceGuard",
    "device_check": "NoCheck to skip the same-device check of tensor arguments",
    "manual_kernel_registration": "True to skip the generated kernel registration",
    "manual_cpp_binding": "True to skip the generated C++ bindings (at:: and Tensor method)",
    "python_module": "the Python module the binding goes into (nn, fft, linalg, special, ...)",
    "category_override": "overrides the category in Declarations.yaml",
    "autogen": "ops the codegen generates for this entry, e.g. 'foo.out'",
    "tags": "tags from tags.yaml describing the op",
    "cpp_no_default_args": "arguments whose defaults are left out of the C++ API",
    "use_const_ref_for_mutable_tensors": "True to pass mutable tensors as const Tensor& in C++",
}

_STRUCTURED_KEYS_IN_ORDER = tuple(sorted(dk.STRUCTURED_DISPATCH_KEYS, key=lambda k: k.value))


@fast_init
@dataclass(frozen=True, slots=True)
class LoweredEntry:
    function: NativeFunction | None
    metadata: tuple[tuple[dk.DispatchKey, BackendMetadata], ...]
    diagnostics: tuple[Diagnostic, ...]
    # The operator name even when the entry has other errors, for linking.
    name: OperatorName | None


class _Reader:
    """Takes keys out of an entry, recording type errors with spans."""

    def __init__(self, entry: YMap) -> None:
        self.entry = entry
        self.diagnostics: list[Diagnostic] = []
        self.pairs: dict[object, tuple[YNode, YNode]] = {}
        for pair in entry.pairs:
            key = pair[0]
            if isinstance(key, YScalar):
                try:
                    self.pairs.setdefault(key.value, pair)
                except TypeError:  # an unhashable key cannot be one of ours
                    pass

    def peek(self, key: str) -> YNode | None:
        pair = self.pairs.get(key)
        return pair[1] if pair else None

    def key_span(self, key: str) -> Span | None:
        pair = self.pairs.get(key)
        return pair[0].span if pair else None

    def error(self, code: str, span: Span, message: str, data=()) -> None:
        self.diagnostics.append(diag(code, span, message, data=data))

    def warn(self, code: str, span: Span, message: str, data=()) -> None:
        self.diagnostics.append(diag(code, span, message, severity=Severity.WARNING, data=data))

    def value(self, key: str) -> object:
        node = self.peek(key)
        if node is None:
            return None
        return node.value if isinstance(node, YScalar) else node

    def expect(self, key: str, kind: type, default: object, what: str) -> object:
        """The key's value if it has the type (null counts as absent for optional keys)."""
        pair = self.pairs.get(key)
        if pair is None:
            return default
        node = pair[1]
        if kind is list and isinstance(node, YSeq):
            return to_python(node)
        if isinstance(node, YScalar):
            if node.value is None and default is None:
                return None
            if isinstance(node.value, kind) and not (kind is int and isinstance(node.value, bool)):
                return node.value
            shown = node.text if node.value is not None else "null"
        else:
            shown = "a list" if isinstance(node, YSeq) else "a mapping"
        self.error("OPG101", node.span, f"'{key}' must be {what}, not {shown}")
        return default


def _issue_to_diag(issue: Issue, where: ScalarText) -> Diagnostic:
    return diag(issue.code, where.span(issue.start, issue.end), issue.message, data=issue.data)


def _schema_problem_span(where: tuple, spans: SchemaSpans, text: ScalarText) -> Span:
    kind = where[0]
    if kind == "arg" and where[1] < len(spans.arguments):
        return text.span(*spans.arguments[where[1]].whole)
    if kind == "return" and where[1] < len(spans.each_return):
        return text.span(*spans.each_return[where[1]])
    if kind == "returns":
        return text.span(*spans.returns)
    return text.span(*spans.name)


def _may_be_untranslatable(schema: str) -> bool:
    """A cheap pre-test for codegen_rules.untranslatable_types: a custom class, a list without size (as an
    argument with a default, or a bool list), a list of SymInt? or of lists, or a return that is optional or a list."""
    returns = schema[schema.rfind("->"):]
    return "__torch__" in schema or "bool[]" in schema or "SymInt?[" in schema or "][" in schema \
        or ("[]" in schema and "=" in schema) or "?" in returns or "]" in returns


def cpp_name(func: FunctionSchema) -> str:
    """The default C++ kernel name: the base name, plus _out for out= functions."""
    return str(func.name.name) + ("_out" if func.is_out_fn() else "")


# Why a name that is no C++ name is an error although torchgen accepts it: the C++ would not compile, or would
# hold code of the yaml's choosing (a line break, then `#error ...`).
_PASTED = "torchgen pastes it into the generated C++ as it is"


def _namespace_entity(text: str, max_level: int) -> tuple[str, str, bool]:
    parts = text.split("::")
    return "::".join(parts[:-1]), parts[-1], len(parts) - 1 <= max_level


@functools.lru_cache(maxsize=None)
def _parse_ufunc_loop(text: str, key: UfuncKey) -> tuple[UfuncInnerLoop | None, str | None]:
    if " " not in text:
        return None, f"ufunc_inner_loop '{text}' must be 'name (dtype, ...)'"
    name, dtypes_text = text.split(" ", 1)
    if (problem := identifier_problem(name, "inner loop name")) is not None:
        return None, f"ufunc_inner_loop '{text}': {problem}; {_PASTED}"
    if dtypes_text[:1] != "(" or dtypes_text[-1:] != ")":
        return None, f"ufunc_inner_loop '{text}': the dtypes must be in parentheses"
    dtypes: dict[ScalarType, None] = {}
    for part in dtypes_text[1:-1].split(", "):
        if part in DTYPE_CLASSES:
            dtypes.update(dict.fromkeys(DTYPE_CLASSES[part]))
        elif part in ScalarType.__members__:
            dtypes[ScalarType[part]] = None
        else:
            hint, _ = did_you_mean(part, [*ScalarType.__members__, *DTYPE_CLASSES])
            return None, f"unknown dtype '{part}' in ufunc_inner_loop{hint}"
    return UfuncInnerLoop(name, tuple(dtypes), key), None


def parse_entry_schemas(entries: list[YMap]) -> None:
    """Parse the func: schema of every entry into parse_schema's memo, ahead of lowering them."""
    for entry in entries:
        node = entry.value("func")
        if isinstance(node, YScalar) and isinstance(node.value, str):
            parse_schema(node.value)


def lower_native_function(entry: YMap, valid_tags: frozenset[str],
                          ignore_keys: frozenset[dk.DispatchKey] = frozenset(),
                          release: Release = DEFAULT) -> LoweredEntry:
    """ignore_keys: dispatch keys to leave out (gen.py drops MPS, XPU and MTIA unless asked for them);
    release: the torch release whose rules apply."""
    r = _Reader(entry)

    # func
    func_node = r.peek("func")
    func_scalar: YScalar | None = None
    parsed = None
    if func_node is None or (isinstance(func_node, YScalar) and func_node.value is None):
        at = func_node.span if func_node is not None else entry.span
        keys = ", ".join(str(k.value) for k, _ in entry.pairs if isinstance(k, YScalar))
        r.error("OPG100", Span(at.start_line, at.start_col, at.start_line, at.start_col + 1) if func_node is None else at,
                f"this entry has no 'func:' schema (it has: {keys or 'nothing'})")
    elif not isinstance(func_node, YScalar) or not isinstance(func_node.value, str):
        r.error("OPG101", func_node.span, "'func' must be a schema string such as 'foo(Tensor self) -> Tensor'")
    else:
        func_scalar = func_node
        parsed = parse_schema(func_node.value)
    text = ScalarText(func_scalar) if func_scalar is not None else None
    if parsed is not None and text is not None and parsed.issues:
        r.diagnostics.extend(_issue_to_diag(i, text) for i in parsed.issues)
    func = parsed.schema if parsed is not None else None
    namespace = parsed.namespace if parsed is not None else "aten"

    cpp_no_default_args = r.expect("cpp_no_default_args", list, [], "a list of argument names")
    use_const_ref = r.expect("use_const_ref_for_mutable_tensors", bool, False, "True or False")
    if use_const_ref and func is not None and func.arguments.out and release.refuses_const_ref_mutable_out:
        r.error("OPG120", r.key_span("use_const_ref_for_mutable_tensors"),
                "use_const_ref_for_mutable_tensors is not supported on out= functions (pytorch#145522)")

    variants = _lower_variants(r, entry)

    manual_kernel_registration = r.expect("manual_kernel_registration", bool, False, "True or False")
    manual_cpp_binding = r.expect("manual_cpp_binding", bool, False, "True or False")
    device_guard = r.expect("device_guard", bool, True, "True or False")
    device_check_s = r.expect("device_check", str, None, "NoCheck or ExactSame")
    device_check = DeviceCheckType.ExactSame
    if device_check_s is not None:
        if device_check_s in DeviceCheckType.__members__:
            device_check = DeviceCheckType[device_check_s]
        else:
            hint, data = did_you_mean(device_check_s, DeviceCheckType.__members__)
            r.error("OPG106", r.peek("device_check").span,
                    f"illegal device_check '{device_check_s}': use NoCheck or ExactSame{hint}", data)
    structured = r.expect("structured", bool, False, "True or False")

    structured_delegate = None
    delegate_s = r.expect("structured_delegate", str, None, "an operator name such as 'add.out'")
    if delegate_s is not None:
        node = r.peek("structured_delegate")
        if "::" in delegate_s:
            r.error("OPG108", node.span, "structured_delegate takes no namespace; the delegate is in the op's namespace")
        else:
            structured_delegate, issues = parse_operator_name(delegate_s)
            r.diagnostics.extend(_issue_to_diag(i, ScalarText(node)) for i in issues)

    structured_inherits = r.expect("structured_inherits", str, None, "a class name")
    if structured_inherits is not None and "::" in structured_inherits:
        r.error("OPG108", r.peek("structured_inherits").span,
                "structured_inherits takes no namespace; the class is looked up in the op's namespace")
    elif structured_inherits is not None and (problem := identifier_problem(structured_inherits, "class")):
        r.error("OPG141", r.peek("structured_inherits").span, f"structured_inherits: {problem}; {_PASTED}")

    python_module = r.expect("python_module", str, None, "a module name")
    if python_module is not None and Variant.method in variants:
        r.error("OPG118", r.key_span("python_module"), "functions in a python_module cannot be methods; "
                                                            "drop 'method' from variants")
    category_override = r.expect("category_override", str, None, "a string")

    precomputed = _lower_precomputed(r, structured)
    tags = _lower_tags(r, valid_tags, namespace, func)
    dispatch, kernels = _lower_dispatch(r, manual_kernel_registration, structured, ignore_keys)

    autogen: list[OperatorName] = []
    autogen_s = r.expect("autogen", str, "", "a string of operator names separated by ', '")
    if autogen_s:
        node = r.peek("autogen")
        for piece in str(autogen_s).split(", "):
            name, issues = parse_operator_name(piece)
            where = ScalarText(node)
            start, _ = _find(node.value, piece)
            r.diagnostics.extend(_issue_to_diag(i.moved(start), where) for i in issues)
            if name is not None:
                autogen.append(name)

    ufunc_loops = _lower_ufunc(r)

    # Every key of ENTRY_KEYS has been read above; the others are unknown.
    leftover = [(k, v) for k, v in entry.pairs if not (isinstance(k, YScalar) and k.value in ENTRY_KEYS)]
    for k, _ in leftover:
        key = k.value if isinstance(k, YScalar) else k
        hint, data = did_you_mean(str(key), ENTRY_KEYS)
        r.error("OPG102", k.span, f"unknown key '{key}' in a native_functions.yaml entry{hint}", data)

    if func is None:
        best_effort = _name_before_arguments(func_scalar.value) if func_scalar is not None else None
        return LoweredEntry(None, (), tuple(r.diagnostics), best_effort)

    # Rules that need the schema.
    spans: SchemaSpans = parsed.spans  # type: ignore[union-attr,assignment]
    for problem in check_schema(func):
        r.error("OPG206", _schema_problem_span(problem.where, spans, text), problem.message)
    if _may_be_untranslatable(func_scalar.value):
        for where, why in untranslatable_types(func):
            r.error("OPG208", _schema_problem_span(where, spans, text), why)
    if "!)?" in func_scalar.value:  # type: ignore[operator,union-attr]
        for arg, reason in mutable_optional_tensors(func, bool(use_const_ref)):
            r.error("OPG208", _schema_problem_span(arg, spans, text), reason)  # type: ignore[arg-type]
    if not release.named_tensor_types and "Dimname" in func_scalar.value:  # type: ignore[union-attr]
        _refuse_named_tensor_types(r, func, spans, text, release)
    kind = _kind(func)

    if dispatch is not None:
        _check_dispatch_table(r, func, dispatch, kernels, structured_delegate)
    else:
        dispatch = {}
        if not structured and structured_delegate is None:
            name = str(func.name.name)
            args = func.arguments
            if name.startswith("new_") or name.endswith("_like") or (args.tensor_options and not args.has_tensor_arg()):
                r.error("OPG112", text.span(*spans.name),
                        f"factory function '{name}' needs an explicit dispatch table (usually "
                        "CompositeExplicitAutograd): factory functions must not decompose implicitly")
            dispatch[dk.CIA] = BackendMetadata(cpp_name(func), False, "at::native")

    composites = [k for k in dispatch if k in dk.COMPOSITE_KEYS]
    if not (len(composites) <= 1 or (len(composites) == 2 and dk.CEA_NON_FUNCTIONAL not in composites
                                     and dk.CIA_NESTED in composites)):
        r.error("OPG113", r.key_span("dispatch") or entry.span,
                "only one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional and "
                "CompositeImplicitAutograd may be given (each subsumes the others); use "
                "CompositeExplicitAutograd for an explicit autograd formula, else CompositeImplicitAutograd")

    if ufunc_loops:
        ufunc_key_span = r.key_span("ufunc_inner_loop")
        if not structured:
            r.error("OPG114", ufunc_key_span, "ufunc_inner_loop needs 'structured: True'")
        elif not func.is_out_fn():
            r.error("OPG114", ufunc_key_span, "ufunc_inner_loop belongs on the out= variant")
        else:
            for key in dk.UFUNC_DISPATCH_KEYS:
                if key in dispatch:
                    r.error("OPG114", _dispatch_key_span(entry, key.name) or ufunc_key_span,
                            f"a ufunc op must not list {key} in dispatch; its kernel is generated")
                dispatch[key] = BackendMetadata(f"ufunc_{func.name.name}_{key}", True, "at::native")

    is_abstract = structured_delegate is not None or set(dispatch) not in (
        {dk.CIA}, {dk.CIA_NESTED}, {dk.CIA, dk.CIA_NESTED})
    if structured_delegate is not None:
        for key in _STRUCTURED_KEYS_IN_ORDER:
            if key in dispatch:
                r.error("OPG123", _dispatch_key_span(entry, key.name) or entry.span,
                        f"an op with structured_delegate must not have {key} in dispatch: it is delegated")

    _check_codegen_rules(r, func, dispatch, bool(structured), variants)
    _check_post_init(r, func, kind, variants, structured, structured_delegate, structured_inherits, device_guard,
                     device_check, cpp_no_default_args, tags, spans, text, release)

    nf = NativeFunction(
        namespace=namespace,
        func=func,
        use_const_ref_for_mutable_tensors=bool(use_const_ref),
        device_guard=bool(device_guard),
        device_check=device_check,
        python_module=python_module,
        category_override=category_override,
        variants=variants,
        manual_kernel_registration=bool(manual_kernel_registration),
        manual_cpp_binding=bool(manual_cpp_binding),
        autogen=tuple(autogen),
        ufunc_inner_loop=tuple(sorted(ufunc_loops.items(), key=lambda kv: kv[0].value)) if ufunc_loops else (),
        structured=bool(structured),
        structured_delegate=structured_delegate,
        structured_inherits=structured_inherits,
        precomputed=precomputed,
        cpp_no_default_args=frozenset([a for a in cpp_no_default_args if isinstance(a, str)]),
        is_abstract=is_abstract,
        has_composite_implicit_autograd_kernel=dk.CIA in dispatch,
        has_composite_implicit_autograd_nested_tensor_kernel=dk.CIA_NESTED in dispatch,
        has_composite_explicit_autograd_kernel=dk.CEA in dispatch,
        has_composite_explicit_autograd_non_functional_kernel=dk.CEA_NON_FUNCTIONAL in dispatch,
        tags=tags,
        source=EntrySource(entry, spans, func_scalar),
    )
    return LoweredEntry(nf, tuple(dispatch.items()), tuple(r.diagnostics), func.name)


def _refuse_named_tensor_types(r: _Reader, func: FunctionSchema, spans: SchemaSpans, text: ScalarText,
                               release: Release) -> None:
    """Dimname types (named tensors) are unknown to releases that dropped them."""
    for i, a in enumerate(func.arguments.flat_all):
        if a.type.is_base_ty_like(BaseTy.Dimname) and i < len(spans.arguments):
            r.error("OPG203", text.span(*spans.arguments[i].type),
                    f"unknown type '{a.type}': named tensors (Dimname) left native_functions.yaml in torch 2.13; "
                    f"this is {release}")
    for i, ret in enumerate(func.returns):
        if ret.type.is_base_ty_like(BaseTy.Dimname) and i < len(spans.each_return):
            r.error("OPG203", text.span(*spans.each_return[i]),
                    f"unknown type '{ret.type}': named tensors (Dimname) left native_functions.yaml in torch 2.13; "
                    f"this is {release}")


# The variants lines of nearly every entry; others are read piece by piece.
_COMMON_VARIANTS = {
    "function": frozenset({Variant.function}),
    "method": frozenset({Variant.method}),
    "function, method": frozenset({Variant.function, Variant.method}),
    "method, function": frozenset({Variant.function, Variant.method}),
}


def _lower_variants(r: _Reader, entry: YMap) -> frozenset[Variant]:
    value = str(r.expect("variants", str, "function", "'function', 'method' or 'function, method'"))
    common = _COMMON_VARIANTS.get(value)
    if common is not None:
        return common
    variants: set[Variant] = set()
    node = r.peek("variants")
    for piece in value.split(", "):
        if piece in ("function", "method"):
            variants.add(Variant[piece])
        else:
            span = node.span if node is not None else entry.span
            if isinstance(node, YScalar):
                span = ScalarText(node).span(*_find(node.value, piece))
            hint, data = did_you_mean(piece.strip(), ["function", "method"])
            r.error("OPG103", span, f"illegal variant '{piece}': variants are 'function' and 'method', "
                                    f"separated by ', '{hint}", data)
    return frozenset(variants)


def _name_before_arguments(func: str) -> OperatorName | None:
    """The op name of a schema that failed to parse, so that other entries can still find it."""
    head = func.split("::")[-1].split("(", 1)[0].strip()
    name, issues = parse_operator_name(head) if head else (None, ())
    return name


def _kind(func: FunctionSchema) -> SchemaKind | None:
    try:
        return func.kind()
    except SchemaKindError:
        return None


def _find(haystack: object, needle: str) -> tuple[int, int]:
    text = str(haystack)
    at = text.find(needle)
    if at < 0 or not needle:
        return 0, len(text)
    return at, at + len(needle)


def _dispatch_key_span(entry: YMap, key_name: str) -> Span | None:
    table = entry.value("dispatch")
    if not isinstance(table, YMap):
        return None
    for k, _ in table.pairs:
        if isinstance(k, YScalar) and isinstance(k.value, str):
            for name in k.value.split(","):
                if name.strip() == key_name:
                    start, end = _find(k.value, name.strip())
                    return ScalarText(k).span(start, end)
    return None


def _lower_precomputed(r: _Reader, structured: object) -> Precompute | None:
    node = r.peek("precomputed")
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return None
    if structured is not True:
        r.error("OPG115", r.key_span("precomputed"), "precomputed needs 'structured: True'")
    if not isinstance(node, YSeq):
        if isinstance(node, YScalar) and not node.value:
            return None
        r.error("OPG115", node.span, "precomputed must be a list of 'kernel_arg -> type name, ...' lines")
        return None
    if not node.items:
        return None
    items = list(node.items)
    add: list = []
    failed = False

    def parse_args(scalar: YScalar, text: str, start: int) -> list:
        nonlocal failed
        out = []
        pos = start
        for piece in text.split(","):
            stripped = piece.strip()
            offset = pos + (len(piece) - len(piece.lstrip()))
            arg, issues = parse_argument_text(stripped)
            for i in issues:
                r.diagnostics.append(_issue_to_diag(i.moved(offset), ScalarText(scalar)))
            if arg is None:
                failed = True
            else:
                if arg.name.upper() == arg.name:
                    r.error("OPG115", ScalarText(scalar).span(offset, offset + len(stripped)),
                            f"precomputed argument name '{arg.name}' must not be all upper case")
                out.append(arg)
            pos += len(piece) + 1
        return out

    last = items[-1]
    if isinstance(last, YScalar) and isinstance(last.value, str) and " -> " not in last.value:
        add = parse_args(last, last.value, 0)
        items = items[:-1]
    elif not (isinstance(last, YScalar) and isinstance(last.value, str)):
        r.error("OPG115", last.span, "each precomputed item must be a string")
        return None
    replace: dict[str, list] = {}
    for item in items:
        if not (isinstance(item, YScalar) and isinstance(item.value, str)):
            r.error("OPG115", item.span, "each precomputed item must be a string")
            failed = True
            continue
        value = item.value
        if " -> " not in value:
            r.error("OPG115", item.span, f"'{value}': only the last precomputed line may add values without "
                                         "replacing a kernel argument ('kernel_arg -> type name, ...')")
            failed = True
            continue
        parts = value.split(" -> ")
        if len(parts) != 2:
            r.error("OPG115", item.span, f"'{value}': write 'kernel_arg -> type name, ...' with one ' -> '")
            failed = True
            continue
        arg, rest = parts
        if " " in arg:
            r.error("OPG115", ScalarText(item).span(0, len(arg)), f"illegal kernel argument name '{arg}'")
            failed = True
            continue
        if arg in replace:
            r.error("OPG115", item.span, f"kernel argument '{arg}' is replaced twice")
            failed = True
        replace[arg] = parse_args(item, rest, len(arg) + 4)
    if failed:
        return None
    result = Precompute(tuple((k, tuple(v)) for k, v in replace.items()), tuple(add))
    expected = result.to_list()
    for item, line in zip(items, expected):
        if item.value != line:
            r.error("OPG115", item.span, f"write this precomputed line as '{line}'")
            return None
    return result


def _lower_tags(r: _Reader, valid_tags: frozenset[str], namespace: str, func: FunctionSchema | None) -> frozenset[str]:
    node = r.peek("tags")
    items: list[YNode] = []
    if node is None:
        pass
    elif isinstance(node, YScalar) and isinstance(node.value, str):
        items = [node]
    elif isinstance(node, YSeq):
        items = list(node.items)
    else:
        r.error("OPG101", node.span, "'tags' must be a tag name or a list of tag names")
    names: list[str] = []
    for item in items:
        if not (isinstance(item, YScalar) and isinstance(item.value, str)):
            r.error("OPG107", item.span, "a tag must be a plain tag name from tags.yaml")
            continue
        if not valid_tags:
            r.error("OPG107", item.span, "no tags are defined: tags.yaml is missing or empty")
            continue
        if item.value not in valid_tags:
            hint, data = did_you_mean(item.value, valid_tags)
            r.error("OPG107", item.span, f"unknown tag '{item.value}': tags.yaml does not define it{hint}", data)
            continue
        names.append(item.value)
    if namespace == "aten" and "pt2_compliant_tag" in valid_tags:
        names.append("pt2_compliant_tag")
    if func is not None and func.is_out_fn() and "out" in valid_tags:
        names.append("out")
    if func is not None and func.name.name.inplace and "inplace" in valid_tags:
        names.append("inplace")
    return frozenset(names)


def _lower_dispatch(r: _Reader, manual_kernel_registration: object, structured: object,
                    ignore_keys: frozenset[dk.DispatchKey] = frozenset()):
    """The dispatch table as {key: metadata} (None when the entry has none), and the kernels as
    written per key, one for every key named (valid or not)."""
    node = r.peek("dispatch")
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return None, []
    if not isinstance(node, YMap):
        r.error("OPG101", node.span, "'dispatch' must be a mapping of dispatch keys to kernel names")
        return None, []
    if manual_kernel_registration:
        r.error("OPG109", r.key_span("dispatch"), "manual_kernel_registration and dispatch cannot be used "
                                                        "together: with manual registration, dispatch has no effect")
    table: dict[dk.DispatchKey, BackendMetadata] = {}
    kernels: list[tuple[dk.DispatchKey | None, str]] = []
    seen: set[dk.DispatchKey] = set()
    for key_node, value_node in node.pairs:
        if not (isinstance(key_node, YScalar) and isinstance(key_node.value, str)):
            r.error("OPG104", key_node.span, "a dispatch key must be a name such as CPU or CompositeExplicitAutograd")
            continue
        if not (isinstance(value_node, YScalar) and isinstance(value_node.value, str)):
            shown = "nothing" if isinstance(value_node, YScalar) and value_node.value is None else "not a name"
            span = value_node.span if not (isinstance(value_node, YScalar) and value_node.value is None) else key_node.span
            r.error("OPG101", span, f"dispatch key '{key_node.value}' needs a kernel name, but its value is {shown}")
            continue
        kernel_text = value_node.value
        if (problem := qualified_name_problem(kernel_text, "kernel name")) is not None:
            r.error("OPG141", value_node.span, f"dispatch key '{key_node.value}': {problem}; {_PASTED}")
        namespace, kernel, ok = _namespace_entity(kernel_text, 3)
        cpp_namespace = (namespace or "at") + "::native"
        pos = 0
        for piece in key_node.value.split(","):
            name = piece.strip()
            start = pos + (len(piece) - len(piece.lstrip()))
            pos += len(piece) + 1
            key = dk.K.get(name)
            if key is None or key not in dk.SUPPORTED_DISPATCH_KEYS or key in seen:
                span = ScalarText(key_node).span(start, start + len(name))
            kernels.append((key, kernel_text))
            if key in ignore_keys:
                continue
            if key is None:
                hint, data = did_you_mean(name, dk.SUPPORTED_KEY_NAMES)
                r.error("OPG104", span, f"unknown dispatch key '{name}'{hint}", data)
                continue
            if key not in dk.SUPPORTED_DISPATCH_KEYS:
                hint, data = did_you_mean(name, dk.SUPPORTED_KEY_NAMES)
                r.error("OPG105", span, f"dispatch key '{name}' exists but native_functions.yaml may not use it{hint}",
                        data)
                continue
            if not ok:
                if not any(d.code == "OPG108" and d.span == value_node.span for d in r.diagnostics):
                    r.error("OPG108", value_node.span, f"kernel '{kernel_text}': at most 3 namespace levels are "
                                                       "supported")
                continue
            if key in seen:
                r.warn("OPG104", span, f"dispatch key '{name}' is given twice; torchgen keeps the later kernel")
            seen.add(key)
            table[key] = BackendMetadata(kernel, bool(structured) and key in dk.STRUCTURED_DISPATCH_KEYS, cpp_namespace)
    return table, kernels


def _check_dispatch_table(r: _Reader, func: FunctionSchema, table: dict, kernels: list,
                          structured_delegate: OperatorName | None) -> None:
    if len(kernels) != 1:
        return  # both rules are about a table of one kernel
    expected = cpp_name(func)
    dispatch_span = r.key_span("dispatch")
    key, kernel = kernels[0]
    if key is dk.CIA and kernel == expected:
        r.error("OPG110", dispatch_span, f"unnecessary dispatch table: CompositeImplicitAutograd: {expected} is the "
                                         "default; delete the dispatch table")
    elif structured_delegate is None and set(table) == {dk.CIA} and not table[dk.CIA].supports_symint():
        r.error("OPG111", _dispatch_key_span(r.entry, "CompositeImplicitAutograd") or dispatch_span,
                f"a lone CompositeImplicitAutograd kernel must be named {expected}: rename "
                f"{table[dk.CIA].kernel} to {expected} and delete the dispatch table")


def _check_codegen_rules(r: _Reader, func: FunctionSchema, dispatch: dict, structured: bool,
                         variants: frozenset[Variant]) -> None:
    """Rules gen.py enforces while generating kernels, registrations and Tensor methods for the entry."""
    if Variant.method in variants and not func.arguments.out:
        self_arg = func.arguments.self_arg
        if self_arg is None or self_arg.argument.type != TENSOR:
            shown = "no self argument" if self_arg is None else f"self of type {self_arg.argument.type}"
            variants_node = r.peek("variants")
            r.error("OPG126", variants_node.span if variants_node is not None else r.entry.span,
                    f"a method variant (Tensor::{func.name.name}) needs a plain 'Tensor self' argument; this schema "
                    f"has {shown}")
    if structured:
        for key in (dk.K["Meta"], dk.CEA_NON_FUNCTIONAL):
            if key in dispatch:
                r.error("OPG124", _dispatch_key_span(r.entry, key.name) or r.key_span("dispatch") or r.entry.span,
                        f"do not give a {key} kernel for a structured op: the codegen generates it from the meta function")
    if any(meta.supports_symint() for meta in dispatch.values()) and not func.has_symint():
        for key, meta in dispatch.items():
            if meta.supports_symint():
                r.error("OPG125", _dispatch_key_span(r.entry, key.name) or r.entry.span,
                        f"kernel '{meta.kernel}' is named *_symint, but the schema has no SymInt argument; "
                        "drop the suffix (torchgen refuses to declare it)")


def _check_post_init(r: _Reader, func: FunctionSchema, kind: SchemaKind | None, variants: frozenset, structured: object,
                     delegate: OperatorName | None, inherits: str | None, device_guard: object,
                     device_check: DeviceCheckType, cpp_no_default_args: list, tags: frozenset[str],
                     spans: SchemaSpans, text: ScalarText, release: Release) -> None:
    def name_span() -> Span:
        return text.span(*spans.name)

    if func.arguments.out and variants != {Variant.function}:
        r.error("OPG117", r.key_span("variants") or name_span(),
                "functions with out arguments must have only the function variant ('variants: function')")
    if structured:
        if kind is not SchemaKind.out:
            r.error("OPG116", r.key_span("structured"), "'structured: True' goes on the out= variant; "
                                                            "did you mean structured_delegate?")
        if not device_guard:
            r.error("OPG116", r.key_span("device_guard"), "device_guard: False is not respected by structured kernels")
    if delegate is not None:
        if kind is SchemaKind.out:
            r.error("OPG116", r.key_span("structured_delegate"), "structured_delegate is not allowed on out= "
                                                                     "functions; did you mean 'structured: True'?")
        if not device_guard:
            r.error("OPG116", r.key_span("device_guard"), "device_guard: False is not respected by structured kernels")
    if structured and delegate is not None:
        r.error("OPG116", r.key_span("structured_delegate"), "an op cannot be both structured and a structured_delegate")
    defaulted = {a.name for a in func.schema_order_arguments() if a.default is not None} if cpp_no_default_args else ()
    names_node = r.peek("cpp_no_default_args")
    for i, name in enumerate(cpp_no_default_args):
        try:
            ok = name in defaulted
        except TypeError:
            ok = False
        if not ok:
            span = names_node.items[i].span if isinstance(names_node, YSeq) else r.entry.span
            r.error("OPG119", span, f"cpp_no_default_args: '{name}' is not an argument with a default value")
    if inherits is not None and not structured:
        r.error("OPG116", r.key_span("structured_inherits"), "structured_inherits requires 'structured: True'")
    if structured and kind is SchemaKind.out:
        for where, why in structured_out_problems(func):
            r.error("OPG116", _schema_problem_span(where, spans, text), why)
    # Both rules below look for words that, if they matter, appear in the schema text: skip them if not.
    schema_text = text.scalar.value
    op = str(func.name) if "_foreach" in schema_text else ""
    if op.startswith("_foreach") and device_check is not DeviceCheckType.NoCheck:
        r.error("OPG121", r.key_span("device_check") or name_span(),
                "_foreach kernels fall back to a slow path across devices: set 'device_check: NoCheck'")
    if "nondeterministic_seeded" in tags or not ("rand" in schema_text or "dropout" in schema_text
                                                 or "Generator" in schema_text):
        return
    op = str(func.name)
    dropout = "dropout" in op or any("dropout" in a.name for a in func.arguments.flat_all)
    named_random = "rand" in op and not (release.philox_ops_need_no_seeded_tag and "_philox_" in op)
    random = (named_random or (dropout and "backward" not in op and str(func.name.name) != "_cudnn_init_dropout_state")
              or func.arguments.has_generator_arg())
    if random:
        r.error("OPG122", r.key_span("tags") or name_span(),
                f"'{op}' looks random (its name or a Generator argument): add the tag nondeterministic_seeded",
                (("add-tag", "nondeterministic_seeded"),))


def _lower_ufunc(r: _Reader) -> dict[UfuncKey, UfuncInnerLoop]:
    node = r.peek("ufunc_inner_loop")
    loops: dict[UfuncKey, UfuncInnerLoop] = {}
    if node is None:
        return loops
    if isinstance(node, YScalar) and isinstance(node.value, str):
        loop, error = _parse_ufunc_loop(node.value, UfuncKey.Generic)
        if error:
            r.error("OPG114", node.span, error)
        else:
            loops[UfuncKey.Generic] = loop
        return loops
    if not isinstance(node, YMap):
        r.error("OPG114", node.span, "ufunc_inner_loop must be a string or a mapping of ufunc keys to strings")
        return loops
    for k, v in node.pairs:
        if not (isinstance(k, YScalar) and isinstance(k.value, str)):
            r.error("OPG114", k.span, "a ufunc_inner_loop key must be a name such as Generic or ScalarOnly")
            continue
        if not (isinstance(v, YScalar) and isinstance(v.value, str)):
            r.error("OPG114", v.span, f"ufunc_inner_loop '{k.value}' needs a string value")
            continue
        if k.value not in UfuncKey.__members__:
            hint, data = did_you_mean(k.value, UfuncKey.__members__)
            r.error("OPG114", k.span, f"unknown ufunc key '{k.value}'{hint}", data)
            continue
        loop, error = _parse_ufunc_loop(v.value, UfuncKey[k.value])
        if error:
            r.error("OPG114", v.span, error)
        else:
            loops[UfuncKey[k.value]] = loop
    return loops
