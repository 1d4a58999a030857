"""The shape-inference check of gen_lazy_tensor, with each problem placed on the op's yaml line.

A full_codegen op that is neither structured nor a view_copy calls a
hand-written `compute_shape_<kernel>(...)`. gen_lazy_tensor requires the
header given by --shape-inference-hdr to hold, as one line exactly, the
declaration it would write; otherwise it fails before writing anything.
opgen applies the same rule (so it accepts and rejects the same inputs) and
says which op needs what: the declaration is missing, or the header declares
that function with another signature.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ...diagnostics import Diagnostic, diag
from ...frozen import record
from ...model.backend import ListedOp
from ...model.native_function import BackendIndex, NativeFunction
from ...model.schema import OperatorName
from ...pieces.lazy.kernels import shape_declaration
from ...releases.profile import CppSpelling
from ...text import Span

_DECLARED = re.compile(r"\bcompute_shape_(\w+)\s*\(")


@record
class ShapeHeader:
    path: str
    # Every line of the header as written (gen_lazy_tensor's test is exact line membership).
    lines: frozenset[str]
    # The compute_shape_<name> functions it declares, whatever their signature.
    names: frozenset[str]


def parse_shape_header(path: str, text: str) -> ShapeHeader:
    """The header as gen_lazy_tensor reads it: with universal newlines (an editor's text may keep \r\n)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return ShapeHeader(path, frozenset(text.split("\n")), frozenset(m.group(1) for m in _DECLARED.finditer(text)))


@record
class MissingShape:
    op: OperatorName
    kernel: str
    declaration: str
    # The header declares compute_shape_<kernel>, but not with this signature.
    other_signature: bool


def expected_declarations(functions: Iterable[NativeFunction], index: BackendIndex, spelling: CppSpelling
                          ) -> list[tuple[NativeFunction, str]]:
    """(op, declaration) for each full_codegen op that needs a compute_shape_ function, in generation order."""
    out = []
    for f in functions:
        decl = shape_declaration(f, index, spelling)
        if decl is not None:
            out.append((f, decl))
    return out


def missing_shapes(expected: Iterable[tuple[NativeFunction, str]], header: ShapeHeader,
                   index: BackendIndex) -> list[MissingShape]:
    out = []
    for f, decl in expected:
        meta = index.get_kernel(f)
        if decl in header.lines or meta is None:  # None never: expected_declarations refuses an op without one
            continue
        out.append(MissingShape(f.func.name, meta.kernel, decl, meta.kernel in header.names))
    return out


def shape_diagnostics(missing: Iterable[MissingShape], listings: Mapping[OperatorName, tuple[ListedOp, ...]],
                      header_path: str, anchor: Span) -> list[Diagnostic]:
    """One error per missing declaration, on each full_codegen line of its op (else on anchor)."""
    found: list[Diagnostic] = []
    for m in missing:
        if m.other_signature:
            why = (f"{header_path} declares compute_shape_{m.kernel}, but not with the signature gen_lazy_tensor "
                   "expects (it compares whole lines)")
        else:
            why = f"{header_path} does not declare compute_shape_{m.kernel}"
        message = (f"{m.op} needs a shape-inference function: {why}. Declare it there (and implement it in "
                   f"shape_inference.cpp):\n{m.declaration}")
        items = [i for i in listings.get(m.op, ()) if i.section == "full_codegen"] or \
            [i for i in listings.get(m.op, ()) if i.section in ("supported", "symint")]
        spans = [i.span for i in items[:1]] if items else [anchor]
        found.extend(diag("OPG535", span, message, data=(("declaration", m.declaration),)) for span in spans)
    return found
