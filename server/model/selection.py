"""Operator selection yaml (gen.py's --op-selection-yaml-path), read as torchgen's SelectiveBuilder reads it.

An operator "ns::name.overload" is selected when the selection includes all operators, names it exactly, or
names its base "ns::name" with include_all_overloads (the default). lower_selection also says, at the node that
is wrong, each reason SelectiveBuilder.from_yaml_dict refuses a file (it stops at the first, with no line).
Mappings are read as PyYAML builds them: of a key given twice, the last wins (and only it is checked).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, diag
from ..syntax.nodes import YMap, YNode, YScalar, YSeq, to_python
from ..text import Span
from .selection_keys import TOP_LEVEL_KEYS

if TYPE_CHECKING:  # (a check classifies files by these keys before any model is needed)
    from .native_function import NativeFunction

OPERATOR_KEYS = ("name", "is_root_operator", "is_used_for_training", "include_all_overloads", "debug_info")


@dataclass(frozen=True)
class Selection:
    include_all_operators: bool
    # operator name (with or without overload) -> include_all_overloads
    operators: tuple[tuple[str, bool], ...] = ()

    @cached_property
    def _operators(self) -> dict[str, bool]:
        return dict(self.operators)

    def is_operator_selected(self, name: str) -> bool:
        if self.include_all_operators or name in self._operators:
            return True
        base = name.split(".", 1)[0]
        return self._operators.get(base, False)

    def is_selected(self, f: NativeFunction) -> bool:
        return self.include_all_operators or self.is_operator_selected(f"{f.namespace}::{f.func.name}")


ALL_OPERATORS = Selection(True)


def _key(node: YNode) -> object:
    value = to_python(node)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _last_pairs(mapping: YMap, out: list[Diagnostic]) -> dict[object, tuple[YNode, YNode]]:
    """key -> (key node, value node) as PyYAML builds the dict: the last of a key given twice (a warning)."""
    pairs: dict[object, tuple[YNode, YNode]] = {}
    for k, v in mapping.pairs:
        key = _key(k)
        if key in pairs:
            out.append(diag("OPG806", pairs[key][0].span, f"'{key}' is given again below; PyYAML (and so "
                                                          "torchgen) keeps only the last"))
        if isinstance(k, (YSeq, YMap)):
            out.append(diag("OPG801", k.span, "a key must be a plain value (PyYAML cannot build this mapping)"))
        pairs[key] = (k, v)
    return pairs


def _is(node: YNode, kind: type) -> bool:
    return isinstance(node, YScalar) and isinstance(node.value, kind) if kind is bool else isinstance(node, kind)


def _type_error(value: YNode, key: object, what: str) -> Diagnostic:
    shown = ("a list" if isinstance(value, YSeq) else "a mapping" if isinstance(value, YMap)
             else "nothing" if value.value is None else repr(value.value))
    return diag("OPG802", value.span, f"'{key}' must be {what}, not {shown}")


def _iterable_problem(value: YNode, key: str) -> Iterator[Diagnostic]:
    """Python's Iterable, as set() takes it: a list of hashable values, a mapping or a string."""
    if isinstance(value, YScalar) and not isinstance(value.value, str):
        yield _type_error(value, key, "a list")
    elif isinstance(value, YSeq):
        for item in value.items:
            if isinstance(item, (YSeq, YMap)):
                yield diag("OPG802", item.span, f"the items of '{key}' must be plain values (they make a set)")


_BOOL_KEYS = ("include_all_operators", "include_all_non_op_selectives")


def _top_level(pairs: dict[object, tuple[YNode, YNode]], out: list[Diagnostic]) -> None:
    for key, (k, v) in pairs.items():
        if key not in TOP_LEVEL_KEYS:
            out.append(diag("OPG801", k.span, f"unknown key '{key}' in a selection yaml; its keys are "
                                              f"{', '.join(TOP_LEVEL_KEYS)}"))
        elif key in _BOOL_KEYS and not _is(v, bool):
            out.append(_type_error(v, key, "true or false"))
        elif key == "debug_info" and not _is(v, YSeq):
            out.append(_type_error(v, key, "a list"))
        elif key in ("operators", "kernel_metadata", "et_kernel_metadata") and not _is(v, YMap):
            out.append(_type_error(v, key, "a mapping"))
        elif key in ("custom_classes", "build_features"):
            out.extend(_iterable_problem(v, key))
        elif key == "kernel_metadata" and isinstance(v, YMap):  # a mapping: checked above
            for _, dtypes in v.pairs:
                if isinstance(dtypes, YScalar) and not isinstance(dtypes.value, str):
                    out.append(_type_error(dtypes, "kernel_metadata", "lists of dtypes"))


def _operator(name_node: YNode, info: YNode, out: list[Diagnostic]) -> tuple[str, bool] | None:
    name = to_python(name_node)
    if not isinstance(info, YMap):
        out.append(diag("OPG805", info.span, f"operator '{name}' needs a mapping (is_root_operator, "
                                             "include_all_overloads, ...), not a plain value"))
        return None
    pairs = _last_pairs(info, out)
    ok = True
    for key, (k, v) in pairs.items():
        if key not in OPERATOR_KEYS:
            out.append(diag("OPG803", k.span, f"unknown key '{key}' of operator '{name}'; its keys are "
                                              f"{', '.join(OPERATOR_KEYS)}"))
        elif key == "name" and to_python(v) != name:
            out.append(diag("OPG804", v.span, f"operator '{name}' is named '{to_python(v)}' here; the names must "
                                              "be the same"))
        elif key == "debug_info" and not _is(v, YSeq):
            out.append(_type_error(v, key, "a list"))
        elif key not in ("name", "debug_info") and not _is(v, bool):
            out.append(_type_error(v, key, "true or false"))
        else:
            continue
        ok = False
    overloads = pairs.get("include_all_overloads")
    all_overloads = overloads is None or (isinstance(overloads[1], YScalar) and overloads[1].value is True)
    return (str(name), all_overloads) if ok else None


def lower_selection(root: YNode | None) -> tuple[Selection | None, list[Diagnostic]]:
    """The selection a composed selection yaml makes (None when torchgen refuses it), and why not."""
    out: list[Diagnostic] = []
    if not isinstance(root, YMap):
        span = root.span if root is not None else Span.point(0, 0)
        out.append(diag("OPG800", span, "a selection yaml must be a mapping (include_all_operators: ..., "
                                        "operators: ...)"))
        return None, out
    pairs = _last_pairs(root, out)
    _top_level(pairs, out)
    operators: list[tuple[str, bool]] = []
    found = pairs.get("operators")
    if found is not None and isinstance(found[1], YMap):
        for name_node, info in _last_pairs(found[1], out).values():
            op = _operator(name_node, info, out)
            if op is not None:
                operators.append(op)
    if any(d.is_error for d in out):
        return None, out
    everything = pairs.get("include_all_operators")
    include_all = everything is not None and isinstance(everything[1], YScalar) and everything[1].value is True
    return Selection(include_all, tuple(operators)), out


def read_selection(text: str) -> tuple[Selection | None, list[Diagnostic]]:
    """The selection a selection yaml's text makes (None when torchgen refuses it: its YAML too), and the
    diagnostics saying why (warnings too)."""
    from ..syntax.libyaml import compose  # noqa: PLC0415  (PyYAML loads only for a run given a selection)

    root, composed = compose(text)
    found = [d for d in composed if d.code != "OPG004"]  # PyYAML keeps the last of a key given twice (OPG806)
    if any(d.is_error for d in found):
        return None, found
    selection, more = lower_selection(root)
    return selection, found + more
