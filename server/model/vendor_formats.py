"""Vendor dialects of the backend yaml, read the way each vendor's own codegen reads them.

Four real formats list a backend's ops in something other than gen_backend_stubs' input:

- torch_npu's `npu_native_functions.yaml` (read by torchnpugen.gen_backend_stubs): `backend`, `cpp_namespace`,
  op lists `supported` / `autograd` / `symint` / `quant` / `nestedtensor` whose items are a name or a map with
  `func:`, and `custom` / `custom_autograd`, new ops given by their whole schema;
- op-plugin's `op_plugin_functions.yaml` (torchnpugen.gen_op_plugin_functions): `all_version`, the torch lines it
  knows, then `official` / `autograd` / `symint` / `quant` / `custom` maps whose `acl_op`, `op_api`, `sparse`
  (and `dvm`, `internal_format_opapi`, `exposed`) say for which torch lines the op applies;
- torch_mlu's `mlu_functions.yaml`: `aten:` (upstream ops by name or schema), `vision:`, `audio:` and `custom:`
  (new ops by schema);
- torch_musa's `musa_functions.yaml` (tools/codegen/gen_torch_musa.py): a list of `- func:` maps naming upstream ops
  (or their autogen variants), a schema given only when it is exactly upstream's.

Each entry is lowered to a `VendorOp`: where its `func:` is, the name, the schema when written, what it must be
(an upstream op, a new op, or either) and, for op-plugin, the torch lines it applies to. Resolving the names
against a release's native_functions.yaml is `index.vendor`'s job.
"""

from __future__ import annotations

import os
import re

from ..diagnostics import Diagnostic, Severity, diag
from ..frozen import record
from ..suggest import did_you_mean
from ..syntax.nodes import YMap, YNode, YScalar, YSeq
from ..text import Span
from .schema import OperatorName
from .schema_parser import parse_operator_name

TORCH_NPU = "torch_npu"
OP_PLUGIN = "op-plugin"
TORCH_MLU = "torch_mlu"
TORCH_MUSA = "torch_musa"

# What an entry of a section must be.
UPSTREAM = "upstream"  # an op of the torch release's native_functions.yaml (its schema, if written, exactly upstream's)
CUSTOM = "custom"      # a new op, declared by its whole schema
EITHER = "either"      # upstream's when the release declares it, else a new op

# Sections of op entries per format, and the role of their entries.
SECTIONS: dict[str, dict[str, str]] = {
    TORCH_NPU: {"supported": UPSTREAM, "autograd": UPSTREAM, "symint": EITHER, "quant": UPSTREAM,
                "nestedtensor": UPSTREAM, "custom": CUSTOM, "custom_autograd": CUSTOM},
    OP_PLUGIN: {"official": UPSTREAM, "autograd": UPSTREAM, "symint": EITHER, "quant": UPSTREAM, "custom": CUSTOM,
                "tocpu": UPSTREAM, "unsupported": UPSTREAM},
    TORCH_MLU: {"aten": UPSTREAM, "vision": CUSTOM, "audio": CUSTOM, "custom": CUSTOM},
    TORCH_MUSA: {},
}
# Other top-level keys each codegen reads (their values are not ops).
SETTINGS: dict[str, tuple[str, ...]] = {
    TORCH_NPU: ("backend", "cpp_namespace", "custom_supported"),
    OP_PLUGIN: ("all_version",),
    TORCH_MLU: (),
    TORCH_MUSA: (),
}
# op-plugin's keys that name torch lines; an op applies to the lines of acl_op, op_api and sparse.
VERSION_KEYS = ("acl_op", "op_api", "sparse", "dvm", "internal_format_opapi", "exposed", "version")
APPLIES_KEYS = ("acl_op", "op_api", "sparse", "version")

FILE_NAMES = {"npu_native_functions.yaml": TORCH_NPU, "op_plugin_functions.yaml": OP_PLUGIN,
              "mlu_functions.yaml": TORCH_MLU, "musa_functions.yaml": TORCH_MUSA}

_TOP_KEY = re.compile(r"([A-Za-z_]\w*):")


def vendor_format(path: str, text: str) -> str | None:
    """The vendor format of a file: by its name, else by its top-level keys (None: not a vendor file)."""
    found = FILE_NAMES.get(os.path.basename(path))
    if found is not None:
        return found
    keys = {m.group(1) for line in text.splitlines() if (m := _TOP_KEY.match(line))}
    if "all_version" in keys and "official" in keys:
        return OP_PLUGIN
    if "backend" in keys and keys & {"custom", "custom_autograd", "quant", "nestedtensor"}:
        return TORCH_NPU
    if "aten" in keys and not keys - set(SECTIONS[TORCH_MLU]):
        return TORCH_MLU
    return None


@record
class VendorOp:
    """One op entry of a vendor file."""

    section: str
    # The `func:` value (or the plain list item).
    span: Span
    # `name.overload` as written, and where it is.
    text: str
    name_span: Span
    name: OperatorName | None
    # The whole schema when one is written, and where.
    schema: str | None
    role: str
    # op-plugin: the torch lines (`v2.13`) it applies to; None: every release it is checked against.
    versions: tuple[str, ...] | None = None
    kind: str = "scalar"
    # The keys of a map entry beside `func:` (torchnpugen registers a `supported` map only with some of them).
    options: tuple[str, ...] = ()


@record
class VendorYaml:
    format: str
    ops: tuple[VendorOp, ...]
    # Every top-level key as written and its span (a list-shaped file has none).
    keys: tuple[tuple[str, Span], ...]
    all_version: tuple[str, ...] = ()

    def key_span(self, key: str) -> Span | None:
        return next((span for k, span in self.keys if k == key), None)


class _Reader:
    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.diagnostics: list[Diagnostic] = []
        self.ops: list[VendorOp] = []
        self.all_version: tuple[str, ...] = ()

    def add(self, code: str, span: Span, message: str, *, severity: Severity | None = None,
            data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, severity=severity, data=data))


def _value_span(node: YScalar) -> Span:
    """The characters of a scalar's value (inside its quotes, for a quoted one on one line)."""
    s = node.span
    if node.style in ("'", '"') and s.start_line == s.end_line:
        return Span(s.start_line, s.start_col + 1, s.end_line, s.end_col - 1)
    return s


def _func_of(item: YNode) -> tuple[YScalar | None, YMap | None]:
    """The `func:` scalar of an item (the item itself when it is a plain name) and its map."""
    if isinstance(item, YScalar):
        return item, None
    if isinstance(item, YMap):
        for k, v in item.pairs:
            if isinstance(k, YScalar) and k.value == "func":
                return (v if isinstance(v, YScalar) else None), item
        return None, item
    return None, None


def _versions(r: _Reader, entry: YMap | None) -> tuple[str, ...] | None:
    """op-plugin: the lines the entry applies to, as torchnpugen's get_version reads each key."""
    if r.fmt != OP_PLUGIN or entry is None:
        return None
    found: list[str] = []
    for k, v in entry.pairs:
        if not isinstance(k, YScalar) or k.value not in VERSION_KEYS:
            continue
        lines = _version_value(r, str(k.value), v)
        if k.value in APPLIES_KEYS:
            found.extend(line for line in lines if line not in found)
    return tuple(found)


def _version_value(r: _Reader, key: str, node: YNode) -> tuple[str, ...]:
    known = r.all_version
    if isinstance(node, YSeq):
        ends = [i.value if isinstance(i, YScalar) else None for i in node.items]
        if len(ends) != 2:
            r.add("OPG551", node.span, f"a version range of '{key}' is [first, last] (or [first, newest]), "
                                       f"not {len(ends)} items")
            return ()
        start, end = ends
        bad = [(i, e) for i, e in zip(node.items, ends, strict=True)
               if e not in known and not (e is ends[1] and e == "newest")]
        for item, e in bad:
            hint, data = did_you_mean(str(e), known)
            r.add("OPG551", item.span, f"'{e}' is not in all_version{hint} (torchnpugen: all_version.index "
                                       "raises ValueError)", data=data)
        if bad or not isinstance(start, str):
            return ()
        first = known.index(start)
        last = len(known) if end == "newest" else known.index(str(end)) + 1
        return known[first:last]
    if not isinstance(node, YScalar) or node.value is None:
        return ()
    text = str(node.value)
    if text in ("all_version", "True", "true") or node.value is True:
        return known if text == "all_version" else ()
    lines = tuple(p.strip() for p in text.split(","))
    for line in lines:
        if line not in known:
            hint, data = did_you_mean(line, known)
            r.add("OPG551", _value_span(node), f"'{line}' is not in all_version{hint}: the op is never generated "
                                               "for it", severity=Severity.WARNING, data=data)
    return lines


def _entry(r: _Reader, section: str, role: str, item: YNode) -> None:
    func, entry = _func_of(item)
    if func is None or not isinstance(func.value, str) or not func.value.strip():
        where = item.span if func is None else func.span
        r.add("OPG553", where, f"an item of '{section}' must be an op name or a map with 'func: <schema>' "
                               f"(as {r.fmt}'s codegen reads it)")
        return
    text = func.value.strip()
    span = _value_span(func)
    paren = text.find("(")
    name_text = text if paren < 0 else text[:paren]
    name_span = Span(span.start_line, span.start_col, span.start_line, span.start_col + len(name_text))
    if role == CUSTOM and paren < 0:
        r.add("OPG552", span, f"'{section}' declares a new op: write its whole schema, 'func: {text}(...) -> ...' "
                              f"({NO_SCHEMA.get(r.fmt, 'its codegen parses it as a schema')})")
    if entry is not None:
        _options(r, entry)
        if r.fmt == TORCH_NPU and section == "supported" and not set(NPU_REGISTERED_WITH) & set(_keys(entry)):
            r.add("OPG555", span, f"torchnpugen registers a 'func:' entry of 'supported' only with "
                                  f"{', '.join(NPU_REGISTERED_WITH)} beside it: '{name_text}' is left out "
                                  f"without a word (write it as '- {name_text}')", severity=Severity.WARNING)
    elif r.fmt in (TORCH_MLU, TORCH_MUSA):
        r.add("OPG553", item.span, f"an item of '{section}' must be a map with 'func:' ({r.fmt}'s codegen asserts "
                                   "each op is a dict)")
    name, issues = parse_operator_name(name_text)
    if name is None or str(name) != name_text:
        why = issues[0].message if issues else "not a valid op name"
        r.add("OPG508", name_span, f"'{name_text}' is not an op name: {why}")
        name = None
    r.ops.append(VendorOp(section, span, name_text, name_span, name, text if paren >= 0 else None, role,
                          _versions(r, entry), "mapping" if entry is not None else "scalar",
                          tuple(k for k in _keys(entry) if k != "func") if entry is not None else ()))


# What each codegen says of a new op written without its schema (torchnpugen: torchgen's FunctionSchema.parse, in
# parse_native_and_custom_yaml, before its own "Wrong format for function").
NO_SCHEMA = {TORCH_NPU: "torchnpugen: Invalid function schema",
             TORCH_MLU: "gen_mlu_stubs: You must provide concrete function schema"}

# parse_backend_yaml adds a map entry of `supported` to the ops it registers only when one of these keys is there.
NPU_REGISTERED_WITH = ("op_api", "device_check", "impl_ns")

MLU_DERIVED_TYPES = ("cnnl", "bang", "mluop")
MLU_DISPATCH = ("PrivateUse1", "SparsePrivateUse1")


def _keys(entry: YMap) -> list[str]:
    return [k.value for k, _ in entry.pairs if isinstance(k, YScalar) and isinstance(k.value, str)]


def _options(r: _Reader, entry: YMap) -> None:
    """The per-op options a codegen asserts on (torch_mlu: derived_type, dispatch; torch_musa: dispatch,
    structured)."""
    for k, v in entry.pairs:
        key = k.value if isinstance(k, YScalar) else None
        value = v.value if isinstance(v, YScalar) else None
        if r.fmt == TORCH_MLU and key == "derived_type" and value not in MLU_DERIVED_TYPES:
            r.add("OPG554", v.span, f"derived_type is one of {', '.join(MLU_DERIVED_TYPES)} (gen_mlu_stubs: "
                                    f"derived_type support cnnl, bang or mluop, but got: {value})")
        elif r.fmt == TORCH_MLU and key == "dispatch":
            parts = str(value).replace(" ", "").split(",")
            for part in parts:
                if part not in MLU_DISPATCH:
                    r.add("OPG554", v.span, f"dispatch is PrivateUse1, SparsePrivateUse1 or both (gen_mlu_stubs: "
                                            f"dispatch only support PrivateUse1 and SparsePrivateUse1, but got: "
                                            f"{part})")
        elif r.fmt == TORCH_MUSA and key == "dispatch" and not isinstance(v, YMap):
            r.add("OPG554", v.span, "dispatch is a map of dispatch key to kernel (gen_torch_musa asserts a dict)")
        elif r.fmt == TORCH_MUSA and key == "structured" and not isinstance(value, bool):
            r.add("OPG554", v.span, "structured is True or False (gen_torch_musa asserts a bool)")


def _section(r: _Reader, key: YScalar, value: YNode, role: str) -> None:
    if isinstance(value, YScalar) and value.value is None:
        return
    if not isinstance(value, YSeq):
        r.add("OPG506", key.span, f"'{key.value}' must be a list of ops")
        return
    for item in value.items:
        _entry(r, str(key.value), role, item)


def lower_vendor_yaml(fmt: str, root: YNode | None) -> tuple[VendorYaml | None, tuple[Diagnostic, ...]]:
    """A vendor file's model and the problems its codegen would see in its structure."""
    r = _Reader(fmt)
    if fmt == TORCH_MUSA:
        if root is None or (isinstance(root, YScalar) and root.value is None):
            return VendorYaml(fmt, (), ()), ()
        if not isinstance(root, YSeq):
            return None, (diag("OPG500", root.span, "musa_functions.yaml is a list of '- func: <op>' entries "
                                                    "(gen_torch_musa: assert isinstance(musa_ops, list))"),)
        for item in root.items:
            _entry(r, "func", EITHER, item)
        return VendorYaml(fmt, tuple(r.ops), ()), tuple(r.diagnostics)
    if not isinstance(root, YMap):
        where = root.span if root is not None else Span.point(0, 0)
        return None, (diag("OPG500", where, f"a {fmt} yaml is a mapping of sections such as "
                                            f"{', '.join(SECTIONS[fmt])}"),)
    sections, settings = SECTIONS[fmt], SETTINGS[fmt]
    keys = tuple((k.value, k.span) for k, _ in root.pairs if isinstance(k, YScalar) and isinstance(k.value, str))
    for k, v in root.pairs:
        if isinstance(k, YScalar) and k.value == "all_version":
            if isinstance(v, YSeq):
                r.all_version = tuple(str(i.value) for i in v.items if isinstance(i, YScalar))
            else:
                r.add("OPG506", k.span, "'all_version' must be the list of torch lines, e.g. [v2.1, v2.2]")
    for k, v in root.pairs:
        if not isinstance(k, YScalar):
            continue
        name = str(k.value)
        if name in sections:
            _section(r, k, v, sections[name])
        elif name not in settings:
            accepted = (*settings, *sections)
            hint, data = did_you_mean(name, accepted)
            # gen_mlu_stubs pops the sections it knows and never looks at the rest: a mistyped one is lost.
            ignored = " and ignores the others" if fmt == TORCH_MLU else ""
            r.add("OPG507", k.span, f"unexpected key '{name}': {fmt}'s codegen reads only "
                                    f"{', '.join(accepted)}{ignored}{hint}", data=data,
                  severity=Severity.WARNING if fmt == TORCH_MLU else None)
    if fmt == TORCH_NPU:
        for required in ("backend", "cpp_namespace"):
            if not any(k == required for k, _ in keys):
                r.add("OPG501" if required == "backend" else "OPG503", keys[0][1] if keys else Span.point(0, 0),
                      f"no value for '{required}:' (torchnpugen: You must provide a value for '{required}')")
    return VendorYaml(fmt, tuple(r.ops), keys, r.all_version), tuple(r.diagnostics)
