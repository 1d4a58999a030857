"""Diagnostics: what opgen says about an input, and the table of stable codes."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING

from .frozen import record
from .text import Span

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison


class Severity(IntEnum):
    # The values are LSP's DiagnosticSeverity.
    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()


@record
class Diagnostic:
    span: Span
    severity: Severity
    code: str
    message: str
    # Machine-readable extras (e.g. did-you-mean replacements) for quick fixes.
    data: tuple[tuple[str, str], ...] = ()

    def shifted(self, lines: int) -> Diagnostic:
        if not lines:
            return self
        return Diagnostic(self.span.shifted(lines), self.severity, self.code, self.message, self.data)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


@record
class Code:
    code: str
    name: str
    severity: Severity
    summary: str


def _table(*rows: tuple[str, str, Severity, str]) -> dict[str, Code]:
    return {code: Code(code, name, sev, summary) for code, name, sev, summary in rows}


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFORMATION  # noqa: E741 (the code table's severity column)

# Stable codes. Errors are what torchgen 2.13 rejects (or crashes on);
# warnings are mistakes torchgen lets through.
CODES: dict[str, Code] = _table(
    # yaml structure
    ("OPG001", "yaml-syntax", E, "the text is not valid YAML"),
    ("OPG002", "not-an-entry-list", E, "the file must be a list of entries starting with '- ' at column 0"),
    ("OPG003", "entry-not-mapping", E, "an entry must be a mapping of keys to values"),
    ("OPG004", "duplicate-key", E, "a key appears twice in one mapping"),
    ("OPG005", "unsafe-yaml-tag", E, "a YAML tag that a safe loader refuses"),
    ("OPG006", "file-not-text", E, "the file is too large or is not text"),
    ("OPG007", "too-many-yaml-values", E, "reading the file would take more memory than its size allows"),
    ("OPG008", "more-diagnostics", W, "more diagnostics in this file than are shown"),
    ("OPG009", "not-round-trip", W, "the file does not round-trip through ruamel.yaml (PyTorch's NATIVEFUNCTIONS lint)"),
    # entry fields of native_functions.yaml
    ("OPG100", "missing-func", E, "an entry has no 'func:' key"),
    ("OPG101", "wrong-value-type", E, "a key's value has the wrong type"),
    ("OPG102", "unknown-key", E, "an entry has a key torchgen does not know"),
    ("OPG103", "bad-variant", E, "variants must be 'function', 'method' or both"),
    ("OPG104", "unknown-dispatch-key", E, "a dispatch key that does not exist"),
    ("OPG105", "unsupported-dispatch-key", E, "a dispatch key that native_functions.yaml may not use"),
    ("OPG106", "bad-device-check", E, "device_check must be NoCheck or ExactSame"),
    ("OPG107", "unknown-tag", E, "a tag that tags.yaml does not define"),
    ("OPG108", "bad-namespace", E, "a namespace where none, or fewer levels, are allowed"),
    ("OPG109", "manual-registration-with-dispatch", E, "manual_kernel_registration and dispatch together"),
    ("OPG110", "redundant-dispatch", E, "a dispatch table that only repeats the default"),
    ("OPG111", "bad-implicit-kernel-name", E, "a lone CompositeImplicitAutograd kernel with another name"),
    ("OPG112", "factory-without-dispatch", E, "a factory function needs an explicit dispatch table"),
    ("OPG113", "conflicting-composite-keys", E, "more than one composite dispatch key"),
    ("OPG114", "bad-ufunc-inner-loop", E, "an invalid ufunc_inner_loop"),
    ("OPG115", "bad-precomputed", E, "an invalid precomputed list"),
    ("OPG116", "bad-structured", E, "structured / structured_delegate / structured_inherits used wrongly"),
    ("OPG117", "out-with-method", E, "an out= function may only be a function variant"),
    ("OPG118", "module-with-method", E, "a function in a python_module cannot be a method"),
    ("OPG119", "bad-cpp-no-default-args", E, "cpp_no_default_args names an argument without default"),
    ("OPG120", "const-ref-with-out", E, "use_const_ref_for_mutable_tensors on an out= function"),
    ("OPG121", "foreach-device-check", E, "_foreach ops need device_check: NoCheck"),
    ("OPG122", "missing-nondeterministic-tag", E, "random ops need the nondeterministic_seeded tag"),
    ("OPG123", "delegate-with-dispatch", E, "a structured delegate may not dispatch structured keys itself"),
    ("OPG124", "generated-key-on-structured", E, "Meta / CompositeExplicitAutogradNonFunctional kernels of structured ops are generated"),
    ("OPG125", "symint-kernel-without-symint", E, "a *_symint kernel for a schema without SymInt"),
    ("OPG126", "method-without-tensor-self", E, "a method variant needs a plain Tensor self argument"),
    ("OPG140", "name-not-a-file-name", E, "an operator name gen.py cannot use as a file name (NUL, line break, '/')"),
    ("OPG141", "kernel-not-a-cpp-name", E, "a kernel or structured_inherits name that is not a C++ name (pasted as it is)"),
    ("OPG142", "line-break-in-schema", E, "a func: schema with a line break that torchgen pastes into the C++"),
    ("OPG143", "name-not-a-cpp-name", E, "an op, overload, argument, return or namespace name that is no C++ name (pasted as it is)"),
    ("OPG144", "op-name-not-latin-1", E, "an operator name with a letter outside Latin-1, which gen.py cannot hash"),
    ("OPG127", "ufunc-codegen-refuses", E, "a ufunc op whose loops or arguments the ufunc codegen cannot emit"),
    ("OPG128", "unfunctionalizable-view", E, "a view op (or its view_copy) that gen.py's functionalization cannot emit"),
    ("OPG129", "kernel-namespace-codegen", E, "kernel namespaces the codegen cannot write (too deep, two for an op)"),
    ("OPG130", "cumulative-out-without-dtype", E, "cumsum.out / cumprod.out without the dtype functionalization passes"),
    ("OPG131", "unlowerable-returns", E,
     "a group's variant whose returns gen.py's functionalization cannot take from its functional variant"),
    # func: schema strings
    ("OPG200", "bad-schema", E, "the func: schema cannot be parsed"),
    ("OPG201", "bad-operator-name", E, "an invalid operator name"),
    ("OPG202", "bad-argument", E, "an invalid argument"),
    ("OPG203", "unknown-type", E, "a type torchgen does not know"),
    ("OPG204", "bad-alias-annotation", E, "an invalid alias annotation"),
    ("OPG205", "bad-argument-order", E, "keyword-only marker or out arguments in the wrong place"),
    ("OPG206", "bad-schema-semantics", E, "a schema that breaks torchgen's rules for mutation and returns"),
    ("OPG207", "not-an-identifier", W, "a missing name, or one only some compilers take ('$', non-ASCII)"),
    ("OPG208", "untranslatable-type", E, "a type or default the C++ codegen cannot write (a custom class, bool[], "
                                          "a Tensor[2] return, int[] x=1, ...)"),
    ("OPG209", "breaks-backward-compatibility", W, "a schema change that old callers break on (c10's "
                                                   "isBackwardCompatibleWith, PyTorch's BC check)"),
    ("OPG210", "breaks-forward-compatibility", I, "a schema change that new callers cannot use against the old "
                                                  "build (c10's isForwardCompatibleWith)"),
    # across entries
    ("OPG300", "duplicate-operator", E, "an operator declared twice"),
    ("OPG301", "bad-structured-delegate", E, "structured_delegate names a missing or unstructured op"),
    ("OPG302", "reserved-keyword", E, "an argument named with a reserved Python keyword"),
    ("OPG303", "bad-inplace-view", E, "an inplace_view op without the naming or the view it needs"),
    ("OPG304", "duplicate-schema-kind", E, "two ops with the same signature and kind"),
    ("OPG305", "bad-group", E, "functional / inplace / out variants that do not fit together"),
    ("OPG306", "autogen-mismatch", E, "autogen does not list exactly what the codegen generates"),
    ("OPG307", "cannot-generate-variant", E, "an op whose missing variants cannot be generated"),
    ("OPG308", "bad-view-group", E, "a view op without its view_copy, or one that does not match"),
    ("OPG309", "unfunctionalizable-op", E, "a mutating op in no group and without a CompositeImplicitAutograd kernel"),
    # C++ sources
    ("OPG600", "missing-kernel", W, "a kernel named in a dispatch table is not defined in the C++ sources"),
    ("OPG601", "missing-meta-function", W, "a structured op without its TORCH_META_FUNC"),
    ("OPG602", "kernel-in-some-branches", W,
     "a kernel defined in one branch of a preprocessor conditional and not in another"),
    # tags.yaml
    ("OPG400", "tag-missing-name", E, "a tags.yaml entry without 'tag:'"),
    ("OPG401", "tag-missing-description", E, "a tag needs a non-empty 'desc:'"),
    ("OPG402", "duplicate-tag", W, "a tag defined twice"),
    ("OPG403", "unknown-tag-key", W, "a tags.yaml entry key other than tag and desc"),
    ("OPG404", "tag-not-a-cpp-name", E, "a tag name that is no C++ identifier (gen.py pastes it into enum_tag.h)"),
    # derivatives.yaml (torchgen's autograd loader, load_derivatives.py), resolved against native_functions.yaml
    ("OPG700", "derivative-missing-name", E, "a derivatives.yaml entry without 'name:'"),
    ("OPG701", "derivative-name-not-string", E, "'name' must be a schema string"),
    ("OPG702", "formula-not-string", E, "a formula's key must be names and its value a C++ expression string"),
    ("OPG703", "unsupported-derivative-schema", E, "a 'name:' that is not of the form op.overload(arguments) -> returns"),
    ("OPG704", "unknown-derivative-schema", E, "a 'name:' that no schema of native_functions.yaml reads exactly"),
    ("OPG705", "no-canonical-function", E, "a schema whose signature group has no function to attach formulas to"),
    ("OPG706", "reserved-argument-name", E, "an argument named grad_input_mask or result"),
    ("OPG707", "invalid-autograd-key", E, "a dispatch key other than Default and the autograd keys"),
    ("OPG708", "dispatch-not-mapping", E, "'dispatch' and each of its keys must be mappings"),
    ("OPG709", "bad-output-differentiability", E, "output_differentiability must be a list; a condition only for one output"),
    ("OPG710", "argument-and-output", E, "a formula name that is both an argument and a named output"),
    ("OPG711", "unknown-formula-target", E, "a formula for a name that is neither an argument nor an output"),
    ("OPG712", "bad-result-name", E, "'result' for a function with several outputs, or resultN past the last"),
    ("OPG713", "differentiable-and-not", E, "an argument both non_differentiable and given a formula"),
    ("OPG714", "grads-out-of-bounds", E, "grads[i] past the function's last output"),
    ("OPG715", "unsupported-size-call", E, ".sizes(), .size(int) or .strides() in a backward formula"),
    ("OPG716", "strides-in-shared-formula", E, "x.sym_strides() in a formula that is not for x alone"),
    ("OPG717", "mixed-grad-grads", E, "a formula set that uses both 'grad' and 'grads'"),
    ("OPG718", "only-grads-0", E, "formulas that only use grads[0] (write 'grad')"),
    ("OPG719", "mixed-named-grads", E, "gradients named after outputs mixed with 'grad' or 'grads[i]'"),
    ("OPG720", "ambiguous-forward-name", E, "a forward formula that uses an argument's plain name (use _p or _t)"),
    ("OPG721", "bad-auto-element-wise", E, "auto_element_wise where it cannot be derived"),
    ("OPG722", "bad-auto-linear", E, "auto_linear where it cannot be derived"),
    ("OPG740", "deprecated-missing-key", E, "a deprecated.yaml entry without 'name:' or 'aten:' strings"),
    ("OPG741", "deprecated-bad-call", E, "an 'aten:' value that is not a call op(arg, ...)"),
    ("OPG742", "deprecated-unknown-value", E, "an 'aten:' call passing what the deprecated schema does not have"),
    ("OPG743", "deprecated-no-match", E, "no native function that the deprecated signature can call"),
    ("OPG750", "ignored-beside-dispatch", W, "a formula beside 'dispatch:', which torchgen ignores"),
    ("OPG751", "formula-for-unknown-argument", W, "a formula key naming an argument the function does not have"),
    ("OPG752", "duplicate-derivative", W, "a function given formulas twice: the later entry wins"),
    ("OPG753", "odd-output-differentiability", W, "an output_differentiability item that is not True, False or a condition"),
    ("OPG754", "long-output-differentiability", W, "output_differentiability longer than the outputs"),
    ("OPG755", "empty-formula-name", W, "an empty name between commas in a formula key"),
    ("OPG756", "formula-for-non-tensor", W, "a backward formula for an argument whose type has no gradient"),
    ("OPG757", "output-differentiability-not-list", W, "a string or mapping as output_differentiability"),
    # operator selection yaml (gen.py's --op-selection-yaml-path), as torchgen's SelectiveBuilder reads it
    ("OPG800", "selection-not-mapping", E, "a selection yaml must be a mapping (include_all_operators:, ...)"),
    ("OPG801", "selection-unknown-key", E, "a top-level key SelectiveBuilder does not know"),
    ("OPG802", "selection-wrong-type", E, "a selection value of the wrong type (a bool, a list, a mapping)"),
    ("OPG803", "selection-operator-unknown-key", E, "an operator key other than name, is_root_operator, ..."),
    ("OPG804", "selection-name-mismatch", E, "an operator's name: differs from its key"),
    ("OPG805", "selection-operator-not-mapping", E, "an operator's entry must be a mapping"),
    ("OPG806", "selection-duplicate-key", W, "a key given twice (PyYAML keeps the last)"),
    # input files
    ("OPG900", "missing-input", E, "an input file cannot be read"),
    # torch releases (server/releases/)
    ("OPG950", "newer-torch-release", I, "a torch release newer than those opgen knows: checked as the newest"),
    ("OPG951", "older-torch-release", E, "a torch release older than those opgen knows: not checked"),
    ("OPG952", "op-not-in-release", E, "an op or overload the resolved torch release lacks, which another has"),
    ("OPG953", "torch-cpu-cuda-kernel-unregistered", E,
     "a CUDA kernel gen.py lists as defined in torch_cpu that no CUDA-family dispatch key registers (torch 2.15)"),
    # gen26: torch 2.6's gen.py
    ("OPG954", "registrations-lost-in-one-file", W,
     "torch 2.6's gen.py drops the kernel registrations of the ops before a change of op namespace"),
    # AOTI C shims (torchgen's gen_aoti_c_shim, for the ops of aoti/fallback_ops.py)
    ("OPG960", "aoti-shim-argument", E,
     "an AOTI fallback op's argument gen.py's C shim generator fails on (a list of Device or Device?)"),
    # a real tree's own files against the release used (server/releases/tree_release.py; area trees)
    ("OPG965", "tree-torchgen-differs", W,
     "the tree's own torchgen differs from its release's: opgen checks and generates as that release"),
    ("OPG966", "tree-version-unreadable", W,
     "the checkout's version.txt names no torch release: checked and generated as the default release"),
    ("OPG967", "native-aot-declaration", E,
     "a native-AOT declaration (torch/_native/ops/<op>/aot.py) gen.py refuses (torch 2.15 on)"),
    # a backend yaml against the release it moves to (analysis/upgrade.py)
    ("OPG975", "op-changes-in-upgrade-target", I,
     "a backend's op that is removed, renamed or changes its schema or kernel declaration in the target release "
     "(opgen.upgradeTarget)"),
    ("OPG976", "upgrade-target-unavailable", W, "the release opgen.upgradeTarget names has no native_functions.yaml "
                                                "at hand (or is not a known release), or the file is a vendor format "
                                                "opgen upgrade does not compare"),
    # backend yaml (torchgen.gen_backend_stubs' input), resolved against native_functions.yaml
    ("OPG500", "backend-not-mapping", E, "a backend yaml must be a mapping of keys such as backend: and supported:"),
    ("OPG501", "missing-backend", E, "no value for 'backend:'"),
    ("OPG502", "unknown-backend-key", E, "'backend:' names a dispatch key that does not exist"),
    ("OPG503", "missing-cpp-namespace", E, "no value for 'cpp_namespace:'"),
    ("OPG504", "bad-cpp-namespace", E, "a cpp_namespace the codegen cannot use (not a string, more than 2 levels)"),
    ("OPG505", "not-a-bool", E, "use_out_as_primary and device_guard must be true or false"),
    ("OPG506", "not-a-list", E, "supported, symint, autograd and full_codegen must be lists"),
    ("OPG507", "unexpected-backend-key", E, "a top-level key that gen_backend_stubs does not accept"),
    ("OPG508", "op-not-a-name", E, "an op list item that is not a plain op name"),
    ("OPG509", "unknown-operator", E, "an op name that native_functions.yaml does not declare"),
    ("OPG510", "duplicate-backend-key", E, "the backend's dispatch key already has kernels in native_functions.yaml"),
    ("OPG511", "bad-autograd-key", E, "'autograd:' needs Autograd<backend>, which is not a dispatch key"),
    ("OPG512", "split-op-group", E, "variants of one op split between supported and autograd"),
    ("OPG513", "symint-without-symint", E, "a symint kernel for an op whose schema has no SymInt"),
    ("OPG514", "cannot-wrap-variant", E, "a variant torchgen must wrap around the functional kernel, and cannot"),
    ("OPG515", "kernel-for-generated-key", E, "a structured op's kernel on a key whose kernels the codegen writes"),
    ("OPG516", "experimental-structured-option", E, "a per-op option of pytorch#172539's proposal that its generator "
     "rejects (opgen generate-backend --experimental)"),
    ("OPG517", "experimental-option-not-bool", W, "a per-op option of pytorch#172539's proposal that is not true or "
     "false (its generator takes any value)"),
    ("OPG518", "derived-kernel-dtype", W, "an out= op whose functional kernel pytorch#172539's proposal derives "
     "with an output of an argument's dtype, which need not be the op's result dtype"),
    ("OPG520", "op-listed-twice", W, "an op listed twice"),
    ("OPG521", "composite-implicit-backend-kernel", W, "a CompositeImplicitAutograd op under supported loses autograd"),
    ("OPG522", "ineffective-symint", W, "a symint entry that changes no kernel"),
    ("OPG523", "nothing-generated", W, "no ops under supported or full_codegen: torchgen generates nothing"),
    ("OPG524", "odd-cpp-name", W, "a class_name or cpp_namespace that only some compilers take (spaces, '$', non-ASCII)"),
    ("OPG525", "not-a-backend", W, "a dispatch key that is not a backend"),
    ("OPG526", "kernel-never-registered", W, "an op with manual_kernel_registration: its kernel is never registered"),
    ("OPG527", "lazy-section-not-a-list", W, "full_codegen or ir_gen is not a list (gen_lazy_tensor rejects it)"),
    ("OPG528", "unknown-ir-gen-op", W, "an ir_gen op that native_functions.yaml does not declare"),
    # backend yaml against the backend's C++ implementation files (--impl-path)
    ("OPG530", "missing-backend-kernel", E, "a listed op whose kernel the implementation files do not define"),
    ("OPG531", "backend-kernel-defined-too-often", E, "more definitions of a kernel name than listed ops need"),
    ("OPG532", "unused-backend-kernel", W, "a kernel definition in an implementation file that no listed op asks for"),
    # backend yaml against gen_lazy_tensor (opgen generate-lazy)
    ("OPG535", "missing-shape-inference", E, "a full_codegen op whose compute_shape_ function the shape-inference "
                                             "header does not declare"),
    ("OPG536", "bad-non-native-entry", E, "a non_native entry gen_lazy_tensor cannot read"),
    ("OPG537", "lazy-codegen-unsupported", E, "an op the lazy codegen cannot generate code for"),
    # values torchgen pastes into the generated C++ as they are
    ("OPG540", "not-a-cpp-name", E, "a class_name or cpp_namespace that is not a C++ name (torchgen pastes it as it is)"),
    ("OPG550", "vendor-schema-drift", E, "an upstream op whose schema in a vendor file is not exactly upstream's"),
    ("OPG551", "vendor-bad-version", E, "an op-plugin version that all_version does not list"),
    ("OPG552", "vendor-new-op-without-schema", E, "a vendor file's new (custom) op given without its whole schema"),
    ("OPG553", "vendor-bad-entry", E, "a vendor file's op entry that is neither a name nor a map with func:"),
    ("OPG554", "vendor-bad-option", E, "a per-op option a vendor's codegen rejects (derived_type, dispatch, ...)"),
    ("OPG555", "vendor-op-left-out", W, "an op entry a vendor's codegen reads but never registers (torch_npu: a "
                                        "supported func: entry without op_api, device_check or impl_ns)"),
    ("OPG556", "vendor-group-incomplete", E, "an op a vendor's codegen needs another op listed beside (torch_mlu: "
                                             "a structured group's out variant)"),
    # a backend's own operator file (a native_functions.yaml of its ops, PrivateUse kernels) against its release
    ("OPG590", "schema-not-upstream", E, "an op of a backend's operator file whose schema is not the pinned release's"),
    ("OPG591", "op-not-upstream", E, "an aten op of a backend's operator file that the pinned release does not declare"),
)


# More than this many diagnostics in one file: the first ones (by position) are shown, then one that says how
# many more there are (an editor or a terminal gains nothing from 500,000 of them, and each costs memory).
MAX_DIAGNOSTICS_PER_FILE = 2_000


def first_diagnostics(diagnostics: Iterable[Diagnostic], count: int,
                      key: Callable[[Diagnostic], SupportsRichComparison],
                      limit: int = MAX_DIAGNOSTICS_PER_FILE) -> tuple[Diagnostic, ...]:
    """The diagnostics sorted by key, or, when there are more than limit (count says how many the iterable
    gives), the first limit of them and an OPG008 saying how many more there are: an error when one of those
    is. The iterable is read once, keeping at most limit of them (a generator never holds them all)."""
    if count <= limit:
        return tuple(sorted(diagnostics, key=key))
    errors = 0

    def counted() -> Iterable[Diagnostic]:
        nonlocal errors
        for d in diagnostics:
            errors += d.severity is Severity.ERROR
            yield d

    shown = heapq.nsmallest(limit, counted(), key=key)
    hidden_errors = errors - sum(d.severity is Severity.ERROR for d in shown)
    return (*shown, more_diagnostics(shown[-1].span, count - limit, hidden_errors))


def more_diagnostics(after: Span, hidden: int, hidden_errors: int) -> Diagnostic:
    """The last diagnostic of a capped list: how many more (and how many errors among them) are not shown."""
    errors = f", {hidden_errors:,} of them errors" if hidden_errors else ""
    return Diagnostic(Span.point(after.end_line, after.end_col), Severity.ERROR if hidden_errors else Severity.WARNING,
                      "OPG008", f"{hidden:,} more diagnostics in this file{errors}; opgen shows the first "
                                f"{MAX_DIAGNOSTICS_PER_FILE:,} of each file", (("hidden", str(hidden)),
                                                                             ("hidden_errors", str(hidden_errors))))


def cap_diagnostics(diagnostics: Sequence[Diagnostic], limit: int = MAX_DIAGNOSTICS_PER_FILE) -> list[Diagnostic]:
    """One file's diagnostics, at most limit of them (in their order) and one OPG008 for the rest; an OPG008
    already among them (a capped parse) is counted into the one at the end."""
    more = [d for d in diagnostics if d.code == "OPG008"]
    rest = [d for d in diagnostics if d.code != "OPG008"] if more else list(diagnostics)
    if len(rest) <= limit and (not more or (len(more) == 1 and diagnostics[-1] is more[0])):
        return list(diagnostics)
    hidden = sum(int(dict(d.data)["hidden"]) for d in more) + max(0, len(rest) - limit)
    hidden_errors = sum(int(dict(d.data)["hidden_errors"]) for d in more) + sum(
        d.severity is Severity.ERROR for d in rest[limit:])
    shown = rest[:limit]
    return shown + [more_diagnostics(shown[-1].span if shown else Span.point(0, 0), hidden, hidden_errors)]


def diag(code: str, span: Span, message: str, *, severity: Severity | None = None,
         data: tuple[tuple[str, str], ...] = ()) -> Diagnostic:
    """A diagnostic with the code's default severity unless told otherwise."""
    return Diagnostic(span, severity or CODES[code].severity, code, message, data)
