"""Every `raise` and `assert` under server/codegen/, and why `opgen generate` never dies on it with a traceback
on input that `opgen check` accepts. test_raise_sites.py walks the source and fails on a site missing here (or
listed here and gone).

A site is named "path under server/:enclosing function:exception" (several sites of one function and exception
share a name). Its kind says how it is met:

- RULE: reachable from a native_functions.yaml; gen.py (torchgen 2.13) fails there too, so `opgen check` reports
  `code` on each of `inputs` at its marker, and `opgen generate` exits 1 with that line and no traceback.
- GUARDED: reachable only through inputs that an existing check rule (`code`) refuses first; `inputs` show it.
- HANDLED: `catcher` ("module:function") catches the exception (or a base class) and reports it as an error
  without a traceback (exit 1, or 2 for an input that cannot be read); not a check rule (yet), see `why`.
- INTERNAL: an invariant of opgen's own code that no input reaches, for the reason in `why`.
"""

from __future__ import annotations

from dataclasses import dataclass

RULE, GUARDED, HANDLED, INTERNAL = "rule", "guarded", "handled", "internal"


@dataclass(frozen=True)
class Site:
    kind: str
    code: str = ""
    inputs: tuple[str, ...] = ()
    catcher: str = ""
    why: str = ""


def rule(code: str, *inputs: str) -> Site:
    return Site(RULE, code, inputs)


def guarded(code: str, *inputs: str, why: str = "") -> Site:
    return Site(GUARDED, code, inputs, why=why)


def handled(catcher: str, why: str) -> Site:
    return Site(HANDLED, catcher=catcher, why=why)


def internal(why: str) -> Site:
    return Site(INTERNAL, why=why)


# A structured ufunc op (functional + out=) with one tensor, or two; its loops follow.
_UNARY = ("- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n  variants: function\n\n"
          "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
          "  structured_inherits: TensorIteratorBase\n  ufunc_inner_loop:\n")
_BINARY = _UNARY.replace("Tensor self", "Tensor self, Tensor other")
# gen.py adds a ufunc op's CPU and CUDA kernels from a set: when no op before it has them, the order of the CPU
# and CUDA indices (and so of NativeFunctions.h) follows the string hash seed. An op before it fixes the order.
_CPU_FIRST = "- func: baz(Tensor self) -> Tensor\n  dispatch:\n    CPU: baz\n    CUDA: baz\n\n"
_VIEW_COPY = ("- func: foo_copy(Tensor self) -> Tensor\n  tags: view_copy\n  dispatch:\n"
              "    CompositeExplicitAutogradNonFunctional: foo_copy\n")
_OUT = "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: foo_out\n"
_SELF_TWICE = ("- func: foo(Tensor(a!) self, Tensor(b!) other) -> (Tensor(a!), Tensor(a!))\n  dispatch:\n"
               "    CPU: foo\n")
_OUT_OF_TWO = ("- func: foo.out(Tensor self, Tensor(b!) other, *, Tensor(c!) out0, Tensor(d!) out1) -> "
               "(Tensor(c!), Tensor(d!))\n  dispatch:\n    CPU: foo_out\n")

# name -> (native_functions.yaml text, the text the error starts at (its first occurrence))
INPUTS: dict[str, tuple[str, str]] = {
    "ufunc-names-differ": (_BINARY + "    Generic: foo (AllAndComplex, BFloat16, Half)\n"
                           "    ScalarOnly: bar (AllAndComplex, BFloat16, Half)\n", "ScalarOnly"),
    "ufunc-scalar-functor-on-unary": (_UNARY + "    CUDAFunctorOnSelf: foo (AllAndComplex, BFloat16, Half)\n"
                                      "    Generic: foo (AllAndComplex, BFloat16, Half)\n", "CUDAFunctorOnSelf"),
    "ufunc-no-generic-loop": (_UNARY + "    CPUScalar: foo (All)\n", "ufunc_inner_loop"),
    "ufunc-scalar-functor-dtype-without-plain-functor": (
        _CPU_FIRST + _BINARY + "    CUDAFunctorOnSelf: foo (Float, Half)\n    Generic: foo (All)\n",
        "CUDAFunctorOnSelf"),
    "manual-registration-of-a-structured-op": ("- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n"
                                               "  manual_kernel_registration: True\n" + _OUT.replace(
                                                   "  dispatch:", "  structured: True\n  dispatch:"), "True\n"),
    "manual-registration-of-a-ufunc-op": (_CPU_FIRST + _UNARY.replace(
        "  structured: True\n", "  manual_kernel_registration: True\n  structured: True\n")
        + "    Generic: foo (All)\n", "True\n"),
    "ufunc-vector-without-scalar": (_UNARY + "    Generic: foo (Float)\n    CPUVector: foo (Double)\n",
                                    "CPUVector"),
    "ufunc-optional-tensor": (_BINARY.replace("Tensor other", "Tensor? other") + "    Generic: foo (All)\n",
                              "Tensor? other) -> Tensor\n"),
    "ufunc-list-argument": (_UNARY.replace("Tensor self", "Tensor self, int[] dims") + "    Generic: foo (All)\n",
                            "int[] dims) -> Tensor\n"),
    "custom-class-argument": ("- func: foo(Tensor self, __torch__.torch.classes.ns.cls x) -> Tensor\n"
                              "  dispatch:\n    CPU: foo\n", "__torch__"),
    "symint-optional-list": ("- func: foo(Tensor self, SymInt?[] x) -> Tensor\n  dispatch:\n    CPU: foo\n",
                             "SymInt?[] x"),
    "symint-list-of-lists": ("- func: foo(Tensor self, SymInt[][] x) -> Tensor\n  dispatch:\n    CPU: foo\n",
                             "SymInt[][] x"),
    "unsized-bool-list": ("- func: foo(Tensor self, bool[] mask) -> Tensor\n  dispatch:\n    CPU: foo\n", "bool[]"),
    "fixed-size-list-return": ("- func: foo(Tensor self) -> Tensor[2]\n  dispatch:\n    CPU: foo\n", "Tensor[2]"),
    "optional-list-return": ("- func: foo(Tensor self) -> Tensor[]?\n  dispatch:\n    CPU: foo\n", "Tensor[]?"),
    "mutable-list-return": ("- func: foo(Tensor(a!) self) -> Tensor(a!)[]\n", "Tensor(a!)[]\n"),
    "optional-scalar-return": ("- func: foo(Tensor self) -> (Tensor, Scalar?)\n  dispatch:\n    CPU: foo\n",
                               "Scalar?"),
    "list-default-not-a-list": ("- func: foo(Tensor self, int[]? x=1) -> Tensor\n  dispatch:\n    CPU: foo\n",
                                "int[]? x=1"),
    "structured-list-out": ("- func: foo(Tensor self) -> Tensor[]\n  structured_delegate: foo.out\n"
                            "- func: foo.out(Tensor self, *, Tensor(a!)[] out) -> ()\n  structured: True\n"
                            "  dispatch:\n    CPU: foo_out\n", "Tensor(a!)[] out"),
    "view-first-argument-not-a-tensor": ("- func: foo(int x, Tensor(a) self) -> Tensor(a)\n  dispatch:\n"
                                         "    CPU: foo\n" + _VIEW_COPY.replace("Tensor self", "int x, Tensor self"),
                                         "int x, Tensor(a) self"),
    "view-aliases-a-second-argument": ("- func: foo(Tensor(a) self, Tensor(a) other) -> Tensor(a)\n  dispatch:\n"
                                       "    CPU: foo\n" + _VIEW_COPY.replace("Tensor self", "Tensor self, Tensor other"),
                                       "Tensor(a) other"),
    "view-returns-a-non-tensor": ("- func: foo(Tensor(a) self) -> (Tensor(a), int)\n  dispatch:\n    CPU: foo\n"
                                  + _VIEW_COPY.replace("-> Tensor", "-> (Tensor, int)"), "foo("),
    "view-with-two-returns": ("- func: foo(Tensor(a) self) -> (Tensor(a), Tensor(a))\n  dispatch:\n    CPU: foo\n"
                              + _VIEW_COPY.replace("-> Tensor", "-> (Tensor, Tensor)"), "foo("),
    "view-copy-without-kernel": ("- func: foo(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: foo\n"
                                 "- func: foo_copy(Tensor self) -> Tensor\n  tags: view_copy\n", "foo_copy"),
    "view-copy-kernel-renamed": ("- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)\n  dispatch:\n"
                                 "    CPU: view\n- func: view_copy(Tensor self, SymInt[] size) -> Tensor\n"
                                 "  tags: view_copy\n  dispatch:\n"
                                 "    CompositeExplicitAutogradNonFunctional: view_copy_other\n", "view_copy_other"),
    # A group whose functional variant returns an alias (it writes self, or it is a view): out= takes a fresh
    # tensor from it for its out argument. Then a mutable variant returning self twice: it takes 2, there are 3.
    "functional-variant-returns-an-alias": ("- func: foo(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: foo\n"
                                            + _OUT, "Tensor(a!)\n"),
    "functional-variant-is-a-view": ("- func: foo(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: foo\n"
                                     + _OUT + _VIEW_COPY, "Tensor(a)\n"),
    "mutable-variant-returns-self-twice": (_SELF_TWICE + "- func: foo_functional(Tensor self, Tensor other) -> "
                                           "(Tensor, Tensor, Tensor)\n  dispatch:\n    CPU: foo_functional\n"
                                           + _OUT_OF_TWO, "Tensor(a!))\n"),
    "generated-functional-of-self-returned-twice": (_SELF_TWICE + "  autogen: foo_functional\n" + _OUT_OF_TWO,
                                                    "Tensor(a!))\n"),
    # A mutable optional tensor has different C++ types in the dispatcher and native APIs: written, or generated
    # as the out argument of an out= variant from a 'Tensor?' return.
    "mutable-optional-tensor-argument": ("- func: foo(Tensor self, Tensor(b!)? other) -> Tensor\n",
                                         "Tensor(b!)? other"),
    "generated-out-of-an-optional-return": ("- func: foo(Tensor self) -> Tensor?\n  dispatch:\n    CPU: foo\n"
                                            "  autogen: foo.out\n", "foo.out\n"),
    # A view (a wildcard alias) grouped with an out= variant; a view writing its input, paired with a copy that
    # returns it too.
    "view-in-a-group": ("- func: foo(Tensor(a -> *) self) -> Tensor(a)\n  dispatch:\n"
                        "    CompositeExplicitAutograd: foo\n" + _OUT + _VIEW_COPY, "foo("),
    "view-writing-its-input": ("- func: foo(Tensor(a!) self) -> Tensor(a)\n  dispatch:\n    CPU: foo\n"
                               + _VIEW_COPY.replace("-> Tensor", "-> (Tensor, Tensor)"), "Tensor(a!) self"),
    "cumsum-without-dtype": ("- func: cumsum(Tensor self, int dim) -> Tensor\n  structured_delegate: cumsum.out\n"
                             "- func: cumsum.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n"
                             "  structured: True\n  dispatch:\n    CPU: cumsum_out\n", "cumsum.out(Tensor self"),
    "unfunctionalizable-op": ("- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: foo_\n", "foo_("),
    "in-place-with-two-returns": ("- func: foo_(Tensor(a!) self) -> (Tensor(a!), Tensor(a!))\n  dispatch:\n"
                                  "    CompositeImplicitAutograd: foo_\n", "(Tensor(a!), Tensor(a!))"),
    "structured-tensor-options": ("- func: foo(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                                  "Device? device=None, bool? pin_memory=None) -> Tensor\n"
                                  "  structured_delegate: foo.out\n"
                                  "- func: foo.out(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                                  "Device? device=None, bool? pin_memory=None, Tensor(a!) out) -> Tensor(a!)\n"
                                  "  structured: True\n  dispatch:\n    CPU: foo_out\n", "ScalarType? dtype=None, "
                                  "Layout? layout=None, Device? device=None, bool? pin_memory=None, Tensor(a!)"),
    "view-without-copy": ("- func: foo(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: foo\n", "foo("),
    "symint-kernel-without-symint": ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo_symint\n",
                                     "CPU: foo_symint"),
    "kernel-namespace-too-deep": ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: a::b::native::foo\n",
                                  "a::b::native::foo"),
    "kernel-namespace-too-deep-to-register": ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n"
                                              "    QuantizedCPU: a::b::c::foo\n", "a::b::c::foo"),
    "two-kernel-namespaces": ("- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n"
                              "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                              "  dispatch:\n    CPU: foo_out\n    CUDA: other::native::foo_out\n",
                              "other::native::foo_out"),
}

# Inputs of one torch release's rules: name -> (release, native_functions.yaml text, where the error starts).
# gen.py of 2.15 fails on a small file for want of its CUDA kernel list: tests/conformance/
# test_functionalization_sites.py runs it on the release's own file with the same op added.
MULTI_OUTPUT_VIEW = ("- func: foo(Tensor(a -> *) self, int chunks) -> Tensor(a)[]\n  dispatch:\n    CPU: foo\n"
                     "- func: foo_copy(Tensor self, int chunks) -> Tensor[]\n  tags: view_copy\n  dispatch:\n"
                     "    CompositeExplicitAutogradNonFunctional: foo_copy\n")
RELEASE_INPUTS: dict[str, tuple[str, str, str]] = {
    "multi-output-view-without-replay": ("2.15", MULTI_OUTPUT_VIEW, "foo("),
}

# Inputs near a rule's edge that gen.py accepts: `opgen check` accepts them too, and `opgen generate` writes gen.py's
# bytes (tests/conformance/test_raise_sites_torchgen.py). Name -> native_functions.yaml text.
ACCEPTED_INPUTS: dict[str, str] = {
    "kernel-namespace-two-levels": "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: a::b::foo\n",
    "kernel-namespace-native-third": ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n"
                                      "    QuantizedCPU: a::b::native::foo\n"),
    "two-namespaces-off-the-primary": ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n"
                                       "    CUDA: other::foo\n- func: foo.out(Tensor self, *, Tensor(a!) out) -> "
                                       "Tensor(a!)\n  dispatch:\n    CPU: foo_out\n    CUDA: foo_out\n"),
    "ufunc-binary-with-scalar-functors": (_CPU_FIRST + _BINARY + "    CUDAFunctorOnSelf: foo (All)\n"
                                          "    Generic: foo (All)\n"),
    "ufunc-names-differ-without-derived-functors": (
        _CPU_FIRST + _UNARY + "    CUDAFunctor: foo (All)\n    Generic: foo (All)\n    ScalarOnly: bar (All)\n"),
    "view-with-composite-implicit-kernel": ("- func: foo(Tensor(a) self, Tensor(a) other) -> Tensor(a)\n"),
    "int-list-of-lists": "- func: foo(Tensor self, int[][] x) -> Tensor\n  dispatch:\n    CPU: foo\n",
    "symint-optional-list-return": ("- func: foo(Tensor self) -> (Tensor, SymInt?[])\n  dispatch:\n"
                                    "    CPU: foo\n"),
    "optional-int-list": "- func: foo(Tensor self, int?[] x) -> Tensor\n  dispatch:\n    CPU: foo\n",
    "list-default-of-a-sized-list": "- func: foo(Tensor self, int[2] x=1) -> Tensor\n  dispatch:\n    CPU: foo\n",
    "optional-int-return": "- func: foo(Tensor self) -> (Tensor, int?)\n  dispatch:\n    CPU: foo\n",
    "mutable-variant-returns-self-once": (
        "- func: foo(Tensor(a!) self, Tensor(b!) other) -> Tensor(a!)\n  dispatch:\n    CPU: foo\n"
        "- func: foo_functional(Tensor self, Tensor other) -> (Tensor, Tensor)\n  dispatch:\n    CPU: foo_functional\n"
        "- func: foo.out(Tensor self, Tensor(b!) other, *, Tensor(c!) out) -> Tensor(c!)\n  dispatch:\n"
        "    CPU: foo_out\n"),
}

# The codegen's own invariants, said once.
_TYPES = ("a schema's types are BaseType, OptionalType, ListType and CustomClassType, and _value_ctype answers "
          "every BaseType but Tensor and Scalar and raises (OPG208) on a custom class first")
_UFUNC_TYPES = "_scalar_or_tensor returns a type for a plain Tensor (given one) and raises itself otherwise"
_AOTI_TYPES = "an op without a C shim is left out of the shims, as gen.py's aoti codegen skips it"
_FALLBACK_OPS = "torchgen's aoti/fallback_ops.py, read as data: a malformed one names the file it cannot use"
_BLOCK_YAML = "Declarations.yaml then falls back to PyYAML's writer for that value (the fast writer's limits)"
_LAZY = ("codegen/lazy/plan.py turns it into OPG537 on the backend yaml's line (gen_lazy_tensor cannot generate "
         "that op)")
_PLAN = "reported as an error of the run (exit 1), with the template or file it concerns"

_NATIVE_AOT = ("an aot.py opgen cannot read without running it (named files, exit 3) or gen.py refuses "
               "(OPG967, exit 1)")

SITES: dict[str, Site] = {
    # ------------------------------------------------------------------ C++ types (api/)
    "pieces/api/cpp.py:_value_ctype:ValueError": rule("OPG208", "unsized-bool-list", "custom-class-argument"),
    "pieces/api/cpp.py:_argument_ctype:ValueError": internal(_TYPES),
    "pieces/api/cpp.py:returntype_type:ValueError": rule(
        "OPG208", "fixed-size-list-return", "optional-list-return", "optional-scalar-return", "mutable-list-return"),
    "pieces/api/cpp.py:return_names:ValueError": guarded("OPG206", "in-place-with-two-returns"),
    "pieces/api/cpp.py:default_expr:ValueError": rule("OPG208", "list-default-not-a-list"),
    "pieces/api/structured.py:argumenttype_type:ValueError": internal(_TYPES),
    "pieces/api/structured.py:argument:ValueError": guarded("OPG206", "structured-tensor-options"),
    "pieces/api/translate.py:_unsat:UnsatError": rule("OPG208", "symint-optional-list",
                                                       "symint-list-of-lists",
                                                       "mutable-optional-tensor-argument",
                                                       "generated-out-of-an-optional-return"),
    "pieces/api/ufunc.py:_scalar_or_tensor:UfuncError": rule("OPG127", "ufunc-list-argument"),
    "pieces/api/ufunc.py:ufunctor_ctor_type:assert": internal(_UFUNC_TYPES),
    "pieces/api/ufunc.py:ufunctor_apply_type:UfuncError": rule("OPG127", "ufunc-optional-tensor"),
    "pieces/api/ufunc.py:ufunc_type:assert": internal(_UFUNC_TYPES),
    "pieces/api/ufunc.py:ufunctor_arguments:UfuncError": internal(
        "a CPU-scalar specialization is only asked for a binary op (OPG127 refuses CUDAFunctorOnSelf/OnOther "
        "on others), which has the two tensors it counts"),
    # ------------------------------------------------------------------ ufunc kernels (dest/ufunc.py)
    "pieces/dest/ufunc.py:_cuda_functor_keys:ufunc.UfuncError": rule("OPG127", "ufunc-scalar-functor-on-unary"),
    "pieces/dest/ufunc.py:compute_ufunc_cuda_functors:ufunc.UfuncError": rule(
        "OPG127", "ufunc-scalar-functor-dtype-without-plain-functor"),
    "pieces/dest/ufunc.py:_generic_loop:ufunc.UfuncError": rule("OPG127", "ufunc-names-differ",
                                                                 "ufunc-no-generic-loop"),
    "pieces/dest/ufunc.py:_lambda_bindings:ufunc.UfuncError": rule("OPG127", "ufunc-optional-tensor"),
    "pieces/dest/ufunc.py:compute_ufunc_cpu_dtype_body:ufunc.UfuncError": rule("OPG127",
                                                                                "ufunc-vector-without-scalar"),
    # ------------------------------------------------------------------ registrations and declarations
    "pieces/dest/register_structured.py:_set_output_body:UnsupportedStructuredKind": internal(
        "structured wrappers are built for functional, in-place and out= variants only, and the functional "
        "one only for the keys of _FUNCTIONAL_KEYS (gen_structured's own list)"),
    "pieces/dest/register_structured.py:_names:ValueError": internal(
        "a structured wrapper is generated only for a key whose index has the group's kernel"),
    "pieces/dest/register_structured.py:compute_structured_wrapper:ValueError": rule("OPG116",
                                                                                      "structured-list-out"),
    # ------------------------------------------------------------------ native-AOT declarations (torch 2.15 on)
    "model/native_aot.py:_check_archs:_Refused": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_check_function:_Refused": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_check_function:_Unread": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_check_grid:_Refused": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_check_grid:_Unread": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_known:_Unread": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_module_bindings:_Unread": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:read_declaration:_Refused": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:read_declaration:_Unread": handled(
        "opgen_lsp.model.native_aot:read_native_aot", _NATIVE_AOT),
    "model/native_aot.py:_check_grid:assert": internal(
        "_check_function has found kernel_precompile_grid bound by a def before the grid is read"),
    "codegen/files/aoti.py:device_shims:ValueError": internal(
        "plan_aoti_files plans no shim file without fallback_ops.py where the release's shims are the fallback ops'"),
    "codegen/files/native_aot.py:_header:ValueError": internal(
        "load_context refuses a declaration without its structured group first (declaration_errors, OPG967)"),
    "codegen/generate.py:refuse_native_aot_errors:InvalidInput": handled(
        "opgen_lsp.codegen.generate:generate", "what gen.py refuses in the native-AOT declarations: OPG967 lines, "
        "exit 1"),
    "pieces/dest/register_namespaced.py:kernel_namespace:KernelNamespaceError": handled(
        "opgen_lsp.codegen.files.dispatch_key:_group_definitions",
        "lower.py gives every in-tree kernel a namespace ending in ::native (a namespace written in the "
        "dispatch table is kept before it), so only a hand-made BackendIndex meets it"),
    "pieces/dest/register_namespaced.py:_structured:ValueError": rule(
        "OPG116", "manual-registration-of-a-structured-op", "manual-registration-of-a-ufunc-op"),
    "pieces/dest/native_declarations.py:kernel_signature:SymIntKernelError": guarded(
        "OPG125", "symint-kernel-without-symint", why="backend yamls: OPG5xx (symint without SymInt)"),
    "pieces/dest/static_dispatch.py:backend_call_signature:assert": internal(
        "CppSignatureGroup has a symint signature whenever the schema has SymInt"),
    "pieces/dest/backend_select.py:compute_backend_select_definition:BackendSelectError": handled(
        "opgen_lsp.codegen.files.backend_select:_backend_select_of",
        "the native signature's tensor arguments are the schema's: both views of one schema agree"),
    "pieces/dest/declarations_yaml.py:_cpp_argument_yaml:ValueError": internal(
        "a C++ binding's argument is an Argument or TensorOptionsArguments (SelfArgument is unpacked before)"),
    "pieces/dest/block_yaml.py:_dumped_scalar:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    "pieces/dest/block_yaml.py:scalar_text:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    "pieces/dest/block_yaml.py:_pairs:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    "pieces/dest/block_yaml.py:_mapping:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    "pieces/dest/block_yaml.py:_sequence:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    "pieces/dest/block_yaml.py:block_yaml:Unsupported": handled(
        "opgen_lsp.pieces.dest.declarations_yaml:compute_declaration_yaml_text", _BLOCK_YAML),
    # ------------------------------------------------------------------ functionalization
    "pieces/dest/functionalization.py:check_view_op:FunctionalizationError": rule(
        "OPG128", "view-first-argument-not-a-tensor", "view-aliases-a-second-argument"),
    "pieces/dest/functionalization.py:compute_view_inverse_declaration:FunctionalizationError": rule(
        "OPG128", "view-returns-a-non-tensor"),
    "pieces/dest/functionalization.py:compute_view_copy_kernel:FunctionalizationError": rule(
        "OPG128", "view-copy-without-kernel", "view-with-two-returns", "view-copy-kernel-renamed"),
    "pieces/dest/functionalization.py:view_functionalization_body:FunctionalizationError": guarded(
        "OPG308", "view-without-copy"),
    "pieces/dest/functionalization.py:_opcall:assert": guarded("OPG308", "view-without-copy"),
    "pieces/dest/functionalization.py:inverse_op:FunctionalizationError": guarded("OPG308", "view-without-copy"),
    "pieces/dest/functionalization.py:compute_functionalization_definitions:FunctionalizationError": rule(
        "OPG309", "unfunctionalizable-op"),
    "pieces/dest/functionalization.py:return_str:FunctionalizationError": guarded(
        "OPG131", "generated-functional-of-self-returned-twice",
        why="the no-op return of inplace_functionalization_body, compute_composite_out_kernel and "
            "_wrap_propagate_mutations_and_return (after its own OPG131 test) pass one name per return; "
            "compute_composite_functional_kernel passes one per fresh return and written argument of the variant "
            "it calls, as many as the generated functional variant returns unless that variant fails OPG131"),
    "pieces/dest/functionalization.py:_forward_arms:FunctionalizationError": rule(
        "OPG128", "multi-output-view-without-replay"),
    "pieces/dest/functionalization.py:_has_symbolic:FunctionalizationError": guarded(
        "OPG208", "symint-optional-list", "symint-list-of-lists",
        why="asked of a view op's SymInt-like arguments, whose C++ types are SymInt, SymInt?, SymInt[] (also "
            "sized) and SymInt[]?: every other SymInt-like type is refused by OPG208 "
            "(test_raise_sites.py::test_has_symbolic_answers_every_symint_type_the_check_lets_through)"),
    "pieces/dest/functionalization.py:attributes:FunctionalizationError": guarded(
        "OPG128", "view-first-argument-not-a-tensor", why="asked of view ops only"),
    "pieces/dest/functionalization.py:op_arguments:FunctionalizationError": guarded(
        "OPG128", "view-first-argument-not-a-tensor", why="asked of view ops only"),
    "pieces/dest/functionalization.py:_lambda_captures:FunctionalizationError": guarded(
        "OPG128", "view-first-argument-not-a-tensor", why="asked of view ops only (torch 2.6-2.8)"),
    "pieces/dest/functionalization.py:_wrap_propagate_mutations_and_return:FunctionalizationError": rule(
        "OPG131", "functional-variant-returns-an-alias", "functional-variant-is-a-view",
        "mutable-variant-returns-self-twice", "generated-functional-of-self-returned-twice"),
    "pieces/dest/functionalization.py:_cumulative_out_dtype:FunctionalizationError": rule("OPG130",
                                                                                         "cumsum-without-dtype"),
    "pieces/dest/functionalization.py:inplace_functionalization_body:FunctionalizationError": internal(
        "called only for the out=, in-place and mutable members of a group, which write an argument"),
    "pieces/dest/functionalization.py:_registration:FunctionalizationError": internal(
        "a function with a CompositeImplicitAutograd kernel has it in the CompositeImplicitAutograd index"),
    # (A view op in no group and no view group is either tagged inplace_view without a base, OPG303, or a view
    # without its copy, OPG308.)
    "pieces/dest/functionalization.py:compute_functionalization_registrations:FunctionalizationError": rule(
        "OPG128", "view-in-a-group"),
    "pieces/dest/functionalization.py:view_meta_impl:FunctionalizationError": rule("OPG128",
                                                                                    "view-writing-its-input"),
    "pieces/dest/functionalization.py:compute_composite_functional_kernel:FunctionalizationError": internal(
        "a generated functional variant comes from its group's in-place or mutable member (model/generate.py)"),
    # ------------------------------------------------------------------ AOTI shims
    "pieces/dest/aoti.py:_base_arg:NoCShim": handled("opgen_lsp.pieces.dest.aoti:shim", _AOTI_TYPES),
    "pieces/dest/aoti.py:_list_arg:NoCShim": handled("opgen_lsp.pieces.dest.aoti:shim", _AOTI_TYPES),
    "pieces/dest/aoti.py:_list_arg:ShimFails": handled(
        "opgen_lsp.analysis.shims:_shim_fails",
        "gen.py's shim generator fails on a fallback op's list of Device: OPG960, from `opgen check`, the server and before "
        "`opgen generate` writes anything (it needs fallback_ops.py, so the parse alone cannot say it; "
        "tests/conformance/test_generate_aoti_releases.py compares it with gen.py 2.6, 2.7 and 2.13)"),
    "pieces/dest/aoti.py:convert_arg:NoCShim": handled("opgen_lsp.pieces.dest.aoti:shim", _AOTI_TYPES),
    "pieces/dest/aoti.py:gen_returns:NoCShim": handled("opgen_lsp.pieces.dest.aoti:shim", _AOTI_TYPES),
    "pieces/dest/aoti.py:backend_call:assert": internal(
        "CppSignatureGroup has a symint signature whenever the schema has SymInt"),
    "pieces/dest/aoti.py:_since:FallbackOpsError": handled("opgen_lsp.analysis.shims:parse_fallback_ops",
                                                            _FALLBACK_OPS),
    "pieces/dest/aoti.py:parse_versions:FallbackOpsError": handled("opgen_lsp.analysis.shims:parse_fallback_ops",
                                                                    _FALLBACK_OPS),
    "analysis/shims.py:_versions_of:aoti.FallbackOpsError": handled(
        "opgen_lsp.analysis.shims:parse_fallback_ops", _FALLBACK_OPS),
    # ------------------------------------------------------------------ files, plans, templates
    "codegen/files/context.py:GenContext.parts_key:ValueError": internal(
        "called only by the file keys of a run with the contributions memo (GenContext.values_key is None without it)"),
    "codegen/files/deferred.py:values:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned",
        "the error of an op or view group a keyed file's family deferred (backend_select.py, functionalization.py); "
        + _PLAN),
    "codegen/files/dispatch_key.py:_definitions_template:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/dispatch_key.py:kernel_namespace_definitions:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/dispatch_key.py:_group_definitions:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/dispatch_key.py:_inline_declarations:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/functionalization.py:_functionalization_env.env:PlanError": handled(
        "opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/functionalization.py:_guard:PlanError": handled("opgen_lsp.codegen.generate:write_planned", _PLAN),
    "codegen/files/native.py:namespace_prologue:PlanError": rule("OPG129", "kernel-namespace-too-deep",
                                                                 "kernel-namespace-too-deep-to-register"),
    "codegen/files/native.py:_declarations_of:PlanError": rule("OPG129", "two-kernel-namespaces"),
    "codegen/plan.py:render:PlanError": handled("opgen_lsp.codegen.generate:write_planned",
                                                "a template missing from --source-path/templates; " + _PLAN),
    "codegen/plan.py:shard_envs:PlanError": internal("the sharded keys are opgen's own constants, declared with "
                                                     "the base environment that lists them"),
    "pieces/template.py:Template.substitute:TemplateError": handled(
        "opgen_lsp.codegen.plan:render", "a template naming a $key opgen does not fill (a template of another "
                                         "release): PlanError, " + _PLAN),
    # ------------------------------------------------------------------ inputs
    "index/inputs.py:read_input:InputError": handled("opgen_lsp.codegen.generate:generate",
                                                       "missing or unreadable (exit 2)"),
    "index/inputs.py:load_native:InputError": handled("opgen_lsp.codegen.generate:generate",
                                                        "no native_functions.yaml to read (exit 2)"),
    "index/inputs.py:release_native:InputError": handled("opgen_lsp.lsp.workspace:Workspace.target_release",
                                                           "a release unknown or not at hand: OPG976 in the server, "
                                                           "exit 2 from opgen upgrade and coverage"),
    "codegen/generate.py:read_if_present:InputError": handled("opgen_lsp.codegen.generate:generate",
                                                              "an AOTI header that cannot be read (exit 1)"),
    "codegen/generate.py:read_templates:InputError": handled("opgen_lsp.codegen.generate:generate",
                                                             "no templates folder (exit 2)"),
    "index/inputs.py:read_input:InvalidInput": handled("opgen_lsp.codegen.generate:generate",
                                                         "too large, not a regular file or not UTF-8 (exit 1)"),
    "codegen/generate.py:load_context:invalid_input": handled("opgen_lsp.codegen.generate:generate",
                                                               "native_functions.yaml has errors: each at its "
                                                               "line (exit 1)"),
    "codegen/generate.py:refuse_shim_failures:invalid_input": handled(
        "opgen_lsp.codegen.generate:generate", "a fallback op gen.py's shim generator fails on: OPG960 at its "
                                               "argument (exit 1; the server's job reports it too)"),
    # The language server's generation job (opgen.generate; show-generated catches the same in lsp/commands.py).
    "codegen/job.py:NativeJob.templates:InputError": handled("opgen_lsp.codegen.job:run",
                                                             "no templates folder: the job's error, shown to the user"),
    "codegen/job.py:load:InputError": handled("opgen_lsp.codegen.job:run",
                                              "native_functions.yaml has errors: the job's error names the first"),
    "codegen/generate.py:Engine.context:InputError": internal(
        "Engine.files documents it to its callers (the regenerate benchmark, tests); no command uses an Engine"),
    "codegen/generate.py:load_selection:invalid_input": handled(
        "opgen_lsp.codegen.generate:generate", "a selection yaml torchgen's SelectiveBuilder refuses: each error at "
                                               "its line, as `opgen check` gives them (model/selection.py; exit 1)"),
    "codegen/writer.py:write_atomic:raise": internal("re-raises after removing its temporary file"),
    "codegen/writer.py:OutputRoots.atomic_write.write:raise": internal("re-raises what is not a cross-device rename "
                                                                       "from the staging folder"),
    "codegen/writer.py:OutputRoots.folder:raise": internal("re-raises after closing the handle it holds"),
    "codegen/writer.py:_open_no_link:raise": internal("re-raises what is not a symbolic link: a missing folder is "
                                                      "made by its caller, other errors are write_files' OSError"),
    "codegen/writer.py:_refuse_link:Refused": handled("opgen_lsp.codegen.writer:write_files",
                                                      "a symbolic link below the output folder: that file's error"),
    "codegen/writer.py:make_folder:Refused": handled("opgen_lsp.codegen.generate:make_folders",
                                                     "a folder that would leave its root: that folder's error"),
    # ------------------------------------------------------------------ out-of-tree backends
    "codegen/backend/run.py:load_native_for:InputError": handled("opgen_lsp.codegen.backend.run:generate_backend",
                                                                 "no native_functions.yaml (exit 2)"),
    "codegen/backend/stubs.py:namespace_lines:PlanError": handled("opgen_lsp.codegen.backend.run:generate_backend",
                                                                  "cpp_namespace too deep: OPG504 refuses it in the "
                                                                  "backend yaml first; " + _PLAN),
    "codegen/backend/stubs.py:declarations:PlanError": guarded("OPG125", "symint-kernel-without-symint",
                                                               why="backend yamls: a symint op without SymInt"),
    "codegen/backend/stubs.py:register_cpp:PlanError": handled("opgen_lsp.codegen.backend.run:generate_backend",
                                                               _PLAN),
    "pieces/dest/register_backend.py:out_inplace_wrapper:ValueError": internal(
        "gets_out_inplace_wrapper asks for an out= or in-place member of a group, whose out= form has one out "
        "argument when it returns nothing"),
    # ------------------------------------------------------------------ lazy tensors
    "codegen/lazy/run.py:_templates:InputError": handled("opgen_lsp.codegen.lazy.run:generate_lazy",
                                                         "no templates folder (exit 2)"),
    "codegen/lazy/run.py:_read_header:InputError": handled("opgen_lsp.codegen.lazy.run:generate_lazy",
                                                           "the shape-inference header cannot be read (exit 2)"),
    "pieces/lazy/ir.py:_base_ctor_value:ValueError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/kernels.py:_meta:LazyKernelError": handled("opgen_lsp.analysis.lazy.check:check_lazy", _LAZY),
    "pieces/lazy/kernels.py:_shape_inference:LazyKernelError": handled("opgen_lsp.pieces.lazy.code:compute_pieces",
                                                                        _LAZY),
    "pieces/lazy/kernels.py:ctor_input:LazyKernelError": handled("opgen_lsp.pieces.lazy.code:compute_pieces",
                                                                  _LAZY),
    "pieces/lazy/kernels.py:_lazy_tensor_decls:LazyKernelError": handled(
        "opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/kernels.py:_device:LazyKernelError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/kernels.py:_create:LazyKernelError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/kernels.py:_return:LazyKernelError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/schema.py:LazyIrProperties.with_:KeyError": internal(
        "the property names are opgen's own constants"),
    "pieces/lazy/schema.py:ir_type:LazyTypeError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "pieces/lazy/schema.py:lazy_schema:LazyTypeError": handled("opgen_lsp.pieces.lazy.code:compute_pieces", _LAZY),
    "analysis/autograd/formulas.py:saved_variables.replace:StridesError": handled(
        "opgen_lsp.analysis.autograd.load:_backward",
        "x.sym_strides() in a formula for more than x: derivatives.yaml's OPG716, reported at the call"),
}
