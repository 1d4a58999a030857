"""derivatives.yaml entries: the autograd formulas of an operator, as torchgen's autograd loader reads them.

An entry names one schema of native_functions.yaml (`name:`), optionally says which outputs are
differentiable (`output_differentiability:`), and maps argument names (backward formulas) or output
names (forward formulas) to C++ expressions, either directly or per autograd dispatch key
(`dispatch:`). Lowering checks only what one entry can show on its own; what needs the op's schema
is checked against native_functions.yaml later (analysis/autograd/load.py).
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..suggest import did_you_mean
from ..syntax.nodes import YMap, YNode, YScalar, YSeq
from ..text import Span

NAME, DISPATCH, OUTPUT_DIFFERENTIABILITY = "name", "dispatch", "output_differentiability"
ENTRY_KEYS = (NAME, DISPATCH, OUTPUT_DIFFERENTIABILITY)
DEFAULT_KEY = "Default"
NON_DIFFERENTIABLE = "non_differentiable"

# torchgen.utils.split_name_params: what a `name:` must look like before it is even looked up.
_NAME_PARAMS = re.compile(r"(\w+)(\.\w+)?\((.*)\)")


@record
class Formula:
    """One `names: formula` line. Spans are relative to the entry's first line."""

    names: tuple[str, ...]  # the key split at commas, each stripped
    key: YScalar
    value: YScalar  # a string scalar (other values are reported and dropped)

    @property
    def text(self) -> str:
        return str(self.value.value)  # a string already (see value)

    @property
    def is_non_differentiable(self) -> bool:
        return self.text.lower().strip() == NON_DIFFERENTIABLE


@record
class DispatchFormulas:
    """The formulas for one autograd dispatch key ('Default' when the entry has no `dispatch:`)."""

    key: str
    key_span: Span
    formulas: tuple[Formula, ...]


@record
class DerivativeEntry:
    specification: str  # the `name:` schema, looked up by its exact text
    name_node: YScalar
    defn_name: str | None  # the op name before the overload; None if the name is not `op(...)`
    # None: every output differentiable. Items are bools, or one condition string.
    output_differentiability: tuple[object, ...] | None
    output_differentiability_node: YNode | None
    dispatch: tuple[DispatchFormulas, ...]
    entry: YMap

    @property
    def formulas(self) -> tuple[Formula, ...]:
        return tuple(f for d in self.dispatch for f in d.formulas)


def split_names(raw: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in raw.split(","))


def lower_derivative(entry: YMap) -> tuple[DerivativeEntry | None, tuple[Diagnostic, ...]]:
    """One derivatives.yaml entry, with every mistake it shows on its own."""
    diagnostics: list[Diagnostic] = []
    name_node = entry.value(NAME)
    if name_node is None or isinstance(name_node, YScalar) and name_node.value is None:
        at = entry.key_span(NAME) or Span.on_line(entry.span.start_line, entry.span.start_col,
                                                   entry.span.start_col + 1)
        diagnostics.append(diag("OPG700", at, "this derivatives.yaml entry has no 'name:' schema"))
        return None, tuple(diagnostics)
    if not isinstance(name_node, YScalar) or not isinstance(name_node.value, str):
        diagnostics.append(diag("OPG701", name_node.span, "'name' must be a schema string such as "
                                                           "'abs(Tensor self) -> Tensor'"))
        return None, tuple(diagnostics)
    specification = name_node.value
    match = _NAME_PARAMS.match(specification)
    if match is None:
        diagnostics.append(diag("OPG703", name_node.span, f"'{specification}' is not a schema of the form "
                                                           "'op.overload(arguments) -> returns'"))
    differentiability = _output_differentiability(entry.value(OUTPUT_DIFFERENTIABILITY), diagnostics)
    dispatch_node = entry.value(DISPATCH)
    if entry.get(DISPATCH) is not None:
        dispatch = _dispatch_table(entry, dispatch_node, diagnostics)
        for key, _ in entry.pairs:
            if not (isinstance(key, YScalar) and key.value in ENTRY_KEYS):
                what = key.value if isinstance(key, YScalar) else "this key"
                diagnostics.append(diag("OPG750", key.span, f"'{what}' is ignored: with 'dispatch:', every formula "
                                                             "goes under a dispatch key (e.g. Default:)"))
    else:
        pairs = tuple(p for p in entry.pairs if not (isinstance(p[0], YScalar) and p[0].value in ENTRY_KEYS))
        dispatch = (DispatchFormulas(DEFAULT_KEY, name_node.span, _formulas(pairs, diagnostics)),)
    return DerivativeEntry(specification, name_node, match.group(1) if match else None, differentiability,
                           entry.value(OUTPUT_DIFFERENTIABILITY), dispatch, entry), tuple(diagnostics)


def _output_differentiability(node: YNode | None, diagnostics: list[Diagnostic]) -> tuple[object, ...] | None:
    """None when absent or empty; torchgen treats any false value as absent."""
    if node is None or isinstance(node, YScalar) and not node.value:
        return None
    items = _iterated(node)
    if items is None:
        diagnostics.append(diag("OPG709", node.span, "output_differentiability must be a list such as "
                                                      "[True, False], one item per output"))
        return None
    if any(isinstance(i, str) for i in items) and len(items) != 1:
        diagnostics.append(diag("OPG709", node.span, "a condition in output_differentiability is only supported "
                                                      "for single-output functions: give one string or only bools"))
    elif not isinstance(node, YSeq):
        what = "the characters of this string" if isinstance(node, YScalar) else "the keys of this mapping"
        diagnostics.append(diag("OPG757", node.span, "output_differentiability should be a list such as "
                                                     f"[True, False]; torchgen reads {what} as its items: {list(items)}"))
    if isinstance(node, YSeq):
        for item, value in zip(node.items, items):
            if not isinstance(value, (bool, str)):
                diagnostics.append(diag("OPG753", item.span, "output_differentiability items should be True or False "
                                                              "(or one condition string); this one is read by "
                                                              "truthiness"))
    return items


def _iterated(node: YNode) -> tuple[object, ...] | None:
    """What torchgen's `for diff in output_differentiability` sees: a list's items, a string's characters, a
    mapping's keys; None for what cannot be iterated (it fails there)."""
    if isinstance(node, YSeq):
        return tuple(i.value if isinstance(i, YScalar) else None for i in node.items)
    if isinstance(node, YScalar):
        return tuple(node.value) if isinstance(node.value, str) else None
    if isinstance(node, YMap):
        return tuple(k.value if isinstance(k, YScalar) else None for k, _ in node.pairs)
    return None


def _dispatch_table(entry: YMap, node: YNode | None, diagnostics: list[Diagnostic]) -> tuple[DispatchFormulas, ...]:
    if not isinstance(node, YMap):
        span = node.span if node is not None else entry.key_span(DISPATCH) or entry.span
        diagnostics.append(diag("OPG708", span, "'dispatch' must map autograd dispatch keys (Default, "
                                                "AutogradNestedTensor, ...) to formulas"))
        return ()
    out = []
    for key, value in node.pairs:
        if not isinstance(key, YScalar) or not isinstance(key.value, str):
            diagnostics.append(diag("OPG708", key.span, "a dispatch key must be a name such as Default"))
            continue
        if not isinstance(value, YMap):
            diagnostics.append(diag("OPG708", value.span if _present(value) else key.span,
                                    f"the formulas under '{key.value}' must be a mapping of names to formulas"))
            continue
        out.append(DispatchFormulas(key.value, key.span, _formulas(value.pairs, diagnostics)))
    return tuple(out)


def _present(node: YNode) -> bool:
    return not (isinstance(node, YScalar) and node.value is None and not node.text)


def _formulas(pairs: tuple[tuple[YNode, YNode], ...], diagnostics: list[Diagnostic]) -> tuple[Formula, ...]:
    out = []
    for key, value in pairs:
        if not isinstance(key, YScalar) or not isinstance(key.value, str):
            diagnostics.append(diag("OPG702", key.span, "a formula's key must be argument or output names such as "
                                                         "'self, other'"))
            continue
        if not isinstance(value, YScalar) or not isinstance(value.value, str):
            span = value.span if _present(value) else key.span
            hint, data = did_you_mean(key.value, ENTRY_KEYS)
            diagnostics.append(diag("OPG702", span, f"the formula for '{key.value}' must be a C++ expression "
                                                    f"string{hint}", data=data))
            continue
        names = split_names(key.value)
        if "" in names:
            diagnostics.append(diag("OPG755", key.span, f"'{key.value}' has an empty name between commas"))
        out.append(Formula(names, key, value))
    return tuple(out)
