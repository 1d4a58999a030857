"""What changes for a backend yaml from one torch release to another (`opgen upgrade`, and the server's
information diagnostics when opgen.upgradeTarget is set).

Every op the yaml lists under supported, full_codegen or autograd that the older release declares is compared
with the newer release's: removed (the newer release lacks it), renamed (best effort: the newer release lacks
it but adds an op of the same base name with one new overload, or an op of a close name whose schema is the
same apart from the name), a changed schema, or a changed kernel declaration: the C++ gen_backend_stubs
declares in <Key>NativeFunctions.h for the backend (the same schema can map to other C++ types in another
release). The declarations are the generator's own (pieces/dest/native_declarations), for each release.

A vendor file is read as its vendor's codegen reads it (model.vendor_formats). torch_npu's npu_native_functions.yaml:
torchnpugen registers the upstream ops of `supported` (and `autograd`, `quant`, `nestedtensor`) with
gen_backend_stubs' kernel declarations in NPUNativeFunctions (create_backend_index: the dispatcher name, `_symint`
for an op under `symint:`), so those are compared the same way; the file's new ops (`custom:`, `custom_autograd:`,
and their names listed again under `supported:`) are its own and are left out, with the reason. The other vendor
formats declare their kernels in other ways and are not compared: the report says so (`problem`).
"""

from __future__ import annotations

import difflib
from enum import Enum

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..index.backend import check_backend
from ..index.native import NativeSnapshot
from ..model import dispatch as dk
from ..model.backend import BackendYaml
from ..model.backend_resolve import ResolvedBackend, external_kernel_name
from ..model.native_function import BackendIndex, BackendMetadata, NativeFunction
from ..model.schema import OperatorName
from ..model.vendor_formats import CUSTOM, NPU_REGISTERED_WITH, TORCH_NPU, VendorOp, VendorYaml
from ..pieces.dest.native_declarations import SymIntKernelError, compute_native_function_declaration
from ..releases import Release
from ..text import Span

# How alike two op names must be (difflib's ratio) for an op of the same schema to count as a rename.
RENAME_SIMILARITY = 0.75


class ChangeKind(Enum):
    REMOVED = "removed"
    RENAMED = "renamed"
    SCHEMA = "schema changed"
    SIGNATURE = "C++ signature changed"


@record
class OpChange:
    """One listed op that changes between the two releases, with both schemas and both kernel declarations
    ("" where a release has none)."""

    op: str
    kind: ChangeKind
    section: str
    span: Span
    old_schema: str
    new_schema: str
    old_declaration: str
    new_declaration: str
    renamed_to: str = ""

    @property
    def summary(self) -> str:
        """'removed', 'renamed to x.y', 'schema changed', ..."""
        return f"renamed to {self.renamed_to}" if self.kind is ChangeKind.RENAMED else self.kind.value


@record
class UpgradeReport:
    old_release: str
    new_release: str
    changes: tuple[OpChange, ...]
    # Listed ops the older release declares (compared), and those it does not (not compared).
    compared: int
    not_in_old: tuple[str, ...]
    # Ops of the file that are not upstream's to compare (a vendor's new ops), with why: (op, reason).
    left_out: tuple[tuple[str, str], ...] = ()
    # Why the file could not be compared at all ("" when it was): a reader says it, never "0 of 0 change".
    problem: str = ""


@record
class Listed:
    """One op the file gives a kernel: its name as written, the section, where, and how its kernel is named."""

    name: OperatorName
    section: str
    span: Span
    symint: bool
    autograd: bool


@record
class Kernels:
    """How the file's codegen declares a kernel: the dispatch keys and the backend-wide options."""

    backend_key: dk.DispatchKey
    autograd_key: dk.DispatchKey | None
    namespace: str
    use_out_as_primary: bool
    device_guard: bool


@record
class Plan:
    """What a file gives to compare: the listed ops, how their kernels are declared, what is left out and why."""

    listed: tuple[Listed, ...]
    kernels: Kernels | None
    left_out: tuple[tuple[str, str], ...] = ()
    problem: str = ""


def declaration(f: NativeFunction, listed: Listed, kernels: Kernels | None, release: Release) -> str:
    """The kernel declaration gen_backend_stubs writes for f when `listed` names it (for a renamed op: as if the
    file named the new op in its place)."""
    if kernels is None:
        return ""
    kernel = BackendMetadata(external_kernel_name(f, listed.symint), False, kernels.namespace)
    key = kernels.autograd_key if listed.autograd else kernels.backend_key
    index = BackendIndex(key or dk.K["PrivateUse1"], use_out_as_primary=kernels.use_out_as_primary,
                         device_guard=kernels.device_guard, external=True, index={f.func.name: kernel})
    try:
        return "\n".join(compute_native_function_declaration(f, index, release))
    except (SymIntKernelError, ValueError):  # the file's own error, reported by its check
        return ""


def _namespace(resolved: ResolvedBackend) -> str:
    ns = resolved.yaml.cpp_namespace.value
    return ns if isinstance(ns, str) else ""


def schema_tail(f: NativeFunction) -> str:
    """The schema without the op's name: '(Tensor self) -> Tensor'."""
    text = str(f.func)
    return text[text.index("("):]


def listed_ops(yaml: BackendYaml | None) -> tuple[Listed, ...]:
    """Each op named under a kernel section of a backend yaml, once (its first listing), in file order."""
    if yaml is None:
        return ()
    symint = frozenset(i.text for i in yaml.symint if i.text)
    seen: set[OperatorName] = set()
    out = []
    for item in sorted(yaml.forward + yaml.autograd, key=lambda i: (i.span.start_line, i.span.start_col)):
        if item.name is not None and item.name not in seen:
            seen.add(item.name)
            out.append(Listed(item.name, item.section, item.span, item.text in symint, item.section == "autograd"))
    return tuple(out)


def backend_plan(yaml: BackendYaml | None, resolved: ResolvedBackend | None) -> Plan:
    """A gen_backend_stubs backend yaml: every op under supported, full_codegen or autograd."""
    if yaml is None:
        return Plan((), None, problem="not a backend yaml (gen_backend_stubs' format) nor a vendor file opgen "
                                      "knows: nothing to compare")
    kernels = None
    if resolved is not None:
        kernels = Kernels(resolved.backend_key or dk.K["PrivateUse1"], resolved.autograd_key, _namespace(resolved),
                          resolved.yaml.use_out_as_primary, resolved.yaml.device_guard)
    return Plan(listed_ops(yaml), kernels)


# torchnpugen's sections whose upstream ops it registers with gen_backend_stubs' declarations (autograd: under
# the autograd key).
NPU_KERNEL_SECTIONS = ("supported", "autograd", "quant", "nestedtensor")


def npu_plan(vendor: VendorYaml) -> Plan:
    """torch_npu's npu_native_functions.yaml as torchnpugen's parse_backend_yaml and create_backend_index read it:
    the upstream ops of its kernel sections; kernels named `_symint` for an op under `symint:`; every index
    use_out_as_primary and device_guard."""
    new_ops = {op.text for op in vendor.ops if op.role == CUSTOM}
    symint = frozenset(op.text for op in vendor.ops if op.section == "symint")
    listed: list[Listed] = []
    left_out: list[tuple[str, str]] = []
    seen: set[OperatorName] = set()
    for op in vendor.ops:
        if op.role != CUSTOM and op.text in new_ops:
            continue  # a new op of the file listed again (its kernel section, symint): left out once, as new
        why = _npu_left_out(op)
        if why:
            left_out.append((op.text, why))
        elif op.section in NPU_KERNEL_SECTIONS and op.name is not None and op.name not in seen:
            seen.add(op.name)
            listed.append(Listed(op.name, op.section, op.name_span, op.text in symint, op.section == "autograd"))
    # torchnpugen's backend is PrivateUse1 renamed NPU (rename_privateuse1_dispatch_key); the namespace is not part
    # of a declaration.
    kernels = Kernels(dk.K["PrivateUse1"], dk.K["AutogradPrivateUse1"], "", True, True)
    return Plan(tuple(listed), kernels, tuple(left_out))


def _npu_left_out(op: VendorOp) -> str:
    """Why an entry of torch_npu's file is not compared ("": it is, or it is not a kernel entry at all)."""
    if op.role == CUSTOM:
        return f"new op(s) of its own ({op.section}:)"
    if op.section == "supported" and op.kind == "mapping" and op.name is not None:
        # parse_backend_yaml registers a map entry only with one of these keys (OPG555 says so on its line).
        registered = set(NPU_REGISTERED_WITH) & set(op.options)
        return "" if registered else f"not registered by torchnpugen (a map without {', '.join(NPU_REGISTERED_WITH)})"
    return ""


def plan_of(text: str, old: NativeSnapshot, path: str = "") -> Plan:
    """What the file at `path` gives to compare, read against the older release."""
    snapshot = check_backend(text, old, path)
    if snapshot.vendor is None:
        return backend_plan(snapshot.yaml, snapshot.resolved)
    vendor = snapshot.vendor.yaml
    if vendor.format == TORCH_NPU:
        return npu_plan(vendor)
    return Plan((), None, problem=f"{vendor.format}'s format is not compared yet: its codegen declares its kernels "
                                  "its own way (opgen upgrade compares gen_backend_stubs' backend yamls and torch_npu's "
                                  "npu_native_functions.yaml)")


def _rename_of(f: NativeFunction, added: list[NativeFunction]) -> NativeFunction | None:
    """The op the newer release seems to have renamed f to, among the ops it adds; None when none fits."""
    tail = schema_tail(f)
    base = str(f.func.name.name)
    same_base = [g for g in added if str(g.func.name.name) == base]
    same_schema = [g for g in same_base if schema_tail(g) == tail]
    if len(same_schema) == 1:
        return same_schema[0]
    if len(same_base) == 1:
        return same_base[0]
    name = str(f.func.name)
    close = [g for g in added if schema_tail(g) == tail
             and difflib.SequenceMatcher(None, name, str(g.func.name)).ratio() >= RENAME_SIMILARITY]
    return close[0] if len(close) == 1 else None


def _functions(native: NativeSnapshot) -> dict[OperatorName, NativeFunction]:
    return {op.function.func.name: op.function for op in native.functions.ops}


def upgrade_report(text: str, old: NativeSnapshot, new: NativeSnapshot, path: str = "") -> UpgradeReport:
    """Every op of the backend yaml or vendor file `text` (at `path`: a vendor file is known by its name) that
    changes from `old`'s release to `new`'s."""
    plan = plan_of(text, old, path)
    before, after = _functions(old), _functions(new)
    added = [f for name, f in after.items() if name not in before]
    changes: list[OpChange] = []
    missing: list[str] = []
    compared = 0
    for item in plan.listed:
        f = before.get(item.name)
        if f is None:
            missing.append(str(item.name))
            continue
        compared += 1
        old_decl = declaration(f, item, plan.kernels, old.release)
        g = after.get(item.name)
        if g is None:
            renamed = _rename_of(f, added)
            kind = ChangeKind.REMOVED if renamed is None else ChangeKind.RENAMED
            changes.append(OpChange(str(item.name), kind, item.section, item.span, str(f.func),
                                    str(renamed.func) if renamed else "", old_decl,
                                    declaration(renamed, item, plan.kernels, new.release) if renamed else "",
                                    str(renamed.func.name) if renamed else ""))
            continue
        new_decl = declaration(g, item, plan.kernels, new.release)
        if str(f.func) != str(g.func):
            kind = ChangeKind.SCHEMA
        elif old_decl != new_decl:
            kind = ChangeKind.SIGNATURE
        else:
            continue
        changes.append(OpChange(str(item.name), kind, item.section, item.span, str(f.func), str(g.func),
                                old_decl, new_decl))
    problem = plan.problem
    if not problem and compared == 0:
        problem = (f"none of its {len(plan.listed)} listed op(s) is declared by torch {old.release.version}"
                   if plan.listed else "it lists no upstream op to compare")
    return UpgradeReport(old.release.version, new.release.version, tuple(changes), compared, tuple(missing),
                         plan.left_out, problem)


def change_message(change: OpChange, old_release: str, new_release: str) -> str:
    """One op's change as a diagnostic says it: what changes, and both schemas and declarations."""
    lines = [f"'{change.op}' {change.summary} from torch {old_release} to {new_release}"]
    for label, old_text, new_text in (("schema", change.old_schema, change.new_schema),
                                      ("kernel", change.old_declaration, change.new_declaration)):
        if old_text != new_text:
            lines.append(f"{label} in {old_release}: {old_text or '(none)'}")
            lines.append(f"{label} in {new_release}: {new_text or '(none)'}")
    return "\n".join(lines)


def upgrade_diagnostics(report: UpgradeReport) -> tuple[Diagnostic, ...]:
    """OPG975 (information) on the line of each op that changes."""
    return tuple(diag("OPG975", c.span, change_message(c, report.old_release, report.new_release))
                 for c in report.changes)
