"""derivatives.yaml against native_functions.yaml: every rule torchgen's autograd loader enforces.

torchgen (torchgen/packaged/autograd/load_derivatives.py, the same rules in every release 2.6-2.15: only the
native_functions.yaml it reads differs, and that is parsed with its release's rules) resolves each entry's `name:` to a
schema, maps it to the canonical function of its signature group, and builds one
DifferentiabilityInfo per dispatch key; it stops at the first rule broken, with no line. Here every
entry is analysed on its own (and memoized by the identity of its entry and of the functions it
resolves to, so that an edit of either yaml re-analyses only the entries it touched), every broken
rule becomes a located diagnostic, and the node class names (AbsBackward0, ...) are numbered in a
last pass over the file, as torchgen numbers them.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...diagnostics import Diagnostic, diag
from ...frozen import record
from ...index.derivatives import DerivativesDocument
from ...model import dispatch as dk
from ...model.derivatives import DEFAULT_KEY, DerivativeEntry, Formula
from ...model.native_function import NativeFunction, NativeFunctionsViewGroup, Variant
from ...model.native_yaml import NativeFunctions
from ...model.schema import SchemaKind, SchemaKindError, signature_key
from ...pieces.api import cpp
from ...pieces.api.signatures import CppSignatureGroup
from ...pieces.api.types import ApiOptions, Binding, NamedCType
from ...releases import Release
from ...releases.profile import STD_OPTIONAL
from ...suggest import did_you_mean
from ...syntax.locate import ScalarText
from ...syntax.nodes import YScalar
from ...text import Span
from .formulas import (
    SavedAttribute,
    StridesError,
    count_uses,
    dedup,
    element_wise_forward,
    grad_index_spans,
    gradient_indices,
    ident,
    op_prefix,
    saved_variables,
    unsupported_calls,
    uses,
)

# AUTOGRAD_KEYS of torchgen.model: AutogradNestedTensor and Autograd<component> per backend component.
AUTOGRAD_KEYS = ("AutogradNestedTensor",) + tuple(f"Autograd{c}" for c in dk.BACKEND_COMPONENTS)
TENSOR_LISTS = ("at::TensorList", "const at::ITensorListRef &")


def schema_keys(f: NativeFunction) -> tuple[str, str]:
    """What the loader looks a function up by: its printed schema and its printed signature."""
    return str(f.func), signature_key(f.func)


@record
class NativeIndex:
    """The lookups the loader makes: functions by printed schema, and by printed signature."""

    by_schema: dict[str, NativeFunction]
    by_signature: dict[str, list[NativeFunction]]
    view_copies: dict[str, NativeFunction]  # a view op's name -> its view_copy function
    by_name: dict[str, list[str]]  # C++ API name -> the schemas of that name (suggestions for unknown schemas)
    release: Release  # whose loader: the functions it knows and how formulas save their inputs
    # native_functions.yaml read in part (OPG007): whether an op of a name may be declared past the cut.
    may_lie_past_the_cut: Callable[[str], bool] = lambda name: False

    @staticmethod
    def of(functions: NativeFunctions, release: Release,
           keys: Callable[[NativeFunction], tuple[str, str]] = schema_keys) -> NativeIndex:
        by_schema: dict[str, NativeFunction] = {}
        by_signature: dict[str, list[NativeFunction]] = {}
        # Before 2.3 the loader leaves the view groups' _copy functions out: no entry can name one.
        hidden = set() if release.autograd.names_view_copies else {
            id(g.view_copy) for g in functions.view_groups
            if isinstance(g, NativeFunctionsViewGroup) and g.view_copy is not None}
        for f in functions.native_functions:
            if id(f) in hidden:
                continue
            schema, signature = keys(f)
            by_schema.setdefault(schema, f)
            by_signature.setdefault(signature, []).append(f)
        view_copies = {str(g.view.func.name): g.view_copy for g in functions.view_groups
                       if isinstance(g, NativeFunctionsViewGroup) and g.view_copy is not None}
        by_name: dict[str, list[str]] = {}
        for schema, f in by_schema.items():
            by_name.setdefault(cpp.name(f.func), []).append(schema)
        return NativeIndex(by_schema, by_signature, view_copies, by_name, release, functions.may_lie_past_the_cut)


@record
class Derivative:
    """One backward formula, rewritten, with what it saves."""

    formula: str
    original: str  # as written (auto_element_wise derives its forward formula from it)
    var_names: tuple[str, ...]
    saved_inputs: tuple[SavedAttribute, ...]
    saved_outputs: tuple[SavedAttribute, ...]


@record
class KeyInfo:
    """What one dispatch key's formulas make of the op (torchgen's DifferentiabilityInfo, in part)."""

    key: str
    derivatives: tuple[Derivative, ...]
    args_with_derivatives: tuple[Binding, ...]
    all_saved_inputs: tuple[SavedAttribute, ...]
    all_saved_outputs: tuple[SavedAttribute, ...]


@record
class EntryAnalysis:
    """One entry: the function it names, its canonical function, per-key infos, its diagnostics (relative)."""

    function: NativeFunction | None
    canonical: NativeFunction | None
    keys: tuple[KeyInfo, ...]
    diagnostics: tuple[Diagnostic, ...]


@record
class NodeInfo:
    """An autograd node class the generator writes: its name, the entry (line) and key it comes from."""

    op: str
    name: str  # the op name (torchgen's info.name)
    line: int
    key: KeyInfo
    canonical: NativeFunction


# (first line, entry, analysis) of each entry, in file order.
_Analysed = tuple[int, DerivativeEntry, EntryAnalysis]


@dataclass(frozen=True)
class DerivativesCheck:
    document: DerivativesDocument
    index: NativeIndex
    analyses: tuple[tuple[int, DerivativeEntry, EntryAnalysis], ...]  # (first line, entry, analysis), in file order
    nodes: tuple[NodeInfo, ...]
    diagnostics: tuple[Diagnostic, ...]
    release: Release  # the torch release of the file (its Functions.h structs, in the hover)


# The analysis of an entry is the same in every release (it is cached across them): it compares C++ types and
# names and renders no type into a file (functions_h renders the saved fields in the release's spelling), so its
# bindings carry one spelling, the one TENSOR_LIST_TYPES (functions_h) is written in.
ANALYSIS_SPELLING = STD_OPTIONAL


def cpp_arguments(f: NativeFunction) -> list[Binding]:
    """The arguments formulas name: the C++ API's (SymInt where the schema has it), packed TensorOptions."""
    group = CppSignatureGroup.from_native_function(f, method=False, spelling=ANALYSIS_SPELLING)
    return (group.symint_signature or group.signature).arguments()


class DerivativesChecker:
    """Checks derivatives.yaml documents against native_functions.yaml, reusing the analysis of every entry
    whose text and resolved functions did not change (an edit of either file re-analyses only what it touched)."""

    def __init__(self) -> None:
        self._functions: NativeFunctions | None = None
        self._release: Release | None = None
        self._index: NativeIndex | None = None
        self._memo: dict[int, tuple[DerivativeEntry, tuple[object, ...], EntryAnalysis]] = {}
        self._keys: dict[int, tuple[NativeFunction, tuple[str, str]]] = {}

    def index(self, functions: NativeFunctions, release: Release) -> NativeIndex:
        if functions is not self._functions or release is not self._release or self._index is None:
            keys: dict[int, tuple[NativeFunction, tuple[str, str]]] = {}

            def keys_of(f: NativeFunction) -> tuple[str, str]:
                found = self._keys.get(id(f))
                keys[id(f)] = found if found is not None and found[0] is f else (f, schema_keys(f))
                return keys[id(f)][1]

            index = NativeIndex.of(functions, release, keys_of)
            if self._index is not None and index.by_name == self._index.by_name:
                # The same names and schemas: entries that name none keep their analyses (see _reads).
                index = dataclasses.replace(index, by_name=self._index.by_name)
            if release is not self._release:
                self._memo = {}  # the analyses follow the release's loader
            self._functions, self._release, self._index, self._keys = functions, release, index, keys
        return self._index

    def check(self, document: DerivativesDocument, functions: NativeFunctions, release: Release) -> DerivativesCheck:
        index = self.index(functions, release)
        memo: dict[int, tuple[DerivativeEntry, tuple[object, ...], EntryAnalysis]] = {}
        analyses = []
        for line, entry in document.entries():
            reads = _reads(entry, index)
            found = self._memo.get(id(entry))
            if found is not None and found[0] is entry and _same(found[1], reads):
                analysis = found[2]
            else:
                analysis = analyse_entry(entry, index)
            memo[id(entry)] = (entry, reads, analysis)
            analyses.append((line, entry, analysis))
        self._memo = memo
        nodes, across = _across_entries(analyses)
        nodes += _view_copy_nodes(nodes, analyses, index)
        diagnostics = list(document.diagnostics)
        for line, _, analysis in analyses:
            diagnostics.extend(d.shifted(line) for d in analysis.diagnostics)
        diagnostics.extend(across)
        diagnostics.sort(key=lambda d: (d.span.start_line, d.span.start_col, d.code))
        return DerivativesCheck(document, index, tuple(analyses), tuple(nodes), tuple(diagnostics), release)


def _reads(entry: DerivativeEntry, index: NativeIndex) -> tuple[object, ...]:
    """What analyse_entry reads for an entry: whether its op may lie past where reading native_functions.yaml
    stopped, the function it names and that one's signature group, or, when it names none, the schemas by name
    (its did-you-mean comes from all of them)."""
    if entry.defn_name is None:
        return ()
    function = index.by_schema.get(entry.specification)
    past_the_cut = index.may_lie_past_the_cut(entry.specification.partition("(")[0])  # a bool: compared by `is`
    if function is None:
        return (past_the_cut, index.by_name)
    return (past_the_cut, function, *index.by_signature[signature_key(function.func)])


def _same(old: tuple[object, ...], new: tuple[object, ...]) -> bool:
    """Whether an analysis made from `old` holds for `new`: the very same objects (the native parser keeps the
    functions of unchanged entries; the checker keeps the schemas by name while they are equal)."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new))


def _across_entries(analyses: Sequence[_Analysed]) -> tuple[list[NodeInfo], list[Diagnostic]]:
    """Node class names, numbered in file order per prefix, and entries that redefine a function."""
    counter: Counter[str] = Counter()
    nodes: list[NodeInfo] = []
    first: dict[int, int] = {}
    diagnostics: list[Diagnostic] = []
    for line, entry, analysis in analyses:
        canonical = analysis.canonical
        if canonical is None or entry.defn_name is None:
            continue
        if id(canonical) in first:
            diagnostics.append(diag("OPG752", entry.name_node.span.shifted(line),
                                    f"the formulas of {canonical.func.name} are already defined by the entry on line "
                                    f"{first[id(canonical)] + 1}; torchgen keeps only this later one"))
        first.setdefault(id(canonical), line)
        for info in analysis.keys:
            if not info.args_with_derivatives:
                continue
            prefix = op_prefix(entry.defn_name) + ("" if info.key == DEFAULT_KEY else info.key)
            nodes.append(NodeInfo(f"{prefix}{counter[prefix]}", entry.defn_name, line, info, canonical))
            counter[prefix] += 1
    return nodes, diagnostics


def _view_copy_nodes(nodes: list[NodeInfo], analyses: Sequence[_Analysed], index: NativeIndex) -> list[NodeInfo]:
    """The `<Node>_copy` twins torchgen writes for the nodes of a view op with a view_copy function
    (add_view_copy_derivatives): the same formulas, unless an entry gives the view_copy its own."""
    own = {id(analysis.canonical) for _, _, analysis in analyses}
    out: list[NodeInfo] = []
    for node in nodes:
        copy = index.view_copies.get(str(node.canonical.func.name))
        if copy is not None and id(copy) not in own:
            out.append(NodeInfo(f"{node.op}_copy", f"{node.name}_copy", node.line, node.key, copy))
    return out


# ---------------------------------------------------------------------------------------- one entry

def _key_text(formula: Formula) -> str:
    """The formula's key as written (model.derivatives keeps only formulas whose key is a string)."""
    return str(formula.key.value)


class _Report:
    """Diagnostics of one entry, with spans inside formulas where they are exact."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def add(self, code: str, span: Span, message: str, data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, data=data))

    @staticmethod
    def within(scalar: YScalar, start: int, end: int) -> Span:
        return ScalarText(scalar).span(start, end)

    def name_span(self, formula: Formula, name: str) -> Span:
        key = _key_text(formula)
        at = key.find(name) if name else -1
        return self.within(formula.key, at, at + len(name)) if at >= 0 else formula.key.span

    def ident_span(self, formula: Formula, name: str) -> Span:
        m = ident(name).search(formula.text)
        if m is None:
            return formula.value.span
        return self.within(formula.value, m.start() + len(m.group(1)), m.end() - len(m.group(2)))


def analyse_entry(entry: DerivativeEntry, index: NativeIndex) -> EntryAnalysis:
    report = _Report()
    if entry.defn_name is None:
        return EntryAnalysis(None, None, (), ())
    function = index.by_schema.get(entry.specification)
    # native_functions.yaml read in part: its op, or the variant formulas attach to, may lie past the cut.
    past_the_cut = index.may_lie_past_the_cut(entry.specification.partition("(")[0])
    if function is None:
        if not past_the_cut:
            _unknown_schema(entry, index, report)
        return EntryAnalysis(None, None, (), tuple(report.diagnostics))
    canonical = _canonical(index.by_signature[signature_key(function.func)], entry.defn_name)
    if canonical is None and past_the_cut:
        return EntryAnalysis(function, None, (), ())
    if canonical is None:
        report.add("OPG705", entry.name_node.span,
                   f"{entry.specification} has no function to attach formulas to: its signature group has no "
                   f"variant named '{entry.defn_name}' that is not an out= or functional variant, and its first "
                   f"variant is not the in-place '{entry.defn_name}_'")
        return EntryAnalysis(function, None, (), tuple(report.diagnostics))
    arguments = cpp_arguments(canonical)
    for reserved, why in (("grad_input_mask", "this name would be shadowed by the generated code"),
                          ("result", "this name is only allowed for outputs")):
        if any(a.name == reserved for a in arguments):
            report.add("OPG706", entry.name_node.span,
                       f"{canonical.func.name} has an argument named '{reserved}': {why}; rename it in "
                       "native_functions.yaml")
    given = entry.output_differentiability
    if given and len(given) > len(canonical.func.returns) and entry.output_differentiability_node is not None:
        report.add("OPG754", entry.output_differentiability_node.span,
                   f"output_differentiability has {len(given)} items but {canonical.func.name} has "
                   f"{len(canonical.func.returns)} output(s); the extra items are ignored")
    keys = []
    for table in entry.dispatch:
        if table.key != DEFAULT_KEY and table.key not in AUTOGRAD_KEYS:
            hint, data = did_you_mean(table.key, (DEFAULT_KEY, *AUTOGRAD_KEYS))
            report.add("OPG707", table.key_span, f"'{table.key}' is not an autograd dispatch key (Default, "
                                                 f"AutogradNestedTensor, AutogradCPU, AutogradCUDA, ...){hint}", data)
            continue
        keys.append(_set_up_derivatives(entry, table.key, table.formulas, canonical, arguments, report,
                                        index.release))
    return EntryAnalysis(function, canonical, tuple(keys), tuple(report.diagnostics))


def _unknown_schema(entry: DerivativeEntry, index: NativeIndex, report: _Report) -> None:
    available = index.by_name.get(entry.defn_name or "", [])
    if available:
        hint, data = did_you_mean(entry.specification, available)
        if not hint:
            hint = "; the schemas of that name are: " + ", ".join(available[:5]) + (" ..." if len(available) > 5 else "")
    else:
        hint, _ = did_you_mean(entry.defn_name or "", index.by_name)
        data = ()
    report.add("OPG704", entry.name_node.span,
               f"no schema of native_functions.yaml reads exactly '{entry.specification}'{hint}", data)


def _canonical(functions: list[NativeFunction], name: str) -> NativeFunction | None:
    """The function formulas attach to: the variant called `name` that is not out= or functional,
    else an in-place-only group's first function."""
    for f in functions:
        if not f.func.is_functional_fn() and not f.func.is_out_fn() and name == str(f.func.name.name):
            return f
    return functions[0] if name + "_" == cpp.name(functions[0].func) else None


def _kind(f: NativeFunction) -> SchemaKind | None:
    try:
        return f.func.kind()
    except SchemaKindError:
        return None


def _set_up_derivatives(entry: DerivativeEntry, key: str, formulas: tuple[Formula, ...], f: NativeFunction,
                        arguments: list[Binding], report: _Report, release: Release) -> KeyInfo:
    arg_names = [a.name for a in arguments]
    ret_names = [r.name for r in f.func.returns]
    differentiability = entry.output_differentiability or (True,) * len(f.func.returns)
    named_gradients = [f"grad_{r.name}" for r, d in zip(f.func.returns, differentiability)
                       if d and r.name is not None and r.type.is_tensor_like()]
    derivatives: list[tuple[Formula, Derivative]] = []
    forwards: list[Formula] = []
    non_differentiable: dict[str, Formula] = {}
    differentiable: dict[str, Formula] = {}
    for formula in sorted(formulas, key=_key_text):
        names = formula.names
        for name in names:
            if name in arg_names and name in ret_names:
                report.add("OPG710", report.name_span(formula, name),
                           f"'{name}' is both an argument and a named output of {f.func.name}")
        if names[0] not in arg_names:
            if _forward_outputs(formula, f, report) is not None:
                forwards.append(formula)
            continue
        for name in names[1:]:
            if name and name not in arg_names:
                hint, data = did_you_mean(name, arg_names)
                report.add("OPG751", report.name_span(formula, name),
                           f"{f.func.name} has no argument '{name}': this formula is never used for it{hint}", data)
        if formula.is_non_differentiable:
            non_differentiable.update((n, formula) for n in names)
            continue
        derivative = _backward(formula, f, arguments, report, release)
        if derivative is not None:
            derivatives.append((formula, derivative))
        differentiable.update((n, formula) for n in names)
    for name in sorted(set(differentiable) & set(non_differentiable)):
        report.add("OPG713", report.name_span(non_differentiable[name], name),
                   f"'{name}' is declared non_differentiable and also given a backward formula "
                   f"(line {differentiable[name].key.span.start_line + 1} of this entry)")
    with_derivatives = tuple(a for a in arguments if a.name in differentiable)
    for a in with_derivatives:
        if not _differentiable_type(a):
            report.add("OPG756", report.name_span(differentiable[a.name], a.name),
                       f"'{a.name}' is a {a.type}, which has no gradient: give it no formula, or non_differentiable")
    _forward_rules(entry, f, forwards, [d for _, d in derivatives], with_derivatives, report, release)
    _grad_usage(derivatives, named_gradients, report)
    ds = tuple(d for _, d in derivatives)
    return KeyInfo(key, ds, with_derivatives, dedup([s for d in ds for s in d.saved_inputs]),
                   dedup([s for d in ds for s in d.saved_outputs]))


def _differentiable_type(a: Binding) -> bool:
    argument = a.argument
    ty = getattr(argument, "type", None)
    if ty is None:  # self argument or packed TensorOptions
        argument = getattr(argument, "argument", None)
        ty = getattr(argument, "type", None)
    return ty is None or ty.is_tensor_like() or "Scalar" in str(ty)


_RESULT_N = re.compile(r"^result(\d+)$")


def _forward_outputs(formula: Formula, f: NativeFunction, report: _Report) -> tuple[str, ...] | None:
    """The outputs a forward formula is for, or None (reported) when it names none torchgen can find."""
    names = formula.names
    returns = f.func.returns
    if any(r.name in names for r in returns):
        return names
    if names == ("result",):
        if len(returns) != 1:
            report.add("OPG712", formula.key.span, f"'result' names the only output, but {f.func.name} has "
                                                   f"{len(returns)}: use result0, result1, ... or their names")
            return None
        return names
    indices = [int(m.group(1)) for m in map(_RESULT_N.match, names) if m]
    if indices:
        bad = [i for i in indices if i >= len(returns)]
        if bad:
            report.add("OPG712", formula.key.span, f"{f.func.name} has {len(returns)} output(s); there is no "
                                                   f"result{bad[0]}")
            return None
        return names
    candidates = [a.name for a in cpp_arguments(f)] + [r.name for r in returns if r.name] + ["result"]
    hint, data = did_you_mean(names[0], candidates)
    report.add("OPG711", report.name_span(formula, names[0]),
               f"'{names[0]}' is neither an argument nor an output of {f.func.name}{hint}", data)
    return None


def _backward(formula: Formula, f: NativeFunction, arguments: list[Binding], report: _Report,
              release: Release) -> Derivative | None:
    text = formula.text
    problems = unsupported_calls(text, release)
    for what, instead, start, end in problems:
        report.add("OPG715", report.within(formula.value, start, end),
                   f"{what} is not supported in derivative formulas: use the SymInt version, {instead}")
    for i, start, end in grad_index_spans(text):
        if i >= len(f.func.returns):
            report.add("OPG714", report.within(formula.value, start, end),
                       f"grads[{i}] is out of bounds: {f.func.name} returns {len(f.func.returns)} output(s)")
    if problems:
        return None
    inputs = [a.nctype.remove_const_ref() for a in arguments]
    names = tuple(n if n != "self" else "result" for n in cpp.return_names(f.func))
    options = ApiOptions.of(f, ANALYSIS_SPELLING)
    outputs = [NamedCType(n, cpp.return_type(r, options=options, symint=True).remove_const_ref())
               for n, r in zip(names, f.func.returns)]
    try:
        rewritten, saved_in = saved_variables(text, inputs, formula.names, release)
        rewritten, saved_out = saved_variables(rewritten, outputs, formula.names, release)
    except StridesError as exc:
        name, call = exc.args
        at = text.find(call)
        span = report.within(formula.value, at, at + len(call)) if at >= 0 else formula.value.span
        report.add("OPG716", span, f"{call} is only supported in a formula for '{name}' alone, "
                                   f"not for '{formula.key.value}'")
        return None
    return Derivative(rewritten, text, formula.names, saved_in, saved_out)


def _grad_usage(derivatives: list[tuple[Formula, Derivative]], named_gradients: list[str], report: _Report) -> None:
    """torchgen's check_grad_usage: mistakes that compile but break double backward. It reads the formulas as
    rewritten (an argument called grad, say, is saved as grad_sym_sizes and no longer reads as a gradient)."""
    if not derivatives:
        return
    rewritten = [d.formula for _, d in derivatives]
    uses_grad = [fm for fm, d in derivatives if uses("grad", d.formula)]
    grads_uses = sum(count_uses("grads", t) for t in rewritten)
    indices = [i for t in rewritten for i in gradient_indices(t)]
    uses_named = [fm for fm, d in derivatives if any(uses(n, d.formula) for n in named_gradients)]
    if uses_grad and grads_uses:
        report.add("OPG717", report.ident_span(uses_grad[0], "grad"), "this entry mixes 'grad' and 'grads': "
                                                                       "replace 'grad' with 'grads[0]'")
    if grads_uses == len(indices) and set(indices) == {0}:
        at = next(fm for fm, d in derivatives if gradient_indices(d.formula))
        report.add("OPG718", report.ident_span(at, "grads"), "only 'grads[0]' is used: if the first output is the "
                                                             "only differentiable one, write 'grad' instead")
    if uses_named and (uses_grad or grads_uses):
        report.add("OPG719", uses_named[0].value.span, "this entry mixes gradients named after outputs "
                                                       "(grad_NAME) with 'grad' or 'grads[i]': use one way only")


def _forward_rules(entry: DerivativeEntry, f: NativeFunction, forwards: list[Formula],
                   derivatives: list[Derivative], with_derivatives: tuple[Binding, ...], report: _Report,
                   release: Release) -> None:
    """torchgen's postprocess_forward_derivatives."""
    is_foreach = release.autograd.forward_checks_foreach_lists and f.func.name.name.base.startswith("_foreach_")
    # The arguments whose plain names a forward formula may not use (tensor lists handle theirs internally).
    checked = [a.name for a in with_derivatives if is_foreach or a.type not in TENSOR_LISTS]
    for formula in forwards:
        base = next((n for n in checked if uses(n, formula.text)), None)
        if base is not None:
            report.add("OPG720", report.ident_span(formula, base),
                       f"the forward formula uses '{base}', which is ambiguous: use {base}_p for the primal value "
                       f"and {base}_t for the tangent", (("replace", f"{base}_p"), ("replace", f"{base}_t")))
        elif formula.text == "auto_element_wise":
            _auto_element_wise(formula, f, forwards, derivatives, with_derivatives, checked, report)
        elif formula.text == "auto_linear":
            _auto_linear(formula, entry.defn_name or "", f, forwards, with_derivatives, report)


def _single_output(forwards: list[Formula]) -> bool:
    return len(forwards) == 1 and len(forwards[0].names) == 1


def _auto_element_wise(formula: Formula, f: NativeFunction, forwards: list[Formula], derivatives: list[Derivative],
                       with_derivatives: tuple[Binding, ...], checked: list[str], report: _Report) -> None:
    """The forward formula torchgen derives from the backward one: only for one input and one output."""
    if _kind(f) is SchemaKind.inplace:
        report.add("OPG721", formula.value.span, f"auto_element_wise cannot be used for {f.func.name}: it "
                                                 "is an in-place variant")
    elif len(with_derivatives) != 1 or not _single_output(forwards):
        report.add("OPG721", formula.value.span, "auto_element_wise only works for a function with a single "
                                                 "differentiable input and a single differentiable output")
    elif len(derivatives) != 1:
        report.add("OPG721", formula.value.span, "auto_element_wise needs the backward formula of the "
                                                 "function's differentiable argument")
    else:
        derived = element_wise_forward(derivatives[0].original, with_derivatives[0].name,
                                       [a.name for a in with_derivatives])
        left = next((n for n in checked if uses(n, derived)), None)
        if left is not None:
            report.add("OPG720", formula.value.span,
                       f"auto_element_wise derives a forward formula that still uses '{left}' (two uses "
                       "one character apart in the backward formula are rewritten only once)")


def _auto_linear(formula: Formula, name: str, f: NativeFunction, forwards: list[Formula],
                 with_derivatives: tuple[Binding, ...], report: _Report) -> None:
    """The forward formula that calls the function again on the tangents: one output, a differentiable input."""
    if not _single_output(forwards):
        report.add("OPG722", formula.value.span, "auto_linear only works for a function with a single "
                                                 "differentiable output")
    elif not with_derivatives:
        report.add("OPG722", formula.value.span, "auto_linear needs at least one differentiable argument "
                                                 "(an argument with a backward formula)")
    elif Variant.function not in f.variants and Variant.method not in f.variants:
        report.add("OPG722", formula.value.span, f"auto_linear calls {name} again, but it is neither a "
                                                 "function nor a method")
