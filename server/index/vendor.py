"""A vendor file (model.vendor_formats) resolved against the native_functions.yaml of each torch release it targets.

An upstream entry must name an op the release declares, with exactly its schema when one is written; a new op's
schema is checked by the schema rules. op-plugin entries are resolved against every release of their version range
that is at hand (`natives`); the other formats against the one release given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, diag
from ..model.schema_parser import parse_schema
from ..model.vendor_formats import (
    CUSTOM,
    EITHER,
    OP_PLUGIN,
    TORCH_MLU,
    TORCH_MUSA,
    TORCH_NPU,
    UPSTREAM,
    VendorOp,
    VendorYaml,
)
from ..suggest import did_you_mean
from ..text import Span
from .native import NativeSnapshot

_LIST_SIZE = re.compile(r"\[\d+\]")
# A release's native_functions.yaml by torch line ("2.13"), when it is at hand.
NativeFor = Callable[[str], NativeSnapshot | None]


@dataclass(frozen=True)
class VendorResolution:
    yaml: VendorYaml
    # The releases checked against, by torch line ("2.13").
    releases: tuple[str, ...]


def series_of(version: str) -> str:
    """op-plugin's `v2.13` as a torch line, `2.13`."""
    return version[1:] if version.startswith("v") else version


def releases_of(op: VendorOp, default: NativeSnapshot, natives: NativeFor | None) -> list[NativeSnapshot]:
    if op.versions is None:
        return [default]
    if natives is None:  # only the release given: the op is checked there if its range holds it
        return [default] if f"v{default.release.series}" in op.versions else []
    out: list[NativeSnapshot] = []
    for version in op.versions:
        native = natives(series_of(version))
        if native is not None and all(n is not native for n in out):
            out.append(native)
    return out


def _schema_issues(op: VendorOp) -> list[Diagnostic]:
    assert op.schema is not None
    parsed = parse_schema(op.schema)
    line, col = op.span.start_line, op.span.start_col
    return [diag(i.code, Span.on_line(line, col + i.start, col + max(i.end, i.start)), i.message, data=i.data)
            for i in parsed.issues]


def _upstream(op: VendorOp, native: NativeSnapshot, fmt: str) -> list[Diagnostic]:
    found = native.ops_by_name.get(op.text)
    where = str(native.release)
    # gen_mlu_stubs reads only the name of an aten entry and leaves out a name it does not find: a warning.
    severity = Severity.WARNING if fmt == TORCH_MLU else None
    if found is None:
        hint, data = did_you_mean(op.text, native.ops_by_name)
        tail = {TORCH_MUSA: " (gen_torch_musa: musa newly added kernel is not supported yet)",
                TORCH_MLU: " (torch_mlu's codegen leaves it out without a word)"}.get(fmt, "")
        return [diag("OPG509", op.name_span, f"{where}'s native_functions.yaml declares no op '{op.text}'{hint}"
                                             f"{tail}", data=data, severity=severity)]
    expected = str(found.function.func)
    if op.schema is not None and op.schema != expected and (fmt != OP_PLUGIN or _shape(op.schema) != _shape(expected)):
        tail = ""
        if fmt == TORCH_NPU and op.kind == "mapping":
            # parse_backend_yaml takes a `func:` value up to its "(": the schema written is never compared.
            severity, tail = Severity.WARNING, " (torchnpugen reads only the name of a 'func:' entry)"
        return [diag("OPG550", op.span, f"this schema differs from {where}'s; upstream declares:\n  {expected}{tail}",
                     data=(("replace", expected),), severity=severity)]
    return []


def _shape(schema: str) -> tuple[object, ...] | None:
    """What op-plugin's own C++ signature must agree on with upstream's schema: the arguments' types in order (SymInt
    read as int: op-plugin declares some kernels without SymInt on purpose) and the return types. Names, defaults
    and keyword-only marks are op-plugin's own: its codegen takes only the op name of an official entry, and none
    of them changes the C++ signature."""
    parsed = parse_schema(schema).schema
    if parsed is None:
        return None
    return (tuple(_cpp_relevant(str(a.type)) for a in parsed.arguments.flat_all),
            tuple(_cpp_relevant(str(r.type)) for r in parsed.returns))


def _cpp_relevant(type_text: str) -> str:
    """A schema type as far as it shapes the C++ signature: SymInt as int, a list's size left out."""
    return _LIST_SIZE.sub("[]", type_text.replace("SymInt", "int"))


def resolve_vendor(yaml: VendorYaml, default: NativeSnapshot, natives: NativeFor | None = None
                   ) -> tuple[VendorResolution, tuple[Diagnostic, ...]]:
    """Every op of the file against the releases it targets."""
    out: list[Diagnostic] = []
    new_ops = {op.text for op in yaml.ops if op.role == CUSTOM}
    checked: list[str] = []
    for op in yaml.ops:
        if op.name is None:
            continue
        targets = releases_of(op, default, natives)
        for native in targets:
            if native.release.series not in checked:
                checked.append(native.release.series)
        upstream_here = [n for n in targets if op.text in n.ops_by_name]
        role = op.role
        if role == EITHER:
            role = UPSTREAM if upstream_here or yaml.format == TORCH_MUSA or op.schema is None else CUSTOM
        if role == UPSTREAM and op.schema is None and op.text in new_ops:
            continue  # a new op of this file listed again (symint, supported)
        if role == UPSTREAM:
            for native in targets:
                out.extend(_upstream(op, native, yaml.format))
        elif op.schema is not None:
            out.extend(_schema_issues(op))
    if yaml.format == TORCH_MLU:
        out.extend(_mlu_groups(yaml, default))
    return VendorResolution(yaml, tuple(checked)), tuple(out)


def _mlu_groups(yaml: VendorYaml, native: NativeSnapshot) -> list[Diagnostic]:
    """gen_mlu_stubs (parse_mlu_aten_yaml) stores the CPU kernel of a structured group any of whose ops is listed
    under its out variant's entry, when CPU and CUDA share it: an out variant not listed is a KeyError."""
    listed = {op.text for op in yaml.ops if op.section == "aten"}
    out = []
    for op in yaml.ops:
        found = native.ops_by_name.get(op.text) if op.section == "aten" else None
        if found is None:
            continue
        func = found.function
        group_out = str(op.text if func.structured else func.structured_delegate or "")
        target = native.ops_by_name.get(group_out)
        if target is None or not target.function.structured or group_out in listed:
            continue
        kernels = {str(key): m.kernel for key, m in target.metadata}
        if kernels.get("CPU") is not None and kernels.get("CPU") == kernels.get("CUDA"):
            out.append(diag("OPG556", op.name_span, f"'{op.text}' is in the structured group of '{group_out}', which "
                                                    f"'aten' must list too (gen_mlu_stubs: KeyError {group_out})"))
    return out
