"""Lower one composed native_functions.yaml entry to a NativeFunction.

Implements every rule torchgen 2.13 applies to a single entry
(NativeFunction.from_yaml and its __post_init__, FunctionSchema's rules),
but collects every problem as a diagnostic at the tightest span instead of
stopping at the first assertion. Spans are relative to the entry's first line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import NamedTuple, TypeVar

from ..diagnostics import Diagnostic, Severity, diag
from ..frozen import PER_TEXT_MEMO, new_tuple, record
from ..releases import Release
from ..suggest import did_you_mean
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YNode, YScalar, YSeq, to_python
from ..text import Span
from . import dispatch as dk
from .codegen_rules import mutable_optional_tensors, structured_out_problems, untranslatable_types
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
from .schema import TENSOR, Argument, BaseTy, FunctionSchema, ListType, OperatorName, OptionalType, SchemaKind, SchemaKindError
from .schema_parser import Issue, ParsedSchema, SchemaSpans, parse_argument_text, parse_operator_name, parse_schema
from .schema_rules import Where, check_schema

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

_T = TypeVar("_T")
_D = TypeVar("_D")

# A dispatch table, and the kernels as written per key (None for a key that does not exist).
_Table = dict[dk.DispatchKey, BackendMetadata]
_Kernels = list[tuple[dk.DispatchKey | None, str]]

# The dispatch tables (their key sets) of an op that is not abstract: only implicit-autograd kernels.
_IMPLICIT_ONLY = (frozenset({dk.CIA}), frozenset({dk.CIA_NESTED}), frozenset({dk.CIA, dk.CIA_NESTED}))
_STRUCTURED_KEYS_IN_ORDER = tuple(sorted(dk.STRUCTURED_DISPATCH_KEYS, key=lambda k: k.value))


@record
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

    def node_of(self, key: str) -> YNode:
        """The value of a key the entry has, such as one whose value expect() returned (not its default)."""
        return self.pairs[key][1]

    def scalar_of(self, key: str) -> YScalar:
        """The scalar of a key whose value expect() returned: only a scalar gives one."""
        node = self.pairs[key][1]
        assert isinstance(node, YScalar), key
        return node

    def key_span_of(self, key: str) -> Span:
        """The span of a key the entry has, as for node_of."""
        return self.pairs[key][0].span

    def error(self, code: str, span: Span, message: str, data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, data=data))

    def warn(self, code: str, span: Span, message: str, data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, severity=Severity.WARNING, data=data))

    def value(self, key: str) -> object:
        node = self.peek(key)
        if node is None:
            return None
        return node.value if isinstance(node, YScalar) else node

    def expect(self, key: str, kind: type[_T], default: _D, what: str) -> _T | _D:
        """The key's scalar value if it has the type (null counts as absent for optional keys)."""
        pair = self.pairs.get(key)
        if pair is None:
            return default
        node = pair[1]
        if isinstance(node, YScalar):
            if node.value is None and default is None:
                return default
            if isinstance(node.value, kind) and not (kind is int and isinstance(node.value, bool)):
                return node.value
            shown = node.text if node.value is not None else "null"
        else:
            shown = "a list" if isinstance(node, YSeq) else "a mapping"
        self.error("OPG101", node.span, f"'{key}' must be {what}, not {shown}")
        return default

    def expect_list(self, key: str, what: str) -> list[object]:
        """The key's list as Python values; empty when absent or not a list (which is an error)."""
        node = self.peek(key)
        if isinstance(node, YSeq):
            return [to_python(item) for item in node.items]
        return self.expect(key, list, [], what)


def _issue_to_diag(issue: Issue, where: ScalarText) -> Diagnostic:
    return diag(issue.code, where.span(issue.start, issue.end), issue.message, data=issue.data)


def _schema_problem_span(where: Where, spans: SchemaSpans, text: ScalarText) -> Span:
    if len(where) == 2:
        kind, i = where
        if kind == "arg" and i < len(spans.arguments):
            return text.span(*spans.arguments[i].whole)
        if kind == "return" and i < len(spans.each_return):
            return text.span(*spans.each_return[i])
    elif where[0] == "returns":
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


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per ufunc_inner_loop text: frozen.PER_TEXT_MEMO says why the bound fits
def _parse_ufunc_loop(text: str, key: UfuncKey, unknown: frozenset[str]) -> UfuncInnerLoop | str:
    """The inner loop, or why the text is none (unknown: the dtype names the release's ScalarType lacks)."""
    if " " not in text:
        return f"ufunc_inner_loop '{text}' must be 'name (dtype, ...)'"
    name, dtypes_text = text.split(" ", 1)
    if (problem := identifier_problem(name, "inner loop name")) is not None:
        return f"ufunc_inner_loop '{text}': {problem}; {_PASTED}"
    if dtypes_text[:1] != "(" or dtypes_text[-1:] != ")":
        return f"ufunc_inner_loop '{text}': the dtypes must be in parentheses"
    dtypes: dict[ScalarType, None] = {}
    for part in dtypes_text[1:-1].split(", "):
        if part in DTYPE_CLASSES:
            dtypes.update(dict.fromkeys(DTYPE_CLASSES[part]))
        elif part in ScalarType.__members__ and part not in unknown:
            dtypes[ScalarType[part]] = None
        elif part in ScalarType.__members__:
            return f"unknown dtype '{part}' in ufunc_inner_loop: a dtype of later releases"
        else:
            hint, _ = did_you_mean(part, [*ScalarType.__members__, *DTYPE_CLASSES])
            return f"unknown dtype '{part}' in ufunc_inner_loop{hint}"
    return UfuncInnerLoop(name, tuple(dtypes), key)


def parse_entry_schemas(entries: list[YMap]) -> None:
    """Parse the func: schema of every entry into parse_schema's memo, ahead of lowering them."""
    for entry in entries:
        node = entry.value("func")
        if isinstance(node, YScalar) and isinstance(node.value, str):
            parse_schema(node.value)


# _Func and _Keys live for one entry's lowering: NamedTuples built by new_tuple (C), where a record's __init__
# (Python) cost about 1.5 ms over the real file.
class _Func(NamedTuple):
    """An entry's func: string, where it is, and what parsing it gave."""

    scalar: YScalar
    value: str
    parsed: ParsedSchema

    @property
    def text(self) -> ScalarText:
        """Offsets in the schema placed in the entry (made when a diagnostic needs one: most entries have none)."""
        return ScalarText(self.scalar)


class _Keys(NamedTuple):
    """The entry's keys that are read on their own, each checked against its type."""

    cpp_no_default_args: list[object]
    use_const_ref: bool
    variants: frozenset[Variant]
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    device_guard: bool
    device_check: DeviceCheckType
    structured: bool
    structured_delegate: OperatorName | None
    structured_inherits: str | None
    python_module: str | None
    category_override: str | None


def lower_native_function(entry: YMap, valid_tags: frozenset[str],
                          ignore_keys: frozenset[dk.DispatchKey] = frozenset(),
                          *, release: Release) -> LoweredEntry:
    """ignore_keys: dispatch keys to leave out (gen.py drops MPS, XPU and MTIA unless asked for them);
    release: the torch release whose rules apply."""
    r = _Reader(entry)
    f = _lower_func(r, entry)
    func = f.parsed.schema if f is not None else None
    namespace = f.parsed.namespace if f is not None else "aten"
    keys = _lower_keys(r, entry, func, release)
    # The readers of keys most entries lack are not called without them (each gives nothing for an absent key).
    pairs = r.pairs
    precomputed = _lower_precomputed(r, keys.structured) if "precomputed" in pairs else None
    tags = _lower_tags(r, valid_tags, namespace, func, release)
    dispatch_read, kernels = _lower_dispatch(r, keys.manual_kernel_registration, keys.structured, ignore_keys,
                                             release=release)
    autogen = _lower_autogen(r) if "autogen" in pairs else []
    ufunc_loops = _lower_ufunc(r, release.scalar_type_names_unknown) if "ufunc_inner_loop" in pairs else {}
    _check_unknown_keys(r, entry)

    spans = f.parsed.spans if f is not None else None
    if f is None or func is None or spans is None:
        best_effort = _name_before_arguments(f.value) if f is not None else None
        return LoweredEntry(None, (), tuple(r.diagnostics), best_effort)

    # Rules that need the schema.
    _check_schema_rules(r, func, f, spans, keys.use_const_ref, release)
    kind = _kind(func)
    if dispatch_read is not None:
        _check_dispatch_table(r, func, dispatch_read, kernels, keys.structured_delegate, release)
        dispatch = dispatch_read
    else:
        dispatch = _default_dispatch(r, func, keys, f, spans)
    _check_composites(r, entry, dispatch)
    if ufunc_loops:
        _add_ufunc_kernels(r, entry, func, keys.structured, dispatch)
    is_abstract = keys.structured_delegate is not None or dispatch.keys() not in _IMPLICIT_ONLY
    if keys.structured_delegate is not None:
        _check_delegated_keys(r, entry, dispatch)
    if not release.parse_only:  # gen.py's rules: a backend's own parse of its operator file runs no gen.py
        _check_codegen_rules(r, func, dispatch, keys.structured, keys.variants, release)
    _check_post_init(r, func, kind, keys, spans, f)
    _check_name_rules(r, func, keys, tags, spans, f, release)

    # Positionally, in NativeFunction's field order (a call with 24 keywords matched each by name: about a
    # microsecond an entry).
    nf = NativeFunction(
        namespace,
        func,
        keys.use_const_ref,  # use_const_ref_for_mutable_tensors
        keys.device_guard,
        keys.device_check,
        keys.python_module,
        keys.category_override,
        keys.variants,
        keys.manual_kernel_registration,
        keys.manual_cpp_binding,
        tuple(autogen),
        tuple(sorted(ufunc_loops.items(), key=lambda kv: kv[0].value)) if ufunc_loops else (),  # ufunc_inner_loop
        keys.structured,
        keys.structured_delegate,
        keys.structured_inherits,
        precomputed,
        frozenset([a for a in keys.cpp_no_default_args if isinstance(a, str)])
        if keys.cpp_no_default_args else frozenset(),
        is_abstract,
        dk.CIA in dispatch,  # has_composite_implicit_autograd_kernel
        dk.CIA_NESTED in dispatch,  # has_composite_implicit_autograd_nested_tensor_kernel
        dk.CEA in dispatch,  # has_composite_explicit_autograd_kernel
        dk.CEA_NON_FUNCTIONAL in dispatch,  # has_composite_explicit_autograd_non_functional_kernel
        tags,
        EntrySource(entry, spans, f.scalar),  # source
    )
    return LoweredEntry(nf, tuple(dispatch.items()), tuple(r.diagnostics), func.name)


def _lower_func(r: _Reader, entry: YMap) -> _Func | None:
    """The func: schema parsed (its issues recorded); None when the entry has no schema string."""
    func_node = r.peek("func")
    if func_node is None or (isinstance(func_node, YScalar) and func_node.value is None):
        at = func_node.span if func_node is not None else entry.span
        keys = ", ".join(str(k.value) for k, _ in entry.pairs if isinstance(k, YScalar))
        r.error("OPG100", Span(at.start_line, at.start_col, at.start_line, at.start_col + 1) if func_node is None else at,
                f"this entry has no 'func:' schema (it has: {keys or 'nothing'})")
        return None
    if not isinstance(func_node, YScalar) or not isinstance(func_node.value, str):
        r.error("OPG101", func_node.span, "'func' must be a schema string such as 'foo(Tensor self) -> Tensor'")
        return None
    f = new_tuple(_Func, (func_node, func_node.value, parse_schema(func_node.value)))
    if f.parsed.issues:  # rare: no generator for every entry
        r.diagnostics.extend(_issue_to_diag(i, f.text) for i in f.parsed.issues)
    return f


def _lower_keys(r: _Reader, entry: YMap, func: FunctionSchema | None, release: Release) -> _Keys:
    """The keys of one value each, in the order torchgen reads them (so the diagnostics are in that order)."""
    # Most entries have few of these keys: an absent one is its default without a call (as expect() would give).
    pairs = r.pairs
    cpp_no_default_args = r.expect_list("cpp_no_default_args", "a list of argument names") \
        if "cpp_no_default_args" in pairs else []
    use_const_ref = r.expect("use_const_ref_for_mutable_tensors", bool, False, "True or False") \
        if "use_const_ref_for_mutable_tensors" in pairs else False
    if use_const_ref and func is not None and func.arguments.out and release.refuses_const_ref_mutable_out:
        r.error("OPG120", r.key_span_of("use_const_ref_for_mutable_tensors"),
                "use_const_ref_for_mutable_tensors is not supported on out= functions (pytorch#145522)")

    variants = _lower_variants(r, entry)

    manual_kernel_registration = r.expect("manual_kernel_registration", bool, False, "True or False") \
        if "manual_kernel_registration" in pairs else False
    manual_cpp_binding = r.expect("manual_cpp_binding", bool, False, "True or False") \
        if "manual_cpp_binding" in pairs else False
    device_guard = r.expect("device_guard", bool, True, "True or False") if "device_guard" in pairs else True
    device_check = _lower_device_check(r) if "device_check" in pairs else DeviceCheckType.ExactSame
    structured = r.expect("structured", bool, False, "True or False") if "structured" in pairs else False
    structured_delegate = _lower_structured_delegate(r) if "structured_delegate" in pairs else None
    structured_inherits = _lower_structured_inherits(r) if "structured_inherits" in pairs else None

    python_module = r.expect("python_module", str, None, "a module name") if "python_module" in pairs else None
    if python_module is not None and Variant.method in variants:
        r.error("OPG118", r.key_span_of("python_module"), "functions in a python_module cannot be methods; "
                                                          "drop 'method' from variants")
    category_override = r.expect("category_override", str, None, "a string") if "category_override" in pairs else None
    return new_tuple(_Keys, (cpp_no_default_args, use_const_ref, variants, manual_kernel_registration,
                             manual_cpp_binding, device_guard, device_check, structured, structured_delegate,
                             structured_inherits, python_module, category_override))


def _lower_device_check(r: _Reader) -> DeviceCheckType:
    device_check_s = r.expect("device_check", str, None, "NoCheck or ExactSame")
    if device_check_s is None:
        return DeviceCheckType.ExactSame
    if device_check_s in DeviceCheckType.__members__:
        return DeviceCheckType[device_check_s]
    hint, data = did_you_mean(device_check_s, DeviceCheckType.__members__)
    r.error("OPG106", r.node_of("device_check").span,
            f"illegal device_check '{device_check_s}': use NoCheck or ExactSame{hint}", data)
    return DeviceCheckType.ExactSame


def _lower_structured_delegate(r: _Reader) -> OperatorName | None:
    delegate_s = r.expect("structured_delegate", str, None, "an operator name such as 'add.out'")
    if delegate_s is None:
        return None
    node = r.scalar_of("structured_delegate")
    if "::" in delegate_s:
        r.error("OPG108", node.span, "structured_delegate takes no namespace; the delegate is in the op's namespace")
        return None
    structured_delegate, issues = parse_operator_name(delegate_s)
    r.diagnostics.extend(_issue_to_diag(i, ScalarText(node)) for i in issues)
    return structured_delegate


def _lower_structured_inherits(r: _Reader) -> str | None:
    structured_inherits = r.expect("structured_inherits", str, None, "a class name")
    if structured_inherits is not None and "::" in structured_inherits:
        r.error("OPG108", r.node_of("structured_inherits").span,
                "structured_inherits takes no namespace; the class is looked up in the op's namespace")
    elif structured_inherits is not None and (problem := identifier_problem(structured_inherits, "class")):
        r.error("OPG141", r.node_of("structured_inherits").span, f"structured_inherits: {problem}; {_PASTED}")
    return structured_inherits


def _lower_autogen(r: _Reader) -> list[OperatorName]:
    autogen: list[OperatorName] = []
    autogen_s = r.expect("autogen", str, "", "a string of operator names separated by ', '")
    if not autogen_s:
        return autogen
    node = r.scalar_of("autogen")
    for piece in autogen_s.split(", "):
        name, issues = parse_operator_name(piece)
        where = ScalarText(node)
        start, _ = _find(node.value, piece)
        r.diagnostics.extend(_issue_to_diag(i.moved(start), where) for i in issues)
        if name is not None:
            autogen.append(name)
    return autogen


_ENTRY_KEY_NAMES = ENTRY_KEYS.keys()


def _check_unknown_keys(r: _Reader, entry: YMap) -> None:
    """Every key of ENTRY_KEYS is read by lower_native_function; the others are unknown."""
    if len(r.pairs) == len(entry.pairs) and r.pairs.keys() <= _ENTRY_KEY_NAMES:
        return  # every key is a known name, given once (the usual case, asked of every entry)
    leftover = [(k, v) for k, v in entry.pairs if not (isinstance(k, YScalar) and k.value in ENTRY_KEYS)]
    for k, _ in leftover:
        key = k.value if isinstance(k, YScalar) else k
        hint, data = did_you_mean(str(key), ENTRY_KEYS)
        r.error("OPG102", k.span, f"unknown key '{key}' in a native_functions.yaml entry{hint}", data)


def _check_schema_rules(r: _Reader, func: FunctionSchema, f: _Func, spans: SchemaSpans, use_const_ref: bool,
                        release: Release) -> None:
    for problem in check_schema(func):
        r.error("OPG206", _schema_problem_span(problem.where, spans, f.text), problem.message)
    if _may_be_untranslatable(f.value):
        for where, why in untranslatable_types(func):
            r.error("OPG208", _schema_problem_span(where, spans, f.text), why)
    if "!)?" in f.value:
        for arg, reason in mutable_optional_tensors(func, use_const_ref):
            r.error("OPG208", _schema_problem_span(arg, spans, f.text), reason)
    if not release.named_tensor_types and "Dimname" in f.value:
        _refuse_named_tensor_types(r, func, spans, f.text, release)
    if "ConstQuantizerPtr" in f.value:
        _refuse_const_quantizer_ptr(r, func, spans, f.text, release)
    if not release.symbool_type and "SymBool" in f.value:
        _refuse_newer_type(r, func, spans, f.text, release, BaseTy.SymBool, "2.5")
    if not release.device_index_type and "DeviceIndex" in f.value:
        _refuse_newer_type(r, func, spans, f.text, release, BaseTy.DeviceIndex, "2.1")
    if not release.optional_tensor_returns and "?" in f.value.rpartition("->")[2]:
        _refuse_optional_tensor_returns(r, func, spans, f.text, release)


def _default_dispatch(r: _Reader, func: FunctionSchema, keys: _Keys, f: _Func,
                      spans: SchemaSpans) -> _Table:
    """An entry without a dispatch table: a CompositeImplicitAutograd kernel of the default name, unless the
    op is structured or delegated (then it has none)."""
    dispatch: _Table = {}
    if keys.structured or keys.structured_delegate is not None:
        return dispatch
    name = str(func.name.name)
    args = func.arguments
    if name.startswith("new_") or name.endswith("_like") or (args.tensor_options and not args.has_tensor_arg()):
        r.error("OPG112", f.text.span(*spans.name),
                f"factory function '{name}' needs an explicit dispatch table (usually "
                "CompositeExplicitAutograd): factory functions must not decompose implicitly")
    dispatch[dk.CIA] = BackendMetadata(cpp_name(func), False, "at::native")
    return dispatch


def _check_composites(r: _Reader, entry: YMap, dispatch: _Table) -> None:
    if len(dispatch) < 2:
        return  # (one key is at most one composite: most tables, and every default one)
    composites = dispatch.keys() & dk.COMPOSITE_KEYS
    if not (len(composites) <= 1 or (len(composites) == 2 and dk.CEA_NON_FUNCTIONAL not in composites
                                     and dk.CIA_NESTED in composites)):
        r.error("OPG113", r.key_span("dispatch") or entry.span,
                "only one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional and "
                "CompositeImplicitAutograd may be given (each subsumes the others); use "
                "CompositeExplicitAutograd for an explicit autograd formula, else CompositeImplicitAutograd")


def _add_ufunc_kernels(r: _Reader, entry: YMap, func: FunctionSchema, structured: bool,
                       dispatch: _Table) -> None:
    """A ufunc op's CPU and CUDA kernels are generated: they join its dispatch table."""
    ufunc_key_span = r.key_span_of("ufunc_inner_loop")
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


def _check_delegated_keys(r: _Reader, entry: YMap, dispatch: _Table) -> None:
    for key in _STRUCTURED_KEYS_IN_ORDER:
        if key in dispatch:
            r.error("OPG123", _dispatch_key_span(entry, key.name) or entry.span,
                    f"an op with structured_delegate must not have {key} in dispatch: it is delegated")


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


def _refuse_newer_type(r: _Reader, func: FunctionSchema, spans: SchemaSpans, text: ScalarText, release: Release,
                       ty: BaseTy, since: str) -> None:
    """`ty` is a type of func: schemas from torch `since` (SymBool from 2.5, DeviceIndex from 2.1); torchgen before
    it does not know it."""
    found = [text.span(*spans.arguments[i].type) for i, a in enumerate(func.arguments.flat_all)
             if a.type.is_base_ty_like(ty) and i < len(spans.arguments)]
    found += [text.span(*spans.each_return[i]) for i, ret in enumerate(func.returns)
              if ret.type.is_base_ty_like(ty) and i < len(spans.each_return)]
    for span in found:
        r.error("OPG203", span, f"unknown type '{ty.name}': it is a type of native_functions.yaml from torch {since}; "
                                f"this is {release}")


def _refuse_optional_tensor_returns(r: _Reader, func: FunctionSchema, spans: SchemaSpans, text: ScalarText,
                                    release: Release) -> None:
    """A `Tensor?` return (or a list of them) has a C++ type from 2.2; gen.py before it fails on it (no other
    optional return has one in any release: codegen_rules.unreturnable)."""
    for i, ret in enumerate(func.returns):
        t = ret.type.elem if isinstance(ret.type, ListType) else ret.type
        if t == OptionalType(TENSOR) and i < len(spans.each_return):
            r.error("OPG208", text.span(*spans.each_return[i]),
                    f"a '{ret.type}' return has no C++ type in torchgen's codegen before torch 2.2 (gen.py of "
                    f"{release} fails on it: unrecognized return type)")


def _refuse_const_quantizer_ptr(r: _Reader, func: FunctionSchema, spans: SchemaSpans, text: ScalarText,
                                release: Release) -> None:
    """ConstQuantizerPtr is a type of torchgen's model until 2.5, with no C++ type (gen.py parses it and fails to
    generate: OPG208, as a custom class); unknown after (OPG203)."""
    code = "OPG208" if release.const_quantizer_ptr_type else "OPG203"
    found = [(t, text.span(*spans.arguments[i].type)) for i, t in enumerate(a.type for a in func.arguments.flat_all)
             if t.is_base_ty_like(BaseTy.ConstQuantizerPtr) and i < len(spans.arguments)]
    found += [(t, text.span(*spans.each_return[i])) for i, t in enumerate(ret.type for ret in func.returns)
              if t.is_base_ty_like(BaseTy.ConstQuantizerPtr) and i < len(spans.each_return)]
    for t, span in found:
        r.error(code, span, f"the type '{t}' has no C++ type in torchgen's codegen (gen.py of {release} fails on it)"
                if release.const_quantizer_ptr_type else f"unknown type '{t}'")


# The variants lines of nearly every entry; others are read piece by piece.
_COMMON_VARIANTS = {
    "function": frozenset({Variant.function}),
    "method": frozenset({Variant.method}),
    "function, method": frozenset({Variant.function, Variant.method}),
    "method, function": frozenset({Variant.function, Variant.method}),
}


_FUNCTION_ONLY = _COMMON_VARIANTS["function"]
_NO_KEYS: frozenset[dk.DispatchKey] = frozenset()


def _lower_variants(r: _Reader, entry: YMap) -> frozenset[Variant]:
    pair = r.pairs.get("variants")
    if pair is None:
        return _FUNCTION_ONLY
    if isinstance(written := pair[1], YScalar) and isinstance(written.value, str) and written.value in _COMMON_VARIANTS:
        return _COMMON_VARIANTS[written.value]  # (nearly every entry: what expect() below would give, without a call)
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


def _lower_precomputed(r: _Reader, structured: bool) -> Precompute | None:
    node = r.peek("precomputed")
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return None
    if structured is not True:
        r.error("OPG115", r.key_span_of("precomputed"), "precomputed needs 'structured: True'")
    if not isinstance(node, YSeq):
        if isinstance(node, YScalar) and not node.value:
            return None
        r.error("OPG115", node.span, "precomputed must be a list of 'kernel_arg -> type name, ...' lines")
        return None
    if not node.items:
        return None
    items = list(node.items)
    add: list[Argument] = []
    added = True
    last = items[-1]
    if isinstance(last, YScalar) and isinstance(last.value, str) and " -> " not in last.value:
        add, added = _precomputed_arguments(r, last, last.value, 0)
        items = items[:-1]
    elif not (isinstance(last, YScalar) and isinstance(last.value, str)):
        r.error("OPG115", last.span, "each precomputed item must be a string")
        return None
    replace, lines, replaced = _precomputed_replacements(r, items)
    if not (added and replaced):
        return None
    result = Precompute(tuple((k, tuple(v)) for k, v in replace.items()), tuple(add))
    expected = result.to_list()
    for item, line in zip(lines, expected):
        if item.value != line:
            r.error("OPG115", item.span, f"write this precomputed line as '{line}'")
            return None
    return result


def _precomputed_replacements(r: _Reader, items: list[YNode]) -> tuple[dict[str, list[Argument]], list[YScalar], bool]:
    """The 'kernel_arg -> type name, ...' lines: what replaces each kernel argument, the lines (the items that are
    strings), and whether every line was well formed (each problem is reported)."""
    replace: dict[str, list[Argument]] = {}
    lines: list[YScalar] = []
    ok = True
    for item in items:
        if not (isinstance(item, YScalar) and isinstance(item.value, str)):
            r.error("OPG115", item.span, "each precomputed item must be a string")
            ok = False
            continue
        lines.append(item)
        value = item.value
        if " -> " not in value:
            r.error("OPG115", item.span, f"'{value}': only the last precomputed line may add values without "
                                         "replacing a kernel argument ('kernel_arg -> type name, ...')")
            ok = False
            continue
        parts = value.split(" -> ")
        if len(parts) != 2:
            r.error("OPG115", item.span, f"'{value}': write 'kernel_arg -> type name, ...' with one ' -> '")
            ok = False
            continue
        arg, rest = parts
        if " " in arg:
            r.error("OPG115", ScalarText(item).span(0, len(arg)), f"illegal kernel argument name '{arg}'")
            ok = False
            continue
        if arg in replace:
            r.error("OPG115", item.span, f"kernel argument '{arg}' is replaced twice")
            ok = False
        replace[arg], parsed = _precomputed_arguments(r, item, rest, len(arg) + 4)
        ok = ok and parsed
    return replace, lines, ok


def _precomputed_arguments(r: _Reader, scalar: YScalar, text: str, start: int) -> tuple[list[Argument], bool]:
    """The arguments of a 'type name, ...' text at start in the scalar, and whether each one parsed."""
    out = []
    ok = True
    pos = start
    for piece in text.split(","):
        stripped = piece.strip()
        offset = pos + (len(piece) - len(piece.lstrip()))
        arg, issues = parse_argument_text(stripped)
        for i in issues:
            r.diagnostics.append(_issue_to_diag(i.moved(offset), ScalarText(scalar)))
        if arg is None:
            ok = False
        else:
            if arg.name.upper() == arg.name:
                r.error("OPG115", ScalarText(scalar).span(offset, offset + len(stripped)),
                        f"precomputed argument name '{arg.name}' must not be all upper case")
            out.append(arg)
        pos += len(piece) + 1
    return out, ok


def _lower_tags(r: _Reader, valid_tags: frozenset[str], namespace: str, func: FunctionSchema | None,
                release: Release) -> frozenset[str]:
    node = r.peek("tags")
    written: list[tuple[str, Span]] = []  # each tag name as written, and where
    if node is None:
        pass
    elif release.tags_as_comma_separated_string:
        if isinstance(node, YScalar) and isinstance(node.value, str):
            written = list(_comma_separated_tags(node))
        else:
            r.error("OPG101", node.span, f"'tags' must be one string of tag names separated by ', ' in {release} "
                                         "(`tags: core, pointwise`; a list of tags arrived in torch 2.0)")
    elif isinstance(node, YScalar) and isinstance(node.value, str):
        written = [(node.value, node.span)]
    elif isinstance(node, YSeq):
        for item in node.items:
            if isinstance(item, YScalar) and isinstance(item.value, str):
                written.append((item.value, item.span))
            else:
                r.error("OPG107", item.span, "a tag must be a plain tag name from tags.yaml")
    else:
        r.error("OPG101", node.span, "'tags' must be a tag name or a list of tag names")
    names: list[str] = []
    for name, span in written:
        if not valid_tags:
            r.error("OPG107", span, "no tags are defined: tags.yaml is missing or empty")
            continue
        if name not in valid_tags:
            hint, data = did_you_mean(name, valid_tags)
            r.error("OPG107", span, f"unknown tag '{name}': tags.yaml does not define it{hint}", data)
            continue
        names.append(name)
    if namespace == "aten" and "pt2_compliant_tag" in valid_tags and release.aten_ops_get_pt2_compliant_tag:
        names.append("pt2_compliant_tag")
    if func is not None and func.is_out_fn() and "out" in valid_tags:
        names.append("out")
    if func is not None and func.name.name.inplace and "inplace" in valid_tags:
        names.append("inplace")
    return frozenset(names)


def _comma_separated_tags(node: YScalar) -> Iterator[tuple[str, Span]]:
    """The tag names of torch 1.13's `tags: a, b` (split on ", " exactly, as its torchgen does: an empty string has
    none), each with its place in the scalar."""
    assert isinstance(node.value, str)
    if not node.value:
        return
    text, pos = ScalarText(node), 0
    for name in node.value.split(", "):
        yield name, text.span(pos, pos + len(name))
        pos += len(name) + 2


def _lower_dispatch(r: _Reader, manual_kernel_registration: bool, structured: bool,
                    ignore_keys: frozenset[dk.DispatchKey] = frozenset(), *, release: Release
                    ) -> tuple[_Table | None, _Kernels]:
    """The dispatch table as {key: metadata} (None when the entry has none), and the kernels as
    written per key, one for every key named (valid or not); a key the release's gen.py lacks is refused."""
    node = r.peek("dispatch")
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return None, []
    if not isinstance(node, YMap):
        r.error("OPG101", node.span, "'dispatch' must be a mapping of dispatch keys to kernel names")
        return None, []
    if manual_kernel_registration:
        r.error("OPG109", r.key_span_of("dispatch"), "manual_kernel_registration and dispatch cannot be used "
                                                        "together: with manual registration, dispatch has no effect")
    table: _Table = {}
    kernels: _Kernels = []
    seen: set[dk.DispatchKey] = set()
    supported, unknown = _supported_keys(release.backend_dispatch_keys), release.dispatch_keys_unknown
    structured_keys = dk.STRUCTURED_DISPATCH_KEYS if structured else _NO_KEYS
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
        problem, kernel, cpp_namespace, ok = _kernel_reading(kernel_text, release.dispatch_kernel_namespace_levels)
        if problem is not None:
            r.error("OPG141", value_node.span, f"dispatch key '{key_node.value}': {problem}; {_PASTED}")
        for name, start, key in _key_pieces(key_node.value):
            kernels.append((key, kernel_text))
            if ok and key in supported and name not in unknown and key not in seen and key not in ignore_keys:
                seen.add(key)  # the usual key: the checks below all pass
                table[key] = BackendMetadata(kernel, key in structured_keys, cpp_namespace)
                continue
            later = name in unknown  # checked before gen.py's ignored keys, as gen.py does
            if key is None or key not in supported or key in seen or later:
                span = ScalarText(key_node).span(start, start + len(name))
            if later:
                r.error("OPG105", span, f"dispatch key '{name}' is not one {release}'s native_functions.yaml may use "
                                        "(a later torch release added it)")
                continue
            if key in ignore_keys:
                continue
            if key is None:
                hint, data = did_you_mean(name, dk.SUPPORTED_KEY_NAMES)
                r.error("OPG104", span, f"unknown dispatch key '{name}'{hint}", data)
                continue
            if key not in supported:
                hint, data = did_you_mean(name, dk.SUPPORTED_KEY_NAMES)
                r.error("OPG105", span, f"dispatch key '{name}' exists but native_functions.yaml may not use it{hint}",
                        data)
                continue
            if not ok:
                if not any(d.code == "OPG108" and d.span == value_node.span for d in r.diagnostics):
                    r.error("OPG108", value_node.span, f"kernel '{kernel_text}': at most "
                            f"{release.dispatch_kernel_namespace_levels} namespace levels are supported in {release}")
                continue
            if key in seen:
                r.warn("OPG104", span, f"dispatch key '{name}' is given twice; torchgen keeps the later kernel")
            seen.add(key)
            table[key] = BackendMetadata(kernel, bool(structured) and key in dk.STRUCTURED_DISPATCH_KEYS, cpp_namespace)
    return table, kernels


@functools.lru_cache(maxsize=16)  # one per backend key set of the files open (most runs: the empty set alone)
def _supported_keys(backend_keys: frozenset[str]) -> frozenset[dk.DispatchKey]:
    """The keys a dispatch table may name: native_functions.yaml's, and those a backend's torchgen appends."""
    return frozenset(dk.SUPPORTED_DISPATCH_KEYS) | {dk.K[n] for n in backend_keys if n in dk.K}


# A kernel name without namespace, as nearly all are: a C++ identifier in the at::native namespace.
_PLAIN_KERNEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _kernel_reading(kernel_text: str, levels: int) -> tuple[str | None, str, str, bool]:
    """A dispatch table's kernel: why it is no C++ name (None when it is one), its name without namespace, its C++
    namespace, and whether it has at most the namespace `levels` the release's torchgen takes."""
    if _PLAIN_KERNEL.match(kernel_text) is not None:  # (one C test: most kernel names are an entry's own)
        return None, kernel_text, "at::native", True
    return _qualified_kernel_reading(kernel_text, levels)


# Kernel names and key lists repeat across entries (CPU, CUDA: the same names again and again), and reading them is
# most of reading a dispatch table: each is read once. Bounded, for a long editing session.
@functools.lru_cache(maxsize=8192)
def _qualified_kernel_reading(kernel_text: str, levels: int) -> tuple[str | None, str, str, bool]:
    """_kernel_reading of a name the quick test leaves: a namespace, or no plain identifier."""
    namespace, kernel, ok = _namespace_entity(kernel_text, levels)
    return qualified_name_problem(kernel_text, "kernel name"), kernel, (namespace or "at") + "::native", ok


@functools.lru_cache(maxsize=1024)  # per dispatch: key text (the real file has about 200)
def _key_pieces(key_text: str) -> tuple[tuple[str, int, dk.DispatchKey | None], ...]:
    """The keys a dispatch table's key names ('CPU, CUDA'): each name, where it starts in the text, and its
    DispatchKey (None when there is no such key)."""
    pieces = []
    pos = 0
    for piece in key_text.split(","):
        name = piece.strip()
        pieces.append((name, pos + (len(piece) - len(piece.lstrip())), dk.K.get(name)))
        pos += len(piece) + 1
    return tuple(pieces)


def _check_dispatch_table(r: _Reader, func: FunctionSchema, table: _Table, kernels: _Kernels,
                          structured_delegate: OperatorName | None, release: Release) -> None:
    # Both rules are about a table of one kernel: one written (from 2.0), or one kept after gen.py's ignored keys.
    if release.dispatch_table_rules_count_keys_as_written:
        if len(kernels) != 1:
            return
        expected = cpp_name(func)
        key, kernel = kernels[0]
        redundant = key is dk.CIA and kernel == expected
    else:
        if len(table) != 1:
            return
        expected = cpp_name(func)
        redundant = any(key is dk.CIA and kernel == expected for key, kernel in kernels)
    dispatch_span = r.key_span_of("dispatch")
    if redundant:
        r.error("OPG110", dispatch_span, f"unnecessary dispatch table: CompositeImplicitAutograd: {expected} is the "
                                         "default; delete the dispatch table")
    elif structured_delegate is None and set(table) == {dk.CIA} and not table[dk.CIA].supports_symint():
        r.error("OPG111", _dispatch_key_span(r.entry, "CompositeImplicitAutograd") or dispatch_span,
                f"a lone CompositeImplicitAutograd kernel must be named {expected}: rename "
                f"{table[dk.CIA].kernel} to {expected} and delete the dispatch table")


def _check_codegen_rules(r: _Reader, func: FunctionSchema, dispatch: _Table, structured: bool,
                         variants: frozenset[Variant], release: Release) -> None:
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
    # A plain loop rather than any() over a generator: asked of every entry.
    for meta in dispatch.values():
        if meta.supports_symint():
            break
    else:
        return
    if not func.has_symint(returns_too=release.cpp_spelling.symint_returns_follow_signature):
        for key, meta in dispatch.items():
            if meta.supports_symint():
                r.error("OPG125", _dispatch_key_span(r.entry, key.name) or r.entry.span,
                        f"kernel '{meta.kernel}' is named *_symint, but the schema has no SymInt argument; "
                        "drop the suffix (torchgen refuses to declare it)")


def _check_post_init(r: _Reader, func: FunctionSchema, kind: SchemaKind | None, keys: _Keys, spans: SchemaSpans,
                     f: _Func) -> None:
    """The rules of torchgen's NativeFunction.__post_init__ that need the whole entry."""
    structured, delegate, device_guard = keys.structured, keys.structured_delegate, keys.device_guard
    if func.arguments.out and keys.variants != _FUNCTION_ONLY:
        r.error("OPG117", r.key_span("variants") or f.text.span(*spans.name),
                "functions with out arguments must have only the function variant ('variants: function')")
    if structured:
        if kind is not SchemaKind.out:
            r.error("OPG116", r.key_span_of("structured"), "'structured: True' goes on the out= variant; "
                                                            "did you mean structured_delegate?")
        if not device_guard:
            r.error("OPG116", r.key_span_of("device_guard"),
                    "device_guard: False is not respected by structured kernels")
    if delegate is not None:
        if kind is SchemaKind.out:
            r.error("OPG116", r.key_span_of("structured_delegate"), "structured_delegate is not allowed on out= "
                                                                     "functions; did you mean 'structured: True'?")
        if not device_guard:
            r.error("OPG116", r.key_span_of("device_guard"),
                    "device_guard: False is not respected by structured kernels")
    if structured and delegate is not None:
        r.error("OPG116", r.key_span_of("structured_delegate"),
                "an op cannot be both structured and a structured_delegate")
    if keys.cpp_no_default_args:
        _check_cpp_no_default_args(r, func, keys.cpp_no_default_args)
    if keys.structured_inherits is not None and not structured:
        r.error("OPG116", r.key_span_of("structured_inherits"), "structured_inherits requires 'structured: True'")
    if structured and kind is SchemaKind.out:
        for where, why in structured_out_problems(func):
            r.error("OPG116", _schema_problem_span(where, spans, f.text), why)


def _check_cpp_no_default_args(r: _Reader, func: FunctionSchema, cpp_no_default_args: list[object]) -> None:
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


def _check_name_rules(r: _Reader, func: FunctionSchema, keys: _Keys, tags: frozenset[str], spans: SchemaSpans,
                      f: _Func, release: Release) -> None:
    """The rules about what an op's name and arguments say it is (a _foreach kernel, a random op)."""

    def name_span() -> Span:
        return f.text.span(*spans.name)

    # Both rules look for words that, if they matter, appear in the schema text: skip them if not.
    schema_text = f.value
    op = str(func.name) if "_foreach" in schema_text else ""
    if op.startswith("_foreach") and keys.device_check is not DeviceCheckType.NoCheck:
        r.error("OPG121", r.key_span("device_check") or name_span(),
                "_foreach kernels fall back to a slow path across devices: set 'device_check: NoCheck'")
    if "nondeterministic_seeded" in tags or not ("rand" in schema_text or "dropout" in schema_text
                                                 or "Generator" in schema_text):
        return
    op = str(func.name)
    dropout = "dropout" in op or (release.seeded_tag_by_dropout_arguments
                                  and any("dropout" in a.name for a in func.arguments.flat_all))
    named_random = "rand" in op and not (release.philox_ops_need_no_seeded_tag and "_philox_" in op)
    random = (named_random or (dropout and "backward" not in op and str(func.name.name) != "_cudnn_init_dropout_state")
              or func.arguments.has_generator_arg())
    if random:
        r.error("OPG122", r.key_span("tags") or name_span(),
                f"'{op}' looks random (its name or a Generator argument): add the tag nondeterministic_seeded",
                (("add-tag", "nondeterministic_seeded"),
                 *((("tags-form", "comma-separated"),) if release.tags_as_comma_separated_string else ())))


def _lower_ufunc(r: _Reader, unknown: frozenset[str]) -> dict[UfuncKey, UfuncInnerLoop]:
    """unknown: the dtype names the release's ScalarType lacks."""
    node = r.peek("ufunc_inner_loop")
    loops: dict[UfuncKey, UfuncInnerLoop] = {}
    if node is None:
        return loops
    if isinstance(node, YScalar) and isinstance(node.value, str):
        loop = _parse_ufunc_loop(node.value, UfuncKey.Generic, unknown)
        if isinstance(loop, str):
            r.error("OPG114", node.span, loop)
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
        loop = _parse_ufunc_loop(v.value, UfuncKey[k.value], unknown)
        if isinstance(loop, str):
            r.error("OPG114", v.span, loop)
        else:
            loops[UfuncKey[k.value]] = loop
    return loops
