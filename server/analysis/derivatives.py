"""Queries on an analysed derivatives.yaml: hover, completion, navigation and symbols.

The check (autograd.load.DerivativesCheck) is passed in; the node structs and the C++ arguments of a function come
from autograd/ and the pieces directly.
Positions are 0-based (line, column), columns in code points.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from ..frozen import record
from ..index.derivatives import DerivativesDocument
from ..model.derivatives import DEFAULT_KEY, ENTRY_KEYS, NAME, DerivativeEntry, Formula
from ..model.native_function import NativeFunction
from ..model.schema import signature_key
from ..releases import Release
from ..syntax.locate import ScalarText
from ..syntax.nodes import YScalar
from ..text import Span
from .completion import KEY, OP, TYPE, Candidate
from .cursor import content_end, entry_at
from .hover import HoverText
from .symbols import OP as OP_SYMBOL
from .symbols import Symbol

if TYPE_CHECKING:
    from .autograd.load import NodeInfo

# (argument name, C++ type) of the arguments formulas name, in the C++ API's order.
Arguments = Callable[[NativeFunction], Sequence[tuple[str, str]]]

KEY_DOCS = {
    NAME: "the schema of the operator, exactly as native_functions.yaml prints it",
    "dispatch": "formulas per autograd dispatch key (Default, AutogradNestedTensor, AutogradCUDA, ...)",
    "output_differentiability": "which outputs are differentiable: a list of True/False, one per output",
}
SPECIAL_FORMULAS = {
    "non_differentiable": "the argument gets no gradient",
    "auto_element_wise": "forward formula derived from the backward formula (element-wise functions)",
    "auto_linear": "forward formula: the function itself applied to the tangents (linear functions)",
}
_WORD = re.compile(r"\w+")


# What these queries read of the check; autograd.load's classes (named in each docstring) provide it.
class EntryFunctions(Protocol):
    """An entry's analysis (EntryAnalysis): the function its name: reads, and the one of its signature group
    that the formulas attach to."""

    @property
    def function(self) -> NativeFunction | None: ...

    @property
    def canonical(self) -> NativeFunction | None: ...


class NodeKey(Protocol):
    """The dispatch key's formulas of a node (KeyInfo)."""

    @property
    def key(self) -> str: ...


class FunctionIndex(Protocol):
    """The native functions an entry's name: is looked up in (NativeIndex)."""

    @property
    def by_schema(self) -> Mapping[str, NativeFunction]: ...

    @property
    def by_signature(self) -> Mapping[str, Sequence[NativeFunction]]: ...

    @property
    def view_copies(self) -> Mapping[str, NativeFunction]: ...


class Checked(Protocol):
    """A checked derivatives.yaml (DerivativesCheck)."""

    @property
    def document(self) -> DerivativesDocument: ...

    @property
    def index(self) -> FunctionIndex: ...

    @property
    def analyses(self) -> Sequence[tuple[int, DerivativeEntry, EntryFunctions]]: ...  # (first line, ...)

    @property
    def nodes(self) -> Sequence[NodeInfo]: ...

    @property
    def release(self) -> Release: ...  # the torch release whose Functions.h the structs are of


@record
class Place:
    """An entry of the check, with its analysis."""

    line: int
    entry: DerivativeEntry
    analysis: EntryFunctions

    @property
    def function(self) -> NativeFunction | None:
        return self.analysis.canonical or self.analysis.function


def place_at(check: Checked, line: int) -> Place | None:
    """The entry whose lines hold `line`, if it lowered (the one entry of a line, even when the next is broken)."""
    placed = entry_at(check.document.document, line)
    if placed is None or placed.result.value is None:
        return None
    analyses = check.analyses
    at = bisect.bisect_left(analyses, placed.line, key=lambda a: a[0])
    if at == len(analyses) or analyses[at][0] != placed.line:
        return None
    start, entry, analysis = analyses[at]
    return Place(start, entry, analysis)


def _formula_at(place: Place, line: int, col: int) -> tuple[Formula, bool] | None:
    """The formula whose key (True) or value (False) is under the cursor."""
    for formula in place.entry.formulas:
        if formula.key.span.shifted(place.line).contains(line, col):
            return formula, True
        if formula.value.span.shifted(place.line).contains(line, col):
            return formula, False
    return None


def _word_at(scalar: YScalar, line: int, col: int, at_line: int) -> tuple[str, Span] | None:
    """The identifier under the cursor inside a single-line scalar (None when positions are not exact)."""
    where = ScalarText(scalar)
    if not where.exact or not isinstance(scalar.value, str):
        return None
    base = where.span(0, 0).shifted(at_line)
    if line != base.start_line:
        return None
    offset = col - base.start_col
    for m in _WORD.finditer(scalar.value):
        if m.start() <= offset <= m.end():
            return m.group(), where.span(m.start(), m.end()).shifted(at_line)
    return None


def describe_name(word: str, f: NativeFunction, arguments: Arguments) -> str | None:
    """What a name means in a formula of f."""
    args = dict(arguments(f))
    schema_args = {a.name: a for a in f.func.arguments.flat_all}
    if word in args:
        schema = schema_args.get(word)
        return f"argument `{schema if schema is not None else word}` — C++ `{args[word]} {word}`"
    base, _, suffix = word.rpartition("_")
    if suffix in ("p", "t") and base in args:
        what = "primal value" if suffix == "p" else "tangent (forward gradient)"
        return f"the {what} of argument `{base}` (forward formulas)"
    returns = f.func.returns
    if word == "grad":
        return "the gradient of the (only differentiable) output"
    if word == "grads":
        return f"the gradients of the outputs: grads[0] .. grads[{len(returns) - 1}]"
    if word == "result" or re.fullmatch(r"result\d+", word):
        index = int(word[6:] or 0)
        if index < len(returns):
            return f"output {index} of `{f.func.name}`: `{returns[index]}`"
    for i, r in enumerate(returns):
        if r.name == word:
            return f"output {i} of `{f.func.name}`: `{r}`"
        if r.name is not None and word == f"grad_{r.name}":
            return f"the gradient of output `{r.name}`"
    if word in SPECIAL_FORMULAS:
        return SPECIAL_FORMULAS[word]
    if word == "grad_input_mask":
        return "which inputs need a gradient (std::array<bool, N>), for formulas shared by several inputs"
    if word == "retain_variables":
        return "whether the graph is kept for another backward pass"
    return None


def cpp_arguments(f: NativeFunction) -> list[tuple[str, str]]:
    """(argument name, C++ type) of the arguments formulas name, in the C++ API's order."""
    from .autograd.load import cpp_arguments as bindings  # the C++ API loads with the first derivatives.yaml

    return [(a.name, a.type) for a in bindings(f)]


def node_struct(node: NodeInfo, release: Release) -> str:
    """The Functions.h struct of a node, as the release writes it."""
    from .autograd.functions_h import node_declaration  # loaded with the first derivatives.yaml

    return node_declaration(node, release)


def hover(check: Checked, line: int, col: int) -> HoverText | None:
    place = place_at(check, line)
    if place is None:
        return None
    entry = place.entry
    if entry.name_node.span.shifted(place.line).contains(line, col):
        return HoverText(_entry_markdown(check, place), entry.name_node.span.shifted(place.line))
    for key, _ in entry.entry.pairs:
        if isinstance(key, YScalar) and isinstance(key.value, str) and key.value in KEY_DOCS \
                and key.span.shifted(place.line).contains(line, col):
            return HoverText(f"`{key.value}`: {KEY_DOCS[key.value]}", key.span.shifted(place.line))
    f = place.function
    found = _formula_at(place, line, col)
    if f is None or found is None:
        return None
    formula, on_key = found
    word = _word_at(formula.key if on_key else formula.value, line, col, place.line)
    if word is None:
        return None
    text = describe_name(word[0], f, cpp_arguments)
    return HoverText(text, word[1]) if text is not None else None


def nodes_of(check: Checked, line: int) -> list[NodeInfo]:
    return [n for n in check.nodes if n.line == line]


def _entry_markdown(check: Checked, place: Place) -> str:
    analysis = place.analysis
    if analysis.function is None:
        return f"`{place.entry.specification}`\n\nNo schema of native_functions.yaml reads exactly this."
    parts = [f"```\n{analysis.function.func}\n```"]
    if analysis.canonical is not None and analysis.canonical is not analysis.function:
        parts.append(f"The formulas attach to `{analysis.canonical.func.name}`, the function of its signature group.")
    nodes = nodes_of(check, place.line)
    if not nodes:
        parts.append("No argument has a backward formula: the generator writes no autograd node for it.")
    for node in nodes:
        where = "" if node.key.key == DEFAULT_KEY else f" ({node.key.key})"
        if node.canonical is not analysis.canonical:
            where += f" of its view_copy function `{node.canonical.func.name}`"
        parts.append(f"Autograd node{where}, in Functions.h ({check.release}):\n```cpp\n{node_struct(node, check.release)}```")
    return "\n\n".join(parts)


# ---------------------------------------------------------------- completion

_KEY_POSITION = re.compile(r"^( +)(\w*)\Z")
_VALUE_POSITION = re.compile(r"^ +([\w, ]+):\s+(.*?)(\w*)\Z")
_NAME_VALUE = re.compile(r"^- name:\s+(\S*)\Z")


def _entry_function(check: Checked, lines: Sequence[str], line: int) -> NativeFunction | None:
    """The function of the entry the line is in, from its `- name:` line (the entry may not parse now)."""
    for i in range(line, max(-1, line - 2000), -1):
        text = lines[i] if i < len(lines) else ""
        if text.startswith("- name:"):
            schema = text[len("- name:"):].strip().strip("'\"")
            place = place_at(check, i)
            if place is not None and place.line == i and place.function is not None:
                return place.function
            return check.index.by_schema.get(schema)
        if text.startswith("-"):
            return None
    return None


def complete(check: Checked, lines: Sequence[str], line: int, col: int) -> list[Candidate]:
    text = lines[line][:col] if line < len(lines) else ""
    if m := _NAME_VALUE.match(text):
        prefix = m.group(1)
        found = [s for s in check.index.by_schema if s.startswith(prefix)][:200]
        return [Candidate(s, OP, "", "", s, Span.on_line(line, col - len(prefix), col)) for s in found]
    f = _entry_function(check, lines, line)
    if m := _KEY_POSITION.match(text):
        indent, prefix = len(m.group(1)), m.group(2)
        out = []
        if indent == 2:
            out += [Candidate(k, KEY, "", KEY_DOCS[k], f"{k}: ", Span.on_line(line, indent, col)) for k in ENTRY_KEYS
                    if k != NAME and k.startswith(prefix)]
        if f is not None:
            out += [Candidate(n, TYPE, d, "", f"{n}: ", Span.on_line(line, indent, col))
                    for n, d in _targets(f, cpp_arguments) if n.startswith(prefix)]
        return out
    if (m := _VALUE_POSITION.match(text)) and f is not None:
        names, prefix = [n.strip() for n in m.group(1).split(",")], m.group(3)
        span = Span.on_line(line, col - len(prefix), col)
        return [Candidate(n, TYPE, d, "", n, span) for n, d in _formula_words(f, names, cpp_arguments)
                if n.startswith(prefix)]
    return []


def _targets(f: NativeFunction, arguments: Arguments) -> list[tuple[str, str]]:
    """What a formula can be for: the arguments (backward), the outputs (forward)."""
    out = [(n, t) for n, t in arguments(f)]
    returns = f.func.returns
    if len(returns) == 1:
        out.append(("result", str(returns[0])))
    else:
        out += [(f"result{i}", str(r)) for i, r in enumerate(returns)]
    out += [(r.name, str(r)) for r in returns if r.name]
    return out


def _formula_words(f: NativeFunction, names: list[str], arguments: Arguments) -> list[tuple[str, str]]:
    args = list(arguments(f))
    arg_names = {n for n, _ in args}
    forward = bool(names) and names[0] not in arg_names
    out = list(args)
    if forward:
        out += [(f"{n}_p", f"primal of {n}") for n, _ in args] + [(f"{n}_t", f"tangent of {n}") for n, _ in args]
        out += [("auto_element_wise", SPECIAL_FORMULAS["auto_element_wise"]),
                ("auto_linear", SPECIAL_FORMULAS["auto_linear"])]
    else:
        returns = f.func.returns
        out.append(("grad", "the gradient of the output"))
        if len(returns) > 1:
            out += [(f"grads[{i}]", f"the gradient of output {i}") for i in range(len(returns))]
        out += [(f"grad_{r.name}", f"the gradient of output {r.name}") for r in returns if r.name]
        out += [("grad_input_mask", "which inputs need a gradient"),
                ("non_differentiable", SPECIAL_FORMULAS["non_differentiable"])]
    returns = f.func.returns
    out += [("result", "the output")] if len(returns) == 1 else [(f"result{i}", f"output {i}") for i in range(len(returns))]
    return out


# ---------------------------------------------------------------- navigation, symbols

def function_at(check: Checked, line: int, col: int) -> NativeFunction | None:
    """The function an entry's name: names, with the cursor on it."""
    place = place_at(check, line)
    if place is None or not place.entry.name_node.span.shifted(place.line).contains(line, col):
        return None
    return place.analysis.function


@record
class FormulaSource:
    """Where a native function's formulas are: an entry's name: span, and whether it names the function itself
    (else another overload of its signature group, whose formulas it shares)."""

    span: Span
    own: bool
    specification: str


def formula_sources(check: Checked) -> dict[int, list[FormulaSource]]:
    """id(NativeFunction) -> the entries whose formulas it uses (the function itself, the rest of its group, and
    a view op's view_copy function unless an entry gives it formulas of its own)."""
    out: dict[int, list[FormulaSource]] = {}
    own = {id(analysis.canonical) for _, _, analysis in check.analyses}
    for line, entry, analysis in check.analyses:
        if analysis.canonical is None:
            continue
        span = entry.name_node.span.shifted(line)
        group = list(check.index.by_signature.get(signature_key(analysis.canonical.func), ()))
        copy = check.index.view_copies.get(str(analysis.canonical.func.name))
        if copy is not None and id(copy) not in own:
            group.append(copy)
        for f in group:
            out.setdefault(id(f), []).append(FormulaSource(span, f is analysis.function, entry.specification))
    return out


def symbols(check: Checked) -> list[Symbol]:
    """One symbol per entry (its op name, detail: its node classes), with its formulas as children."""
    out: list[Symbol] = []
    for placed in check.document.placed():
        entry = placed.result.value
        if entry is None:
            continue
        whole = Span(placed.line, 0, *content_end(placed))
        name = entry.specification.split("(", 1)[0]
        nodes = ", ".join(n.op for n in nodes_of(check, placed.line))
        # A formula's key is a string (model.derivatives drops the others); str() says so to mypy.
        children = tuple(Symbol(str(fm.key.value), OP_SYMBOL, "", fm.key.span.shifted(placed.line),
                                fm.key.span.shifted(placed.line)) for fm in entry.formulas)
        out.append(Symbol(name, OP_SYMBOL, nodes, whole, entry.name_node.span.shifted(placed.line), children))
    return out
