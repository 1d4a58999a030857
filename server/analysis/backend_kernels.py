"""Missing kernels: which ops of a backend yaml have no definition in the backend's C++ files.

The verdict follows torchgen's `error_on_missing_kernels` (gen_backend_stubs
--impl-path): a definition is any `<ClassName>::<name>(` in the text whose
line does not have a `:` just before the class name (that would be a call such
as `torch_xla::XLANativeFunctions::abs(`), and for each kernel name the number
of such definitions must equal the number of listed ops with that kernel (the
overloads of one op share a kernel name). Ops listed under `full_codegen` are
left out, as torch_xla's gen_lazy_tensor does: their kernels are generated.

Beyond the verdict, opgen places each problem: a kernel with too few
definitions is reported on the yaml line of each op whose signature none of
the definitions has (on every op of that name when it cannot tell), with the
C++ declaration it must have and, in the diagnostic's data, a stub to paste;
a definition that no listed op asks for is reported where it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..model.backend import ListedOp
from ..model.backend_resolve import ResolvedBackend
from ..model.native_function import NativeFunction
from ..model.native_yaml import NativeFunctions
from ..model.schema import OperatorName
from ..pieces.dest.native_declarations import SymIntKernelError, kernel_signature
from ..releases.profile import CppSpelling
from ..report import FileDiagnostic
from ..suggest import did_you_mean
from ..syntax.cpp_scan import split_parameters
from ..text import LineIndex, Span


@record
class ImplFile:
    path: str
    text: str


@record
class Definition:
    """One `<ClassName>::<name>(` that torchgen counts as a kernel definition."""

    path: str
    name: str
    span: Span
    # The parameter types as written (normalized), or None when the parentheses do not close.
    params: tuple[str, ...] | None


@record
class ExpectedKernel:
    """A listed op whose kernel must be defined: where it is listed and the C++ it needs."""

    op: OperatorName
    kernel: str
    item: ListedOp
    declaration: str  # as in <Key>NativeFunctions.h, without `static`
    definition: str  # the head of an out-of-class definition: `<ret> <Class>::<kernel>(<params>)`
    params: tuple[str, ...]


# ------------------------------------------------------------------ the impl files


def definition_pattern(class_name: str) -> re.Pattern[str]:
    """torchgen's rule: anything on the line, the class name, `::`, spaces, a name, `(`."""
    return re.compile(rf"(.*){re.escape(class_name)}::\s*([\w\d]*)\(")


def _closing(text: str, start: int) -> int:
    """The offset of the `)` closing the `(` before start, or -1."""
    depth = 1
    for i in range(start, min(len(text), start + 20000)):
        c = text[i]
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
            if depth == 0:
                return i if c == ")" else -1
    return -1


def _split_top(text: str) -> list[str]:
    return split_parameters(text)


_PARAM_NAME = re.compile(r"^(.*?[\s&*>])\s*[A-Za-z_]\w*$", re.S)
_PREFIXES = re.compile(r"(?<![\w:])(?:::)?(?:at|c10|std)::")


def normalize_type(param: str) -> str:
    """A parameter's type for comparison: no name, no default, no spaces, no at::/c10::/std:: qualifiers."""
    param = param.split("=", 1)[0].strip()
    m = _PARAM_NAME.match(param)
    if m and m.group(1).strip() not in ("const", "unsigned", "signed"):
        param = m.group(1)
    param = _PREFIXES.sub("", param)
    return re.sub(r"\s+", "", param)


def parameter_types(text: str, open_paren_end: int) -> tuple[str, ...] | None:
    close = _closing(text, open_paren_end)
    if close < 0:
        return None
    inside = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text[open_paren_end:close], flags=re.S)
    return tuple(normalize_type(p) for p in _split_top(inside))


def find_definitions(impl: ImplFile, class_name: str) -> tuple[Definition, ...]:
    lines = LineIndex(impl.text)
    out = []
    for m in definition_pattern(class_name).finditer(impl.text):
        if m.group(1).endswith(":"):
            continue
        start, end = m.span(2)
        out.append(Definition(impl.path, m.group(2), lines.span(start, end if end > start else end + 1),
                              parameter_types(impl.text, m.end())))
    return tuple(out)


# ------------------------------------------------------------------ what the yaml asks for


def _first_listing(resolved: ResolvedBackend, op: OperatorName, sections: tuple[str, ...]) -> ListedOp | None:
    return next((i for i in resolved.listings.get(op, ()) if i.section in sections), None)


def expected_kernels(resolved: ResolvedBackend, native: Mapping[OperatorName, NativeFunction], class_name: str,
                     spelling: CppSpelling) -> list[ExpectedKernel]:
    """Every op of the backend and autograd indices whose kernel must be written by hand, in yaml order."""
    full_codegen = {i.name for i in resolved.yaml.full_codegen if i.name is not None}
    out = []
    for index, sections in ((resolved.backend_index, ("supported",)), (resolved.autograd_index, ("autograd",))):
        if index is None:
            continue
        for op, meta in index.index.items():
            f = native.get(op)
            item = _first_listing(resolved, op, sections)
            if f is None or item is None or op in full_codegen:
                continue
            try:
                sig = kernel_signature(f, index, spelling)
            except SymIntKernelError:
                continue  # reported by the yaml check (OPG513)
            out.append(ExpectedKernel(op, meta.kernel, item, sig.decl(name=meta.kernel),
                                      sig.defn(name=f"{class_name}::{meta.kernel}"),
                                      tuple(normalize_type(a.type) for a in sig.arguments())))
    return sorted(out, key=lambda e: e.item.span)


def stub(e: ExpectedKernel, cpp_namespace: str) -> tuple[str, str]:
    """(the definition alone, the definition inside its namespace): a body that throws."""
    body = (f"{e.definition} {{\n  TORCH_CHECK_NOT_IMPLEMENTED(false, \"{e.kernel} ({e.op}) is not implemented "
            f"yet\");\n}}\n")
    return body, f"namespace {cpp_namespace} {{\n\n{body}\n}} // namespace {cpp_namespace}\n"


# ------------------------------------------------------------------ the check


def _unmatched(expected: list[ExpectedKernel], found: list[Definition]) -> list[ExpectedKernel]:
    """The expected overloads whose parameter types no definition has (a multiset match)."""
    available = Counter(d.params for d in found if d.params is not None)
    out = []
    for e in expected:
        if available[e.params] > 0:
            available[e.params] -= 1
        else:
            out.append(e)
    return out


def _where(paths: tuple[str, ...]) -> str:
    return ", ".join(paths) if len(paths) <= 3 else f"{', '.join(paths[:3])} and {len(paths) - 3} more"


def kernel_diagnostics(resolved: ResolvedBackend, native: Mapping[OperatorName, NativeFunction], class_name: str,
                       cpp_namespace: str, impls: tuple[ImplFile, ...], spelling: CppSpelling
                       ) -> tuple[list[Diagnostic], list[tuple[str, Diagnostic]]]:
    """(diagnostics on the yaml, (path, diagnostic) on the implementation files); kernels declared in `spelling`
    (the release's)."""
    expected = expected_kernels(resolved, native, class_name, spelling)
    definitions = [d for impl in impls for d in find_definitions(impl, class_name)]
    by_kernel: dict[str, list[ExpectedKernel]] = {}
    for e in expected:
        by_kernel.setdefault(e.kernel, []).append(e)
    found: dict[str, list[Definition]] = {}
    for d in definitions:
        found.setdefault(d.name, []).append(d)
    files = _where(tuple(i.path for i in impls))
    on_yaml: list[Diagnostic] = []
    on_impl: list[tuple[str, Diagnostic]] = []
    for kernel, wanted in by_kernel.items():
        have = found.get(kernel, [])
        if len(have) == len(wanted):
            continue
        counts = (f"torchgen counts {len(have)} definition(s) of {class_name}::{kernel} in {files}, but "
                  f"{len(wanted)} listed op(s) need one each")
        if len(have) < len(wanted):
            missing = _unmatched(wanted, have) or wanted
            for e in missing:
                defn, wrapped = stub(e, cpp_namespace)
                others = "" if len(wanted) == 1 else " (" + ", ".join(str(w.op) for w in wanted) + " share this name)"
                on_yaml.append(diag("OPG530", e.item.span,
                                    f"'{e.item.text}' has no kernel definition{others}: {counts}. Define it in the "
                                    f"implementation file, inside namespace {cpp_namespace}: {e.definition}",
                                    data=(("stub", wrapped), ("definition", defn), ("namespace", cpp_namespace),
                                          ("declaration", e.declaration), ("impl_path", impls[0].path))))
        else:
            extra = {d.params for d in have} - {e.params for e in wanted}
            for e in wanted:
                on_yaml.append(diag("OPG531", e.item.span,
                                    f"'{e.item.text}': {counts}; remove the extra definition(s), or list the other "
                                    f"overloads. The kernel's declaration: {e.declaration}"))
            for d in have:
                if d.params in extra:
                    on_impl.append((d.path, diag("OPG532", d.span, f"{class_name}::{kernel} is defined here with "
                                                                   "parameters that no listed overload has")))
    asked = {e.kernel for e in expected}
    generated = _generated_kernels(resolved)
    for d in definitions:
        if d.name in asked:
            continue
        if d.name in generated:
            message = (f"{class_name}::{d.name} is the kernel of '{generated[d.name]}', listed under full_codegen: "
                       "gen_lazy_tensor generates it, so this definition would be a second one")
            data: tuple[tuple[str, str], ...] = ()
        else:
            hint, data = did_you_mean(d.name, sorted(asked))
            message = f"{class_name}::{d.name} is defined here, but no op of the backend yaml asks for it{hint}"
        on_impl.append((d.path, diag("OPG532", d.span, message, data=data)))
    return on_yaml, on_impl


def _generated_kernels(resolved: ResolvedBackend) -> dict[str, OperatorName]:
    out: dict[str, OperatorName] = {}
    for item in resolved.yaml.full_codegen:
        if item.name is not None and item.name in resolved.forward_kernels:
            out.setdefault(resolved.forward_kernels[item.name].kernel, item.name)
    return out


def check_kernels(resolved: ResolvedBackend, native: NativeFunctions, yaml_path: str,
                  impls: Iterable[ImplFile], spelling: CppSpelling) -> list[FileDiagnostic]:
    """The missing-kernel check of a resolved backend yaml against its implementation files."""
    impls = tuple(impls)
    if not impls or resolved.backend_key is None or resolved.class_name is None:
        return []
    ns = resolved.yaml.cpp_namespace.value
    functions = {f.func.name: f for f in native.native_functions}
    on_yaml, on_impl = kernel_diagnostics(resolved, functions, resolved.class_name, str(ns), impls, spelling)
    return [FileDiagnostic(yaml_path, d) for d in on_yaml] + [FileDiagnostic(p, d) for p, d in on_impl]
