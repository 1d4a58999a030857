"""tags.yaml: the tags an operator may carry, with their descriptions."""

from __future__ import annotations

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..suggest import did_you_mean
from ..syntax.nodes import YMap, YScalar
from .cpp_names import identifier_problem


@record
class Tag:
    name: str
    desc: str
    entry: YMap  # spans relative to the entry's first line


def lower_tag(entry: YMap) -> tuple[Tag | None, tuple[Diagnostic, ...]]:
    """One tags.yaml entry, by torchgen's rules (a 'tag' and a non-empty 'desc')."""
    diagnostics: list[Diagnostic] = []
    name_node = entry.value("tag")
    desc_node = entry.value("desc")
    for key, _ in entry.pairs:
        if isinstance(key, YScalar) and key.value not in ("tag", "desc"):
            hint, data = did_you_mean(str(key.value), ("tag", "desc"))
            diagnostics.append(diag("OPG403", key.span, f"unknown key '{key.value}' in a tags.yaml entry; torchgen "
                                                        f"ignores it{hint}", data=data))
    if name_node is None:
        diagnostics.append(diag("OPG400", entry.span, "this tags.yaml entry has no 'tag:' name"))
        return None, tuple(diagnostics)
    name = name_node.value if isinstance(name_node, YScalar) else None
    if not isinstance(name, str):
        diagnostics.append(diag("OPG400", name_node.span, "a tag name must be a plain string"))
        return None, tuple(diagnostics)
    if (problem := identifier_problem(name, "tag name")) is not None:
        diagnostics.append(diag("OPG404", name_node.span, f"{problem}; gen.py pastes it into enum_tag.h's enum Tag "
                                                          "as it is"))
    desc = desc_node.value if isinstance(desc_node, YScalar) else None
    if desc_node is None or desc == "":
        span = desc_node.span if desc_node is not None else name_node.span
        diagnostics.append(diag("OPG401", span, f"tag '{name}' needs a non-empty 'desc:'"))
    # Still defined, so that ops using it are not reported too.
    return Tag(name, desc if isinstance(desc, str) else "", entry), tuple(diagnostics)
