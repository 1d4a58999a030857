"""deprecated.yaml: old Python signatures and the ATen call each stands for, as torchgen's Python binding
generator reads them (gen_python_functions.load_deprecated_signatures).

An entry is `name:` (a schema, in the deprecated argument order) and `aten:` (a call `op(arg, ...)` of
those arguments, or the constant 1). torchgen accepts an entry when some native function called `op`
(`op_out`: its out= variant) takes exactly those arguments' types and annotations in that order (the
rest defaulted) and returns what the deprecated schema returns.
"""

from __future__ import annotations

import itertools
import re

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..releases import Release
from ..suggest import did_you_mean
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from .native_function import NativeFunction
from .python_bindings import skip_reason
from .schema import Argument, BaseTy, BaseType, FunctionSchema, Type
from .schema_parser import SchemaSpans, parse_schema
from .schema_rules import check_schema

# torchgen.utils.split_name_params
_CALL = re.compile(r"(\w+)(\.\w+)?\((.*)\)")
# Values a call may pass that are not arguments of the deprecated schema, with their type.
KNOWN_CONSTANTS = {"1": "Scalar"}


@record
class DeprecatedEntry:
    schema: FunctionSchema
    name_node: YScalar
    aten_node: YScalar
    aten_name: str  # the op called, without a trailing _out
    is_out: bool
    call_args: tuple[str, ...]


def lower_deprecated(entry: YMap, release: Release) -> tuple[DeprecatedEntry | None, tuple[Diagnostic, ...]]:
    diagnostics: list[Diagnostic] = []
    nodes: dict[str, YScalar] = {}
    texts: dict[str, str] = {}
    for key in ("name", "aten"):
        node = entry.value(key)
        if not isinstance(node, YScalar) or not isinstance(node.value, str):
            at = node.span if node is not None else entry.span
            diagnostics.append(diag("OPG740", at, f"a deprecated.yaml entry needs '{key}:' as a string"))
        else:
            nodes[key], texts[key] = node, node.value
    if len(nodes) < 2:
        return None, tuple(diagnostics)
    name, aten = nodes["name"], nodes["aten"]
    parsed = parse_schema(texts["name"])
    where = ScalarText(name)
    diagnostics.extend(diag(i.code, where.span(i.start, i.end), i.message, data=i.data) for i in parsed.issues)
    schema = parsed.schema
    if schema is not None:
        diagnostics.extend(diag("OPG206", name.span, p.message) for p in check_schema(schema))
        if parsed.spans is not None:
            diagnostics.extend(_types_the_release_lacks(schema, parsed.spans, where, release))
    call = _CALL.match(texts["aten"])
    if call is None:
        diagnostics.append(diag("OPG741", aten.span, f"'{aten.value}' is not a call of the form op(arg, ...)"))
    if schema is None or call is None or any(d.is_error for d in diagnostics):
        return None, tuple(diagnostics)
    aten_name = call.group(1)
    call_args = tuple(call.group(3).split(", "))
    known = {a.name for a in schema.arguments.flat_all}
    text = ScalarText(aten)
    offset = call.start(3)
    for arg in call_args:
        if arg not in known and arg not in KNOWN_CONSTANTS:
            hint, data = did_you_mean(arg, known)
            diagnostics.append(diag("OPG742", text.span(offset, offset + len(arg)),
                                    f"'{arg}' is not an argument of the deprecated schema (nor the constant 1){hint}",
                                    data=data))
        offset += len(arg) + 2
    if any(d.is_error for d in diagnostics):
        return None, tuple(diagnostics)
    is_out = aten_name.endswith("_out")
    # torchgen drops every "_out" of the name, not only the suffix.
    return DeprecatedEntry(schema, name, aten, aten_name.replace("_out", "") if is_out else aten_name, is_out,
                           call_args), tuple(diagnostics)


def _types_the_release_lacks(schema: FunctionSchema, spans: SchemaSpans, where: ScalarText, release: Release
                             ) -> list[Diagnostic]:
    """Types the release's FunctionSchema.parse does not know (its BaseTy lacks them), which its deprecated.yaml
    reader then refuses: Dimname (named tensors) from 2.13, ConstQuantizerPtr from 2.6. (Until then the reader
    takes them: it only compares the arguments the aten call passes.)"""
    lacking = {ty: why for ty, why, known in (
        (BaseTy.Dimname, "named tensors (Dimname) left torch in 2.13", release.named_tensor_types),
        (BaseTy.ConstQuantizerPtr, "ConstQuantizerPtr left torchgen's types in 2.6", release.const_quantizer_ptr_type),
    ) if not known}
    if not lacking:
        return []
    found = [(spans.arguments[i].type, a.type) for i, a in enumerate(schema.arguments.flat_all)
             if i < len(spans.arguments)]
    found += [(spans.each_return[i], r.type) for i, r in enumerate(schema.returns) if i < len(spans.each_return)]
    return [diag("OPG203", where.span(*at), f"unknown type '{ty}': {why}; this is {release}")
            for at, ty in found for base, why in lacking.items() if ty.is_base_ty_like(base)]


def _compatible(entry: DeprecatedEntry, aten: FunctionSchema, constants: dict[str, Type]) -> bool:
    by_name = {a.name: a for a in entry.schema.arguments.flat_all}
    arguments = (itertools.chain(aten.arguments.out, aten.arguments.flat_non_out) if entry.is_out
                 else aten.arguments.flat_all)
    for i, arg in enumerate(arguments):
        if i < len(entry.call_args):
            name = entry.call_args[i]
            if name in constants:
                ty, annotation = constants[name], None
            else:
                given: Argument = by_name[name]
                ty, annotation = given.type, given.annotation
            if ty != arg.type or annotation != arg.annotation:
                return False
        elif arg.default is None:
            return False
    return len(entry.schema.returns) == len(aten.returns) and all(
        a == b for a, b in zip(entry.schema.returns, aten.returns))


def check_deprecated(entries: list[tuple[int, DeprecatedEntry]], functions: tuple[NativeFunction, ...],
                     release: Release) -> list[Diagnostic]:
    """Every entry no native function with a Python binding in the release matches (placed)."""
    constants: dict[str, Type] = {"1": BaseType(BaseTy.Scalar)}
    by_name: dict[str, list[NativeFunction]] = {}
    skipped: dict[str, list[tuple[NativeFunction, str]]] = {}
    for f in functions:
        reason = skip_reason(f, release)
        if reason is None:
            by_name.setdefault(str(f.func.name.name), []).append(f)
        else:
            skipped.setdefault(str(f.func.name.name), []).append((f, reason))
    out = []
    for line, entry in entries:
        message, data = _mismatch(entry, by_name, skipped, constants)
        if message is not None:
            out.append(diag("OPG743", entry.aten_node.span.shifted(line), message, data=data))
    return out


def _mismatch(entry: DeprecatedEntry, by_name: dict[str, list[NativeFunction]],
              skipped: dict[str, list[tuple[NativeFunction, str]]], constants: dict[str, Type]
              ) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """Why no function with a Python binding matches the entry (None when one does), and a did-you-mean."""
    candidates = by_name.get(entry.aten_name, [])
    if any(_compatible(entry, f.func, constants) for f in candidates):
        return None, ()
    unbound = [(f, why) for f, why in skipped.get(entry.aten_name, ()) if _compatible(entry, f.func, constants)]
    if unbound:
        f, why = unbound[0]
        return f"{f.func} matches, but it has no Python binding: {why}", ()
    if not candidates:
        hint, data = did_you_mean(entry.aten_name, by_name)
        return f"no native function with a Python binding is called '{entry.aten_name}'{hint}", data
    return (f"no overload of '{entry.aten_name}' takes these arguments in this order with the same types "
            f"and returns {', '.join(map(str, entry.schema.returns)) or 'nothing'}: "
            + "; ".join(str(f.func) for f in candidates[:4])), ()
