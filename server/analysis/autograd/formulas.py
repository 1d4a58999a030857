"""The text rules of derivative formulas, as torchgen's autograd loader applies them.

Formulas are C++ expressions that torchgen rewrites with regular expressions: a use of an argument
or output is found as an identifier between non-word characters, and some expressions (`self.sym_sizes()`,
`zeros_like(self)`, ...) are computed when the autograd node is created, so that only their value is
saved. These functions reproduce that matching exactly (it decides what the node saves and which
mistakes are reported); they know no positions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ...frozen import record
from ...pieces.api.types import (
    BaseCType,
    CType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    SymIntT,
    VectorCType,
    boolT,
    intArrayRefT,
    layoutT,
    longT,
    scalarTypeT,
    symIntArrayRefT,
    tensorOptionsT,
)
from ...releases import Release

typeAndSizeT = BaseCType("torch::autograd::generated::TypeAndSize")
tensorGeometryT = BaseCType("at::TensorGeometry")
optionalStringT = OptionalCType(BaseCType("c10::string_view"))


@functools.lru_cache(maxsize=16384)  # per (pattern, argument name): a few patterns times the names of derivatives.yaml
def _compiled(pattern: str, name: str) -> re.Pattern[str]:
    """A pattern with the name put in (unescaped, as torchgen formats it)."""
    return re.compile(pattern.format(name))


@functools.lru_cache(maxsize=4096)  # per argument or output name of derivatives.yaml (a few hundred)
def ident(name: str) -> re.Pattern[str]:
    """`name` used as an identifier: between non-word characters (each of which the match consumes)."""
    return re.compile(rf"(^|\W){name}($|\W)")


def uses(name: str, formula: str) -> bool:
    return ident(name).search(formula) is not None


def count_uses(name: str, formula: str) -> int:
    """Non-overlapping uses, as re.findall counts them (two uses one character apart count once)."""
    return len(ident(name).findall(formula))


_GRAD_INDEX = re.compile(r"(?:^|\W)grads\[(\d+)\]")


def gradient_indices(formula: str) -> list[int]:
    return [int(i) for i in _GRAD_INDEX.findall(formula)]


def grad_index_spans(formula: str) -> list[tuple[int, int, int]]:
    """(index, start, end) of each `grads[i]`."""
    return [(int(m.group(1)), m.start(1) - 6, m.end(1) + 1) for m in _GRAD_INDEX.finditer(formula)]


@record
class SavedAttribute:
    """A value the autograd node keeps for the backward pass: its field and the expression it saves."""

    nctype: NamedCType
    expr: str

    @property
    def name(self) -> str:
        n = self.nctype.name
        return n.name if isinstance(n, SpecialArgName) else n


@record
class _Replacement:
    """An expression on a saved name that is evaluated when the node is created (pattern has {} for it)."""

    pattern: str
    suffix: str | Callable[[re.Match[str]], str]
    ctype: CType
    expr: Callable[[str], str] | None = None  # what is saved (default: the matched text)
    result: Callable[[str], str] | None = None  # what the formula reads instead (default: the field)


def _sym_size_suffix(m: re.Match[str]) -> str:
    return "_sym_argsize_" + m.group(1).replace("-", "minus_")


def _optional_sizes(name: str) -> str:
    return f"{name}.has_value() ? std::optional<c10::SymIntArrayRef>({name}->sym_sizes()) : std::nullopt"


class StridesError(ValueError):
    """`.sym_strides()` (1.13: or `.strides()`) of a tensor in a formula that is not for that tensor alone: its
    arguments are the tensor's name and the call as written."""


# In torchgen's order: the first pattern that matches rewrites the text the later ones see.
_REPLACEMENTS = (
    _Replacement(r"{}.sym_sizes\(\)", "_sym_sizes", symIntArrayRefT),
    _Replacement(r"{}->sym_sizes\(\)", "_sym_sizes_opt", OptionalCType(symIntArrayRefT), _optional_sizes),
    _Replacement(r"{}.sym_blocksize\(\)", "_self_sym_blocksize_opt", OptionalCType(symIntArrayRefT),
                 lambda name: f"at::sparse_csr::getSymIntBlockSize({name})"),
    _Replacement(r"{}.options\(\)", "_options", tensorOptionsT),
    _Replacement(r"zeros_like\({}\)", "_info", typeAndSizeT, lambda name: name, lambda name: name + "_info.zeros()"),
    _Replacement(r"{}.sym_size\((-?\w+)\)", _sym_size_suffix, SymIntT),
    _Replacement(r"{}.numel\(\)", "_numel", longT),
    _Replacement(r"{}.sym_numel\(\)", "_sym_numel", SymIntT),
    _Replacement(r"to_args_sizes\({}\)", "_args_sizes", VectorCType(VectorCType(longT))),
    _Replacement(r"to_args_sizes_symint\({}\)", "_args_sizes_symint", VectorCType(VectorCType(SymIntT))),
    _Replacement(r"to_args_scalartypes\({}\)", "_args_scalartypes", VectorCType(scalarTypeT)),
    _Replacement(r"TensorGeometry\({}\)", "_geometry", tensorGeometryT),
    _Replacement(r"{}.scalar_type\(\)", "_scalar_type", scalarTypeT),
    _Replacement(r"{}.dim\(\)", "_dim", longT),
    _Replacement(r"{}.sym_strides\(\)", "_sym_strides", symIntArrayRefT),
    _Replacement(r"{}.layout\(\)", "_layout", layoutT),
    _Replacement(r"{}.is_conj\(\)", "_conjugate", boolT),
)

# Before 2.2 `x.sym_numel()` is left as it is (x itself is saved).
_REPLACEMENTS_2_1 = tuple(r for r in _REPLACEMENTS if r.suffix != "_sym_numel")


def _optional_int_sizes(name: str) -> str:
    return f"{name}.has_value() ? c10::optional<IntArrayRef>({name}->sizes()) : c10::nullopt"


def _int_size_suffix(m: re.Match[str]) -> str:
    return "_argsize_" + m.group(1)


def _by_suffix(suffix: str) -> _Replacement:
    return next(r for r in _REPLACEMENTS if r.suffix == suffix)


# 1.13 (before formulas had to use the SymInt calls): `.sizes()`, `->sizes()`, `.size(x)` and `.strides()` are
# saved as plain integers, and there is no rule for `.sym_size(x)`, `.sym_blocksize()`, `to_args_sizes_symint(x)`
# or `.sym_numel()` (their tensor is saved whole). In that release's order.
_REPLACEMENTS_1_13 = (
    _Replacement(r"{}.sizes\(\)", "_sizes", intArrayRefT),
    _by_suffix("_sym_sizes"),
    _Replacement(r"{}->sizes\(\)", "_sizes_opt", OptionalCType(intArrayRefT), _optional_int_sizes),
    _by_suffix("_sym_sizes_opt"),
    _by_suffix("_options"),
    _by_suffix("_info"),
    _Replacement(r"{}.size\((\w+)\)", _int_size_suffix, longT),
    _by_suffix("_numel"),
    _by_suffix("_args_sizes"),
    _by_suffix("_args_scalartypes"),
    _by_suffix("_geometry"),
    _by_suffix("_scalar_type"),
    _by_suffix("_dim"),
    _Replacement(r"{}.strides\(\)", "_strides", intArrayRefT),
    _by_suffix("_sym_strides"),
    _by_suffix("_layout"),
    _by_suffix("_conjugate"),
)


def _replacements(release: Release) -> tuple[_Replacement, ...]:
    if release.autograd.formulas_take_int_sizes:
        return _REPLACEMENTS_1_13
    return _REPLACEMENTS if release.autograd.saves_sym_numel else _REPLACEMENTS_2_1

# Calls torchgen refuses in any backward formula, and the SymInt call to use instead.
UNSUPPORTED_CALLS = (
    (re.compile(r"\.sizes\(\)|->sizes\(\)"), ".sizes()", ".sym_sizes()"),
    (re.compile(r"\.size\([-]?\d+\)|->size\([-]?\d+\)"), ".size(int)", ".sym_size(int)"),
    (re.compile(r"\.strides\(\)|->strides\(\)"), ".strides()", ".sym_strides()"),
)


def unsupported_calls(formula: str, release: Release) -> list[tuple[str, str, int, int]]:
    """(call, replacement, start, end) of every call that the release's torchgen refuses in a backward formula
    (none before 2.0)."""
    if release.autograd.formulas_take_int_sizes:
        return []
    return [(what, instead, m.start(), m.end()) for pattern, what, instead in UNSUPPORTED_CALLS
            for m in pattern.finditer(formula)]


_STRIDES = ("_sym_strides", "_strides")  # saved through strides_or_error, for a formula of that tensor alone


def saved_variables(formula: str, nctypes: list[NamedCType], var_names: tuple[str, ...], release: Release
                    ) -> tuple[str, tuple[SavedAttribute, ...]]:
    """The formula with node-time expressions replaced by their fields, and what the node saves.

    Raises StridesError where torchgen asserts; the caller has already refused unsupported calls."""
    saved: list[SavedAttribute] = []
    for nctype in nctypes:
        name = nctype.name.name if isinstance(nctype.name, SpecialArgName) else nctype.name
        if name not in formula:  # every pattern below needs the name itself
            continue
        for rule in _replacements(release):
            def replace(m: re.Match[str], rule: _Replacement = rule, name: str = name) -> str:
                if rule.suffix in _STRIDES and var_names != (name,):
                    raise StridesError(name, m.group(0))
                suffix = rule.suffix(m) if callable(rule.suffix) else rule.suffix
                if rule.suffix in _STRIDES:
                    expr = f'strides_or_error({name}, "{name}")'
                else:
                    expr = rule.expr(name) if rule.expr is not None else m.group(0)
                saved.append(SavedAttribute(NamedCType(name + suffix, rule.ctype), expr))
                return rule.result(name) if rule.result is not None else name + suffix
            formula = _compiled(rule.pattern, name).sub(replace, formula)
        if nctype.type == optionalStringT:
            formula = _compiled(r"\b{}\b", name).sub(f"{name}.has_value() ? std::optional<std::string_view>({name}.value()) "
                                             ": std::nullopt", formula)
        if uses(name, formula):
            saved.append(SavedAttribute(nctype, name))
    return formula, tuple(saved)


def dedup(saved: list[SavedAttribute]) -> tuple[SavedAttribute, ...]:
    """The first of each field name."""
    seen: set[str] = set()
    out = []
    for s in saved:
        if s.name not in seen:
            seen.add(s.name)
            out.append(s)
    return tuple(out)


def op_prefix(name: str) -> str:
    """The node class name's stem: abs -> AbsBackward, _foo_forward -> FooBackward."""
    camel = "".join(p.title() for p in name.split("_"))
    return (camel + "Backward").replace("ForwardBackward", "Backward")


def element_wise_forward(backward: str, input_name: str, differentiable: list[str]) -> str:
    """auto_element_wise: the forward formula torchgen derives from the single backward formula."""
    formula = ident("grad").sub(lambda m: f"{m.group(1)}{input_name}_t.conj(){m.group(2)}", backward)
    for name in differentiable:
        formula = ident(name).sub(rf"\g<1>{name}_p\g<2>", formula)  # an argument name: no backslash in it
    return f"({formula}).conj()"
