"""The `non_native` section of a lazy backend yaml: IR nodes for ops native_functions.yaml does not have.

Each item is a mapping: `func:` (a schema), optionally `opkind:` (the node's
OpKind expression) and `properties:` (names from the IR property groups).
Problems come back as diagnostics on the item's line; nothing raises.
"""

from __future__ import annotations

import yaml

from ...diagnostics import Diagnostic, diag
from ...frozen import record
from ...model.cpp_names import qualified_name_problem
from ...model.schema_parser import parse_schema
from ...pieces.lazy.schema import ALL_PROPERTIES, NON_NATIVE_PROPERTIES, LazyIrSchema, LazyTypeError, lazy_schema
from ...releases import Release
from ...text import Span

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Schema issues of names outside the name grammar (model/cpp_names.py); gen.py's Latin-1 limit (OPG144) is not
# gen_lazy_tensor's.
_NOT_C_NAMES = ("OPG140", "OPG142", "OPG143")


@record
class NonNativeOp:
    schema: LazyIrSchema
    span: Span


def _span(node: yaml.Node) -> Span:
    s, e = node.start_mark, node.end_mark
    return Span(s.line, s.column, e.line, e.column)


def _scalar(node: yaml.Node | None) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":str") else None


def _section(text: str) -> tuple[yaml.Node | None, list[Diagnostic]]:
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None, []  # the backend yaml check reports syntax errors
    if not isinstance(root, yaml.MappingNode):
        return None, []
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "non_native":
            if isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null"):
                return None, []
            if not isinstance(value, yaml.SequenceNode):
                return None, [diag("OPG536", _span(value), "'non_native' must be a list of mappings with 'func:' "
                                                            "(gen_lazy_tensor rejects anything else)")]
            return value, []
    return None, []


def _op(item: yaml.Node, release: Release) -> tuple[NonNativeOp | None, list[Diagnostic]]:
    where = _span(item)
    if not isinstance(item, yaml.MappingNode):
        return None, [diag("OPG536", where, "a non_native item must be a mapping with 'func:'")]
    fields = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
    func = _scalar(fields.get("func"))
    if func is None:
        return None, [diag("OPG536", where, "a non_native item needs 'func:' with a schema string")]
    parsed = parse_schema(func)
    pasted = next((i for i in parsed.issues if i.code in _NOT_C_NAMES), None)
    if pasted is not None:  # gen_lazy_tensor pastes its names into LazyIr.h as they are: the name grammar
        return None, [diag("OPG536", _span(fields["func"]), f"{pasted.message} (in the schema {func!r})")]
    if parsed.schema is None or any(i.code == "OPG200" for i in parsed.issues):
        return None, [diag("OPG536", _span(fields["func"]), f"not a valid schema: {func}")]
    props = NON_NATIVE_PROPERTIES
    problems: list[Diagnostic] = []
    node = fields.get("properties")
    if isinstance(node, yaml.SequenceNode):
        for p in node.value:
            name = _scalar(p)
            if name not in ALL_PROPERTIES:
                problems.append(diag("OPG536", _span(p), f"unknown IR property {p.value if hasattr(p, 'value') else p}"
                                     f"; the properties are {', '.join(sorted(ALL_PROPERTIES))}"))
            else:
                props = props.with_(name)
    elif node is not None and not (isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null")):
        problems.append(diag("OPG536", _span(node), "'properties' must be a list of IR property names"))
    opkind_node = fields.get("opkind")
    opkind = None if opkind_node is None else _scalar(opkind_node)
    if opkind_node is not None and opkind is None:
        problems.append(diag("OPG536", _span(opkind_node), "'opkind' must be a string"))
    elif opkind_node is not None and opkind is not None and (problem := qualified_name_problem(opkind, "opkind")):
        problems.append(diag("OPG536", _span(opkind_node), f"{problem}; gen_lazy_tensor pastes it into "
                                                           "torch::lazy::OpKind(...) as it is"))
    if problems:
        return None, problems
    try:
        schema = lazy_schema(parsed.schema, props, symint=True,
                             generators_in_ir=release.lazy_ir_keeps_generators).with_opkind(opkind)
    except LazyTypeError as exc:
        return None, [diag("OPG537", _span(fields["func"]), str(exc))]
    return NonNativeOp(schema, where), []


def read_non_native(text: str, release: Release) -> tuple[tuple[NonNativeOp, ...], tuple[Diagnostic, ...]]:
    """The non_native IR nodes of a backend yaml, in file order, and the problems found (by the release's
    gen_lazy_tensor)."""
    section, found = _section(text)
    ops = []
    if section is not None:
        for item in section.value:
            op, problems = _op(item, release)
            found.extend(problems)
            if op is not None:
                ops.append(op)
    return tuple(ops), tuple(found)
