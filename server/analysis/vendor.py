"""Queries on a vendor's dialect of the backend yaml (model.vendor_formats): the op under the cursor, its hover
(upstream's declaration, or the file's own schema for a new op), and the document's symbols."""

from __future__ import annotations

from ..index.native import NativeSnapshot
from ..model.backend import ListedOp
from ..model.vendor_formats import CUSTOM, SECTIONS, UPSTREAM, VendorOp, VendorYaml
from .hover import HoverText, function_summary
from .symbols import GROUP, OP, Symbol

# Sections whose entries name upstream ops (completion offers upstream's names there), and those of new ops.
OP_SECTIONS = tuple(sorted({s for table in SECTIONS.values() for s, role in table.items() if role != CUSTOM}))
CUSTOM_SECTIONS = tuple(sorted({s for table in SECTIONS.values() for s, role in table.items() if role == CUSTOM}
                               - set(OP_SECTIONS)))

FORMAT_NAMES = {"torch_npu": "torch_npu's npu_native_functions.yaml (read by torchnpugen)",
                "op-plugin": "op-plugin's op_plugin_functions.yaml (read by torchnpugen.gen_op_plugin_functions)",
                "torch_mlu": "torch_mlu's mlu_functions.yaml (read by codegen/gen_mlu_stubs.py)",
                "torch_musa": "torch_musa's musa_functions.yaml (read by tools/codegen/gen_torch_musa.py)"}


def vendor_op_at(yaml: VendorYaml, line: int, col: int) -> VendorOp | None:
    return next((op for op in yaml.ops if op.span.contains(line, col)), None)


def listed_op_at(yaml: VendorYaml, line: int, col: int) -> ListedOp | None:
    """The op under the cursor as a backend yaml's listing (definition and the backend queries take it)."""
    op = vendor_op_at(yaml, line, col)
    if op is None or op.role == CUSTOM:
        return None
    return ListedOp(op.section, op.name_span, op.text, op.name, op.kind)


def hover(yaml: VendorYaml, native: NativeSnapshot | None, line: int, col: int) -> HoverText | None:
    op = vendor_op_at(yaml, line, col)
    if op is None:
        return None
    where = FORMAT_NAMES.get(yaml.format, yaml.format)
    versions = f" Applies to {', '.join(op.versions)}." if op.versions else ""
    found = native.ops_by_name.get(op.text) if native is not None else None
    if op.role == CUSTOM or found is None and op.role != UPSTREAM and op.schema is not None:
        declared = op.schema or f"{op.text} (its schema is not written yet)"
        return HoverText(f"**{op.text}**: a new op of {where}, declared here:\n```\n{declared}\n```{versions}",
                         op.span)
    if native is None:
        return HoverText(f"**{op.text}**: no native_functions.yaml is known to look it up in", op.name_span)
    if found is None:
        return HoverText(f"**{op.text}**: {native.release}'s native_functions.yaml declares no such operator",
                         op.name_span)
    drift = op.schema is not None and op.schema != str(found.function.func)
    head = f"**{op.text}**: an upstream op listed in {where}.{versions}"
    if drift:
        head += f"\n\nThe schema written here differs from {native.release}'s:\n```\n{op.schema}\n```"
    return HoverText(f"{head}\n\nUpstream ({native.release}) declares:\n```\n{found.function.func}\n```\n\n"
                     f"{function_summary(found.function)}", op.span)


def symbols(yaml: VendorYaml) -> list[Symbol]:
    """One group per section (a list-shaped file: one flat list), one symbol per op."""
    by_section: dict[str, list[Symbol]] = {}
    for op in yaml.ops:
        detail = op.schema or ("upstream op" if op.role == UPSTREAM else "")
        by_section.setdefault(op.section, []).append(Symbol(op.text, OP, detail, op.span, op.name_span))
    if not yaml.keys:
        return [s for group in by_section.values() for s in group]
    out = []
    for section, children in by_section.items():
        key = yaml.key_span(section)
        if key is None:
            out.extend(children)
            continue
        last = children[-1].range
        whole = type(key)(key.start_line, key.start_col, last.end_line, last.end_col)
        out.append(Symbol(section, GROUP, f"{len(children)} ops", whole, key, tuple(children)))
    return out
