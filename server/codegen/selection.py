"""Operator selection (gen.py's --op-registration-whitelist and --op-selection-yaml-path).

The meaning follows torchgen's SelectiveBuilder: an operator "ns::name.overload" is selected when
the selection includes all operators, names it exactly, or names its base "ns::name" with
include_all_overloads (the default). Only what the generated files depend on is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import yaml

from ..model.native_function import NativeFunction

_TOP_LEVEL_KEYS = frozenset({"include_all_non_op_selectives", "include_all_operators", "debug_info", "operators",
                             "kernel_metadata", "et_kernel_metadata", "custom_classes", "build_features"})
_OPERATOR_KEYS = frozenset({"name", "is_root_operator", "is_used_for_training", "include_all_overloads", "debug_info"})


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


def from_allow_list(names: Iterable[str]) -> Selection:
    """--op-registration-whitelist: every overload of each name."""
    return Selection(False, tuple((n, True) for n in sorted(set(names))))


def _bool(data: Mapping, key: str, default: bool, where: str) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected '{key}' to be a bool, got {value!r}")
    return value


def _operator(name: object, info: object) -> tuple[str, bool]:
    if not isinstance(info, dict):
        raise ValueError(f"operator {name}: expected a mapping, got {info!r}")
    unexpected = set(info) - _OPERATOR_KEYS
    if unexpected:
        raise ValueError(f"operator {name}: unexpected keys {', '.join(sorted(map(str, unexpected)))}")
    if "name" in info and info["name"] != name:
        raise ValueError(f"op_name mismatch: {name} != {info['name']}")
    for key in ("is_root_operator", "is_used_for_training"):
        _bool(info, key, True, f"operator {name}")
    if "debug_info" in info and not isinstance(info["debug_info"], list):
        raise ValueError(f"operator {name}: expected 'debug_info' to be a list")
    return str(name), _bool(info, "include_all_overloads", True, f"operator {name}")


def selection_from_data(data: object) -> Selection:
    """A selection yaml's content (raises ValueError, with the reason)."""
    if not isinstance(data, dict):
        raise ValueError("expected a mapping at the top level")
    unexpected = set(data) - _TOP_LEVEL_KEYS
    if unexpected:
        raise ValueError(f"unexpected top level keys: {', '.join(sorted(map(str, unexpected)))}")
    include_all = _bool(data, "include_all_operators", False, "selection")
    _bool(data, "include_all_non_op_selectives", False, "selection")
    for key, kind in (("debug_info", list), ("operators", dict), ("kernel_metadata", dict),
                      ("et_kernel_metadata", dict)):
        if key in data and not isinstance(data[key], kind):
            raise ValueError(f"expected '{key}' to be a {kind.__name__}")
    operators = tuple(_operator(k, v) for k, v in (data.get("operators") or {}).items())
    return Selection(include_all, operators)


def parse_selection_yaml(text: str, path: str) -> tuple[Selection | None, str | None]:
    """(selection, None) or (None, error) for the text of an --op-selection-yaml-path file."""
    try:
        return selection_from_data(yaml.safe_load(text)), None
    except yaml.YAMLError as exc:
        return None, f"{path}: {exc}"
    except ValueError as exc:
        return None, f"{path}: {exc}"
