"""What changes for a backend yaml from one torch release to another (`opgen upgrade`, and the server's
information diagnostics when opgen.upgradeTarget is set).

Every op the yaml lists under supported, full_codegen or autograd that the older release declares is compared
with the newer release's: removed (the newer release lacks it), renamed (best effort: the newer release lacks
it but adds an op of the same base name with one new overload, or an op of a close name whose schema is the
same apart from the name), a changed schema, or a changed kernel declaration: the C++ gen_backend_stubs
declares in <Key>NativeFunctions.h for the backend (the same schema can map to other C++ types in another
release). The declarations are the generator's own (pieces/dest/native_declarations), for each release.
"""

from __future__ import annotations

import difflib
from enum import Enum

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..index.backend import check_backend
from ..index.native import NativeSnapshot
from ..model import dispatch as dk
from ..model.backend import BackendYaml, ListedOp
from ..model.backend_resolve import ResolvedBackend, external_kernel_name
from ..model.native_function import BackendIndex, BackendMetadata, NativeFunction
from ..model.schema import OperatorName
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


@record
class _Side:
    """One release's view of the backend: its functions by name and the backend's kernels under it."""

    release: Release
    functions: dict[OperatorName, NativeFunction]
    yaml: BackendYaml | None
    resolved: ResolvedBackend | None
    symint_texts: frozenset[str]

    @staticmethod
    def of(text: str, native: NativeSnapshot) -> _Side:
        backend = check_backend(text, native)
        functions = {op.function.func.name: op.function for op in native.functions.ops}
        symint = frozenset(i.text for i in backend.yaml.symint if i.text) if backend.yaml is not None else frozenset()
        return _Side(native.release, functions, backend.yaml, backend.resolved, symint)

    def declaration(self, f: NativeFunction, listed: ListedOp) -> str:
        """The kernel declaration gen_backend_stubs writes for f when `listed` names it (for a renamed op: as if
        the yaml named the new op in its place)."""
        if self.resolved is None:
            return ""
        autograd = listed.section == "autograd"
        kernel = BackendMetadata(external_kernel_name(f, listed.text in self.symint_texts), False,
                                 _namespace(self.resolved))
        key = self.resolved.autograd_key if autograd else self.resolved.backend_key
        index = BackendIndex(key or dk.K["PrivateUse1"], use_out_as_primary=self.resolved.yaml.use_out_as_primary,
                             device_guard=self.resolved.yaml.device_guard, external=True, index={f.func.name: kernel})
        try:
            return "\n".join(compute_native_function_declaration(f, index, self.release))
        except (SymIntKernelError, ValueError):  # the yaml's own error, reported by its check
            return ""


def _namespace(resolved: ResolvedBackend) -> str:
    ns = resolved.yaml.cpp_namespace.value
    return ns if isinstance(ns, str) else ""


def schema_tail(f: NativeFunction) -> str:
    """The schema without the op's name: '(Tensor self) -> Tensor'."""
    text = str(f.func)
    return text[text.index("("):]


def listed_ops(yaml: BackendYaml | None) -> tuple[ListedOp, ...]:
    """Each op named under a kernel section, once (its first listing), in file order."""
    if yaml is None:
        return ()
    items = yaml.forward + yaml.autograd
    seen: set[OperatorName] = set()
    out = []
    for item in sorted(items, key=lambda i: (i.span.start_line, i.span.start_col)):
        if item.name is not None and item.name not in seen:
            seen.add(item.name)
            out.append(item)
    return tuple(out)


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


def upgrade_report(text: str, old: NativeSnapshot, new: NativeSnapshot) -> UpgradeReport:
    """Every op of the backend yaml `text` that changes from `old`'s release to `new`'s."""
    before, after = _Side.of(text, old), _Side.of(text, new)
    added = [f for name, f in after.functions.items() if name not in before.functions]
    changes: list[OpChange] = []
    missing: list[str] = []
    compared = 0
    for item in listed_ops(before.yaml):
        assert item.name is not None  # listed_ops keeps named items only
        f = before.functions.get(item.name)
        if f is None:
            missing.append(str(item.name))
            continue
        compared += 1
        old_decl = before.declaration(f, item)
        g = after.functions.get(item.name)
        if g is None:
            renamed = _rename_of(f, added)
            kind = ChangeKind.REMOVED if renamed is None else ChangeKind.RENAMED
            changes.append(OpChange(str(item.name), kind, item.section, item.span, str(f.func),
                                    str(renamed.func) if renamed else "", old_decl,
                                    after.declaration(renamed, item) if renamed else "",
                                    str(renamed.func.name) if renamed else ""))
            continue
        new_decl = after.declaration(g, item)
        if str(f.func) != str(g.func):
            kind = ChangeKind.SCHEMA
        elif old_decl != new_decl:
            kind = ChangeKind.SIGNATURE
        else:
            continue
        changes.append(OpChange(str(item.name), kind, item.section, item.span, str(f.func), str(g.func),
                                old_decl, new_decl))
    return UpgradeReport(old.release.version, new.release.version, tuple(changes), compared, tuple(missing))


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
