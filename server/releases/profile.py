"""The profile of one torch release: every behaviour of torchgen that differs between the releases opgen knows.

A `Release` is frozen data: one field per behaviour, named after what it does. The values each release has are
not written here but in the changelog (releases.changelog), which states every change once, with the release it
arrives in, and folds them into one profile per release (`release_at`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ..frozen import IdentityHashEnum, record


@record
class AotiShimForm:
    """How gen.py writes the AOTI C shims and reads aoti/fallback_ops.py: behaviours that changed together (in 2.4
    and in 2.8), so one form per release (Release.aoti_shim_form) and not a flag each."""

    # Every op with a kernel of the device or a CompositeExplicitAutograd(NonFunctional) one gets a shim, but the
    # pointwise ones (there is no fallback_ops.py); the header is written beside the source each run (not checked),
    # both under torch/csrc/inductor/aoti_torch/generated (gen.py has no --aoti-install-dir). The form until 2.3.
    every_op: bool
    # An in-place op's shim returns nothing (its self is the argument); before 2.4 it returns it as ret0.
    inplace_returns_ignored: bool
    # A Generator argument or return is an AtenGeneratorHandle; before 2.4 the op gets no shim.
    generator_handles: bool

    # aoti/fallback_ops.py maps each fallback op to its versions; in the older form it is a set of names (every
    # shim has one version).
    fallback_ops_versioned: bool
    # The shims are written in gen.py's loop over its dispatch keys, so --backend-whitelist leaves out the devices
    # it does not name (in the newer form every AOTI device gets its shims).
    follow_dispatch_keys: bool
    # MPS gets shims (with --mps), and --update-aoti-c-shim keeps the MPS and XPU kernels (and their shims); in
    # the older form MPS gets none and XPU needs --xpu, whatever --update-aoti-c-shim.
    for_every_device: bool
    # A str argument's ATen type is ::std::string_view (seen in pointer_to_optional<...>); older: c10::string_view.
    str_is_std_string_view: bool
    # Return assignments are indented by two tabs, after an empty line when there are none; older: by eight
    # spaces, right after the call.
    returns_indented_with_tabs: bool
    # A Tensor return's assignment ends in `;;` (its conversion carried a `;`); the older form.
    tensor_return_ends_twice: bool
    # The sources' `#endif // AT_PER_OPERATOR_HEADERS` names its guard (older: a bare `#endif`).
    endif_names_guard: bool


# gen.py's three forms: until 2.3 (every op), 2.4 to 2.7 (the fallback ops), and from 2.8.
EVERY_OP_AOTI_SHIMS = AotiShimForm(every_op=True, inplace_returns_ignored=False, generator_handles=False,
                                   fallback_ops_versioned=False, follow_dispatch_keys=True, for_every_device=False,
                                   str_is_std_string_view=False, returns_indented_with_tabs=False,
                                   tensor_return_ends_twice=True, endif_names_guard=False)
OLDER_AOTI_SHIMS = AotiShimForm(every_op=False, inplace_returns_ignored=True, generator_handles=True,
                                fallback_ops_versioned=False, follow_dispatch_keys=True, for_every_device=False,
                                str_is_std_string_view=False, returns_indented_with_tabs=False,
                                tensor_return_ends_twice=True, endif_names_guard=False)
AOTI_SHIMS_2_8 = AotiShimForm(every_op=False, inplace_returns_ignored=True, generator_handles=True,
                              fallback_ops_versioned=True, follow_dispatch_keys=False, for_every_device=True,
                              str_is_std_string_view=True, returns_indented_with_tabs=True,
                              tensor_return_ends_twice=False, endif_names_guard=True)


@record
class CppSpelling:
    """How gen.py's C++ names the optional type and its helpers: c10's own until 2.3, the standard library's from
    2.4 (and before 2.3 the optional dtype helper unqualified). One record, read wherever a C++ type or expression
    is rendered, so that the spelling is chosen once.

    From 2.4 torchgen writes the standard names `::std::`-rooted in its type layer and plain `std::` in a few
    templates of its own (each generator as it was edited); c10's are written `c10::` in both."""

    rooted: str  # "::std::" (the type layer: api/types, translate, cpp defaults)
    unrooted: str  # "std::" (literal snippets: maybe_create_proxy, the lazy kernels' make_optional)
    # The common device's initial value in Register<Key>.cpp (`= std::nullopt`; `= nullopt` before 2.4).
    in_scope_nullopt: str
    # translate's optional dtype of a TensorOptions: `c10::optTypeMetaToScalarType` (before 2.3 unqualified, as
    # the generated files are inside namespace at, which sees c10's).
    dtype_of_options: str
    # translate's narrowing of a SymInt to an int: `guard_int(__FILE__, __LINE__)` (before 2.2, `expect_int()`).
    int_of_symint: str
    # A SymInt return follows the signature's symint flag (int64_t in the int signature) and makes the op a symint
    # one (with `_symint` twins); until 2.0. From 2.1 a return is always c10::SymInt and only arguments count.
    symint_returns_follow_signature: bool = False
    # translate's SymInt[] -> int[] and int[] -> SymInt[] conversions: C10_AS_INTARRAYREF_SLOW(x) and
    # c10::fromIntArrayRefSlow(x) from 2.0 (before, c10::asIntArrayRefSlow(x) and c10::fromIntArrayRef(x)).
    int_array_of_symints: str = "C10_AS_INTARRAYREF_SLOW"
    symints_of_int_array: str = "c10::fromIntArrayRefSlow"
    # A SymInt[] default that is a digit is `c10::SymInt(0)` in a SymInt signature; from 2.0 (before, `0`).
    symint_list_defaults_wrapped: bool = True

    def __hash__(self) -> int:
        # (every memo of the C++ layer is keyed by a spelling, and a run has one: hashed by one field, not ten;
        # equality still compares them all)
        return hash(self.rooted)

    def optional(self, elem: str, *, rooted: bool = True) -> str:
        return f"{self.rooted if rooted else self.unrooted}optional<{elem}>"

    def nullopt(self, *, rooted: bool = True) -> str:
        return f"{self.rooted if rooted else self.unrooted}nullopt"

    def make_optional(self, *, rooted: bool = True) -> str:
        return f"{self.rooted if rooted else self.unrooted}make_optional"


_DTYPE_OF_OPTIONS = "c10::optTypeMetaToScalarType"
_GUARD_INT = "guard_int(__FILE__, __LINE__)"
C10_OPTIONAL_2_2 = CppSpelling(rooted="c10::", unrooted="c10::", in_scope_nullopt="nullopt",
                               dtype_of_options="optTypeMetaToScalarType", int_of_symint=_GUARD_INT)
C10_OPTIONAL_2_1 = replace(C10_OPTIONAL_2_2, int_of_symint="expect_int()")
C10_OPTIONAL_2_0 = replace(C10_OPTIONAL_2_1, symint_returns_follow_signature=True)
C10_OPTIONAL_1_13 = replace(C10_OPTIONAL_2_0, int_array_of_symints="c10::asIntArrayRefSlow",
                            symints_of_int_array="c10::fromIntArrayRef", symint_list_defaults_wrapped=False)
C10_OPTIONAL = CppSpelling(rooted="c10::", unrooted="c10::", in_scope_nullopt="nullopt", dtype_of_options=_DTYPE_OF_OPTIONS,
                           int_of_symint=_GUARD_INT)
STD_OPTIONAL = CppSpelling(rooted="::std::", unrooted="std::", in_scope_nullopt="std::nullopt",
                           dtype_of_options=_DTYPE_OF_OPTIONS, int_of_symint=_GUARD_INT)


@record
class ViewInverseForm:
    """How functionalization names and calls a view op's inverse (FunctionalInverses.h, the kernels' reverse
    lambdas): changed together in 2.3, so one form per release (Release.view_inverse_form)."""

    # The inverse is named after the view's _copy op (`select_copy_int_inverse`, its arguments the copy's);
    # from 2.3 after the view op itself (`select_int_inverse`).
    named_after_copy: bool
    # The inverse takes `at::functionalization::InverseReturnMode inverse_return_mode`, which each view kernel
    # works out from reapply_views (`auto inverse_return_mode = ...`); before 2.3 it takes `bool reapply_views`.
    takes_return_mode: bool


REAPPLY_VIEWS_INVERSES = ViewInverseForm(named_after_copy=True, takes_return_mode=False)
RETURN_MODE_INVERSES = ViewInverseForm(named_after_copy=False, takes_return_mode=True)


@record
class AutogradForm:
    """How torchgen's autograd generator reads derivatives.yaml (load_derivatives.py) and writes the Node structs
    of Functions.h (gen_autograd_functions.py, the hover's): one form per release (Release.autograd), read by
    the loader, the formula rewriter and the structs, so that the generator is chosen once. Each field changed
    once, in its own release (2.0, 2.1, 2.2, 2.3, 2.5, 2.7): a form per release that changed one."""

    # A backward formula may call `.sizes()`, `.size(x)` and `.strides()`, saved as plain integers (`x_sizes`,
    # `x_argsize_0`, `x_strides`), and the SymInt calls other than `.sym_sizes()`/`.sym_strides()` are not
    # rewritten; until 2.0, whose loader refuses the plain calls (OPG715).
    formulas_take_int_sizes: bool
    # The structs are laid out for compiled autograd: its members (`compiled_args`, `apply_with_saved`), under
    # _WIN32 a TORCH_API default constructor, and the saved fields sorted by name; from 2.1 (before,
    # `struct TORCH_API X : ...`, neither member, the fields in the order the formulas save them).
    node_compiled_autograd: bool
    # The node of `_test_autograd_multiple_dispatch_view` derives from Node, as a view function's; from 2.1
    # (before, from TraceableFunction).
    test_dispatch_view_is_a_view: bool
    # A forward formula of a `_foreach_` op may not name a tensor list argument plainly (OPG720), as any other
    # argument; from 2.1 (before, tensor lists are exempt in every op).
    forward_checks_foreach_lists: bool
    # A formula's `x.sym_numel()` is saved as `x_sym_numel` (a SymInt); before 2.2, x itself is saved.
    saves_sym_numel: bool
    # A derivatives.yaml entry may name a view op's _copy function (its own formulas win over those derived from
    # the view's entry); from 2.3. Before, the loader leaves those functions out: such an entry names no function.
    names_view_copies: bool
    # The structs keep a saved `str?` as std::optional<std::string>; from 2.5 (before, c10::optional<std::string>).
    node_optional_strings_are_std: bool
    # The structs declare `void compiled_args(CompiledNodeArgs& args) const override;`; from 2.7 (before, not const).
    node_compiled_args_const: bool


# The form of the oldest release known, then each release that changed it (the rest keep the one before theirs).
AUTOGRAD_1_13 = AutogradForm(formulas_take_int_sizes=True, node_compiled_autograd=False,
                             test_dispatch_view_is_a_view=False, forward_checks_foreach_lists=False,
                             saves_sym_numel=False, names_view_copies=False, node_optional_strings_are_std=False,
                             node_compiled_args_const=False)
AUTOGRAD_2_0 = replace(AUTOGRAD_1_13, formulas_take_int_sizes=False)
AUTOGRAD_2_1 = replace(AUTOGRAD_2_0, node_compiled_autograd=True, test_dispatch_view_is_a_view=True,
                       forward_checks_foreach_lists=True)
AUTOGRAD_2_2 = replace(AUTOGRAD_2_1, saves_sym_numel=True)
AUTOGRAD_2_3 = replace(AUTOGRAD_2_2, names_view_copies=True)
AUTOGRAD_2_5 = replace(AUTOGRAD_2_3, node_optional_strings_are_std=True)
AUTOGRAD_2_7 = replace(AUTOGRAD_2_5, node_compiled_args_const=True)


class XlaDataPropagation(IdentityHashEnum):
    """How a mutating op's functionalization kernel treats XLA tensors (Release.functionalization_xla_data)."""

    # Until 2.0: no XLA rule; a functional tensor read while a non-functional one is written is always an error.
    NONE = "none"
    # 2.1 to 2.4: that error is skipped when a read tensor is on XLA, and each written argument first gets the
    # result's XLA data (propagate_xla_data(arg, result)).
    PROPAGATE = "propagate"
    # From 2.5: the same check; the XLA data is propagated after the sync, between the inner tensors
    # (propagate_xla_data_direct).
    PROPAGATE_DIRECT = "propagate_direct"


class CompositeRegistrations(IdentityHashEnum):
    """Which CompositeImplicitAutograd ops RegisterFunctionalization registers, each to its at::native kernel
    (Release.functionalization_registers_composite)."""

    # Until 2.0: every one, views and not (so that they decompose before functionalization).
    EVERY_OP = "every_op"
    # 2.1 to 2.9: none.
    NONE = "none"
    # From 2.10: the view ops (and their in-place views).
    VIEWS = "views"


@record
class Release:
    """One torch release's torchgen, as the behaviours that differ between the releases known."""

    version: str  # the release the profile was checked against, e.g. "2.14.1"
    # gen.py's output was compared file by file with this release's own (the conformance matrix).
    generation_verified: bool

    # ---- reading native_functions.yaml
    # Dimname / Dimname[] / Dimname? (named tensors) are types of func: schemas; until 2.12.
    named_tensor_types: bool
    # use_const_ref_for_mutable_tensors on an out= function is refused; from 2.7.
    refuses_const_ref_mutable_out: bool
    # _philox_* ops (random by name) need no nondeterministic_seeded tag: their key decides; from 2.15.
    philox_ops_need_no_seeded_tag: bool
    # Mutating ops functionalization leaves alone (so in no group they are not an error).
    skipped_by_functionalization: frozenset[str]
    # Functional ops (name.overload) that need no out= variant though they return nothing tensor-like (torchgen's
    # FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT; others are OPG307).
    functional_ops_without_out_variant: frozenset[str]
    # An op is random (needs the tag nondeterministic_seeded) when an argument's name says dropout, not only its
    # own name; from 2.1.
    seeded_tag_by_dropout_arguments: bool
    # Ops that may be tagged inplace_view without an out-of-place view op (resize_; resize_as_ from 2.1).
    inplace_view_exempt_ops: frozenset[str]
    # DeviceIndex is a type of func: schemas; from 2.1.
    device_index_type: bool
    # set_ (every overload) may be tagged inplace_view without an out-of-place view op, and its group still gets
    # generated variants; from 2.3 (when its own entries got the tag).
    set_passes_inplace_view_rules: bool
    # Every aten op gets the tag pt2_compliant_tag when tags.yaml defines it; from 2.2 (before, an op has it only
    # when its entry says so).
    aten_ops_get_pt2_compliant_tag: bool
    # The tags a generated (autogen) variant keeps from its op, besides `generated`: nondeterministic_seeded;
    # view_copy from 2.0; pt2_compliant_tag from 2.2.
    generated_variants_keep_tags: frozenset[str]
    # An entry's `tags:` is one string of tag names separated by ", " (`tags: core, pointwise`), and a YAML list is
    # refused; until 1.13. From 2.0 a list of names, or a string that is one name.
    tags_as_comma_separated_string: bool
    # The namespace levels a dispatch table's kernel may have before its name (`at::native` is added after them):
    # 2 until 1.13, 3 from 2.0.
    dispatch_kernel_namespace_levels: int
    # The "unnecessary dispatch table" and "lone CompositeImplicitAutograd kernel" rules count the keys as written,
    # those gen.py leaves out (MPS without --mps) included; from 2.0. Before, they count the keys kept, so
    # `CompositeImplicitAutograd: <its name>` beside an MPS kernel is refused by a run without --mps.
    dispatch_table_rules_count_keys_as_written: bool
    # Generated out= / in-place variants (added to the model) get the tags out / inplace; from 2.13.
    generated_variants_tagged_by_kind: bool

    # ---- gen.py (and the other generators)
    # A template's block placeholder strips each line's trailing whitespace (and indents no empty line); from 2.8.
    template_blocks_strip_lines: bool
    # Functionalization replays views through ViewMeta classes (ViewMetaClasses.h / .cpp); from 2.9. Before,
    # RegisterFunctionalization's view kernels build ViewMetas of lambdas, which opgen does not write yet.
    functionalization_view_meta_classes: bool
    # How a view's inverse is named and what it takes (ViewInverseForm): after the _copy op with reapply_views until
    # 2.2, after the view op with an InverseReturnMode from 2.3.
    view_inverse_form: ViewInverseForm
    # A mutating op's functionalization kernel ends the return of its no-op redispatch with a second `;`
    # (`return out;;`, a lone `;` when the op returns nothing); until 2.2.
    noop_redispatch_return_ends_twice: bool
    # A view op's lambda ViewMeta says whether the view is multi-output (`/*is_multi_output=*/`); from 2.2.
    view_meta_knows_multi_output: bool
    # Functionalization registers no kernel for set_.source_Tensor's group (set_.source_Tensor has a hand-written
    # one); from 2.2.
    functionalization_leaves_set_source_tensor: bool
    # The mutating ops' functionalization kernels say "they technicaly all support meta tensors" (a typo gen.py
    # fixed in 2.2); until 2.1.
    meta_comment_says_technicaly: bool
    # A backend's generated out= wrapper (around its functional kernel) of an op that returns nothing copies into
    # its one out argument; from 2.1. Before, gen_backend_stubs and gen_lazy_tensor fail on such an op (OPG514).
    out_wrappers_handle_no_returns: bool
    # gen_lazy_tensor's deferred registration function (Register<backend><Key>NativeFunctions) is declared
    # (`TORCH_API void ...;`) on the line before its definition; from 2.1.
    deferred_registration_declared: bool
    # gen_lazy_tensor's TorchScript lowering passes an optional keyword value as `has_x ? ... : nullptr`, as it
    # does a positional one; from 2.1 (before, always `loctx->GetOutputOp(operand(i++))`).
    lazy_ts_optional_keyword_values: bool
    # gen.py lists an op's tags sorted in RegisterSchema.cpp; from 2.1. Before, in the order of a Python set (its
    # hash seed's), so gen.py's own file varies from run to run: opgen writes them sorted there too, and the matrix
    # compares that file modulo the order inside each tag list.
    schema_tags_sorted: bool
    # The custom namespaces other libraries also define, whose RegisterSchema.cpp block is a TORCH_LIBRARY_FRAGMENT
    # (not a TORCH_LIBRARY): quantized and quantized_decomposed from 2.0.
    schema_fragment_namespaces: frozenset[str]
    # RegisterSchema.cpp declares each distinct tag list once (`const std::vector<at::Tag> tags_N = {...};`) and
    # its m.def lines name it; from 2.2 (before, each m.def spells its tags).
    schema_tags_shared: bool
    # A view's functionalization kernel works out whether its SymInt arguments are symbolic (has_symbolic_inputs)
    # and gives that to the ViewMeta, and a view op's ViewMeta says whether it is as_strided; from 2.4.
    view_meta_knows_symbolic_inputs: bool
    # An inplace view op's functionalization kernel says "we'll end up runnin the reference function" (a typo
    # gen.py fixed in 2.8); until 2.7.
    inplace_view_comment_says_runnin: bool
    # gen.py writes AOTInductor's C shims (c_shim_cpu / c_shim_cuda, in the form aoti_shim_form says); from 2.3.
    writes_aoti_c_shims: bool
    # AOTInductor gets c_shim_aten.cpp too (the aten_shimified_ops, through the dispatcher); from 2.9.
    writes_aten_c_shim: bool
    # The CompositeImplicitAutograd ops functionalization registers to their kernel (CompositeRegistrations):
    # every one until 2.0, none 2.1 to 2.9, the views from 2.10.
    functionalization_registers_composite: CompositeRegistrations
    # Structured kernels' set_output_* take the output's DimnameList and propagate the names; until 2.12.
    structured_outputs_propagate_names: bool
    # Structured kernels' classes hold a functional variant's outputs (and every proxy output) as
    # c10::ExclusivelyOwned<Tensor>, taken out on return; until 2.0 (from 2.1, plain Tensor).
    structured_outputs_exclusively_owned: bool
    # Without --xpu, every XPU-family key (SparseXPU, SparseCsrXPU, NestedTensorXPU) is left out, not
    # XPU alone; from 2.14.
    xpu_family_waits_for_flag: bool
    # Structured XPU kernels are declared `struct TORCH_XPU_API structured_...`; until 2.13.
    structured_xpu_kernels_export_xpu: bool
    # Kernel declarations of CUDA-family keys say TORCH_CUDA_CPP_API and of XPU-family keys TORCH_XPU_API,
    # and declarations that differ only in that macro are merged; from 2.15.
    device_family_kernel_exports: bool
    # ... except these CUDA-family kernels, defined in torch_cpu (TORCH_API); gen.py fails when one of them
    # is registered to no CUDA-family key.
    cuda_kernels_in_torch_cpu: frozenset[str]
    # Owning C++ types (ViewMeta classes' members) hold Tensor and Scalar by value; from 2.14.
    owning_types_hold_tensors_by_value: bool
    # gen.py writes NativeAotStubs.h and NativeAotStubs.cpp (native-AOT kernels); from 2.15.
    writes_native_aot_stubs: bool
    # ViewMeta replays of split / split_with_sizes / unbind build the one output asked for; from 2.15.
    single_output_view_replay: bool
    # aoti/fallback_ops.py's op versions are {"new_args": [...], "since": "TORCH_VERSION_X_Y_Z"} and an op may
    # carry a "since" (the shim is guarded by it); before 2.13 a version is the list of the arguments it adds.
    fallback_variants_carry_since: bool
    # The ops whose AOTI shims check each return pointer (`if (ret0) { ... }`), by a substring of the name.
    aoti_nullable_returns: frozenset[str]
    # gen_lazy_tensor's IR nodes keep a Generator argument (a scalar of the node, shown as "torch.Generator()");
    # from 2.2. Before, a generator must be optional and is left out of the node.
    lazy_ir_keeps_generators: bool
    # gen_lazy_tensor's IR nodes end ToString() with `return std::move(ss).str();` (not `ss.str()`); from 2.13.
    lazy_to_string_moves_stream: bool
    # Cumulative out= ops whose functionalized call keeps the out tensor's dtype when none is given
    # (from 2.12; the dimname overloads only in 2.12).
    cumulative_out_ops: frozenset[str]

    # How the C++ types and expressions spell optionals (CppSpelling): c10's until 2.3 (optTypeMetaToScalarType
    # unqualified until 2.2, SymInts narrowed by expect_int() until 2.1), the standard library's from 2.4.
    cpp_spelling: CppSpelling

    # ---- AOTI C shims (area shims)
    # The form of the shims and of aoti/fallback_ops.py (AotiShimForm): the older one until 2.7, the newer from 2.8.
    aoti_shim_form: AotiShimForm
    # Tensor arguments go through resolve_tensor_dispatch_flags (written ones through the handle's pointer);
    # from 2.7. Before, every Tensor is `*tensor_handle_to_tensor_pointer(x)` and Tensor? / Tensor lists plain
    # pointer_to_optional / pointer_to_list.
    aoti_tensors_resolve_dispatch_flags: bool
    # ---- gen26: torch 2.6's gen.py
    # Register<Key>.cpp is sharded like Operators.cpp (Register<Key>_N.cpp + Register<Key>Everything.cpp), one
    # RegisterDispatchDefinitions.ini block per group; from 2.7. Before, one Register<Key>.cpp holds one block per
    # kernel namespace over all groups.
    register_dispatch_key_sharded: bool
    # The dispatch helpers (create_out, resize_out, ...) open each RegisterDispatchDefinitions.ini block (its
    # ${dispatch_helpers}), not RegisterDispatchKey.cpp; until 2.6.
    dispatch_helpers_per_definitions_block: bool
    # Register<Key>.cpp's wrappers are named `wrapper_<Key>_<overload>_<name>` (gen.py's and gen_backend_stubs');
    # from 2.0. Before, `wrapper_<overload>_<name>`.
    dispatch_wrappers_named_by_key: bool
    # The dispatch keys of opgen's table that this release's gen.py does not have yet: a dispatch table naming one
    # is refused (OPG105) and no Register<Key>.cpp is written for them. SparseCsrXPU from 2.7; NestedTensorHPU
    # and MTIA from 2.8; SparseMPS and SparseCsrMPS from 2.9.
    dispatch_keys_unknown: frozenset[str]
    # The names of opgen's DispatchKey (the newest torchgen's) that this release's torchgen DispatchKey lacks: a
    # backend yaml's `backend:` (or its Autograd key) and gen.py's --static-dispatch-backend naming one are refused
    # as that torchgen refuses them (unknown dispatch key). MTIA's keys and FuncTorch* from 2.1; NestedTensor, Dense,
    # Conjugate, Negative, BatchedNestedTensor from 2.2; the SparseCsr keys and PreDispatch from 2.3; AutocastCPU,
    # AutocastCUDA, MAIA, PythonDispatcher, PythonTLSSnapshot from 2.4; AutocastXPU from 2.13.
    dispatch_key_names_unknown: frozenset[str]
    # The dtype names of opgen's ScalarType that this release's torchgen ScalarType lacks (a ufunc_inner_loop naming
    # one is OPG114): Float8_e5m2 and Float8_e4m3fn from 2.1, Float8_e5m2fnuz and Float8_e4m3fnuz from 2.2,
    # Float8_e8m0fnu from 2.7.
    scalar_type_names_unknown: frozenset[str]
    # Functionalization's meta reference runs are skipped when TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1
    # (`&& !disable_meta_reference()`); from 2.7.
    meta_reference_can_be_disabled: bool
    # Functionalization's view kernels run their meta reference (and copy its sizes and strides) only for XLA and
    # Lazy tensors (`compute_reference_meta`), mutating kernels sync each mutated argument after its commit_update,
    # and an in-place op with a Storage argument skips the meta run; from 2.0 (the three changed together).
    # Before, the reference runs for every tensor, with its guards before the meta conversion, and no sync.
    functionalization_reference_meta_for_xla_lazy_only: bool
    # RegistrationDeclarations.h spells types without `at::` (Tensor, ArrayRef<...>); until 2.6.
    registration_declarations_without_at: bool
    # gen.py's outputs lists (--output-dependencies) open `set(<name>` and close after the last file, not on
    # lines of their own; until 2.7.
    outputs_list_name_on_set_line: bool
    # enum_tag.h is one of core/'s files (named in core's outputs list; gen.py has no --headeronly-install-dir);
    # until 2.11.
    enum_tag_in_core: bool
    # ---- derivs: derivatives.yaml, deprecated.yaml and the Functions.h structs of the hover
    # Tensor methods the Python binding generator skips by name beyond 2.6's list (they are bound by hand), so
    # that deprecated.yaml cannot call them; sym_is_contiguous from 2.9, dim, numel, ... from 2.12. (A set that
    # grows by names, each stated once as added: not a field of the autograd form, whose every value would
    # restate the names of the releases before.)
    python_bindings_skip_hand_bound: frozenset[str]
    # How the autograd generator loads derivatives.yaml and writes Functions.h's Node structs (AutogradForm):
    # AUTOGRAD_1_13 for 1.13, then the form of 2.0, 2.1, 2.2, 2.3, 2.5 and from 2.7 AUTOGRAD_2_7.
    autograd: AutogradForm
    # A `Tensor?` return (or `Tensor?[]`) has a C++ type (::std::optional<at::Tensor>); from 2.2 (before, gen.py fails
    # on it: OPG208).
    optional_tensor_returns: bool
    # SymBool is a type of func: schemas (arguments and returns); from 2.5.
    symbool_type: bool
    # ---- torch 2.5's gen.py (and the generators beside it)
    # ConstQuantizerPtr is a type of func: schemas (torchgen's BaseTy; gen.py has no C++ type for it, so it
    # parses and fails to generate); until 2.5.
    const_quantizer_ptr_type: bool
    # An argument named with a reserved Python keyword (but gen.py's three exceptions) is an error (OPG302); from
    # 2.6.
    refuses_python_keyword_argument_names: bool
    # A group whose variants are all CompositeImplicitAutograd gets its generated out= / functional variants when
    # one of them is tagged `core`; from 2.6 (before, such a group gets none).
    core_composite_ops_get_generated_variants: bool
    # The generated variants are built from the mutable variant when there is one, else the in-place one; from 2.6
    # (before, from the in-place one first).
    generated_variants_based_on_mutable: bool
    # The at::_ops structs' name, overload_name and schema_str are `static constexpr const char*` members; from
    # 2.6. Before, STATIC_CONSTEXPR_STR_INL_EXCEPT_WIN_CUDA(...) in Operators.h, defined out of line by
    # STATIC_CONST_STR_OUT_OF_LINE_FOR_WIN_CUDA(...) in Operators_N.cpp.
    operator_names_static_constexpr: bool
    # Functions.h's symint templates test `std::is_same_v<T, ...>`; from 2.6 (before, `std::is_same<T, ...>::value`).
    symint_templates_use_is_same_v: bool
    # Functions.h has `namespace symint { template <typename T, ...> ... }` overloads of each symint op (methods
    # too); from 2.0. Before, only at::op definitions of the ops with a function variant.
    functions_symint_templates: bool
    # Register<Key>.cpp's TORCH_LIBRARY_IMPL blocks close with `};` (gen.py's and gen_backend_stubs' static
    # registration); until 2.5 (from 2.6, `}`).
    registration_blocks_end_in_semicolon: bool
    # A CUDA kernel's device guard starts `globalContext().lazyInitDevice(c10::DeviceType::CUDA);`; from 2.6
    # (before, `globalContext().lazyInitCUDA();`).
    lazy_init_names_the_device: bool
    # Structured XPU kernels' classes hold a device guard (`c10::OptionalDeviceGuard guard_;`) that their
    # set_output_* set; from 2.6.
    structured_xpu_outputs_guard_device: bool
    # gen_lazy_tensor's to_meta gives the meta tensor's dtype, layout and device through std::make_optional(...);
    # until 2.5.
    lazy_to_meta_makes_optionals: bool
    # With --rocm, CUDA's guard is HIP's masquerading one: Register<Key>.cpp and the CUDA shims include
    # ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h (not c10/hip/HIPGuard.h), and structured CUDA classes hold a
    # c10::hip::OptionalHIPGuardMasqueradingAsCUDA; until 2.10.
    rocm_guards_masquerade_as_cuda: bool
    # The C++ default of a schema's contiguous_format is c10::MemoryFormat::Contiguous (before, MemoryFormat::Contiguous
    # in declarations and Declarations.yaml); from 2.5.
    cpp_default_qualifies_memory_format: bool
    # Register<Key>.cpp's dispatch helpers (create_out, ...) sit between C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED(
    # "-Wunused-function") and C10_DIAGNOSTIC_POP(), and the file includes c10/macros/Macros.h; from 2.5.
    registration_helpers_silence_unused: bool
    # CompositeViewCopyKernels.cpp includes each structured group's <op>_native.h beside its <op>_ops.h; from 2.5.
    view_copy_kernels_include_group_natives: bool
    # CompositeViewCopyKernels.cpp's {view}_copy kernels take the name and SymInt-ness the backend index gives
    # (a copy without a CompositeExplicitAutogradNonFunctional kernel, or view_copy's under another name than
    # view_copy_symint, is OPG128), clone contiguous, and the file includes each view group's <op>_native.h; from
    # 2.0. Before, the native name with int arguments, a plain clone(), the ops headers only.
    view_copy_kernels_by_backend_index: bool
    # What a mutating op's functionalization kernel does for XLA tensors (XlaDataPropagation): nothing until 2.0,
    # propagate_xla_data(arg, result) before the sync 2.1 to 2.4, propagate_xla_data_direct after it from 2.5.
    functionalization_xla_data: XlaDataPropagation
    # VmapGeneratedPlumbing.h unwraps a tensor by `auto [x_value, x_bdim] = unwrapTensorAtLevel(...)` and declares an
    # optional one's std::optional<...>; from 2.5. Before, `Tensor x_value; optional<int64_t> x_bdim; std::tie(...)`.
    vmap_unwraps_by_structured_binding: bool
    # The vmap plumbing checks its layer by `vmap_check_escaped(maybe_layer, "<generator>")`; from 2.0 (before,
    # TORCH_INTERNAL_ASSERT(maybe_layer.has_value())).
    vmap_checks_escaped_layer: bool
    # The ops whose vmap plumbing passes non-tensor (SymInt) returns through (functorch's return_symint_overrides).
    vmap_symint_return_overrides: frozenset[str]
    # gen_lazy_tensor's LazyIr.h includes <optional> (before, <c10/util/Optional.h>); from 2.5.
    lazy_ir_includes_std_optional: bool
    # gen_backend_stubs' and gen_lazy_tensor's files say `@generated by torchgen/<their script>` where gen.py's say
    # torchgen/gen.py; from 2.5 (before, every default comment names torchgen/gen.py).
    generated_comment_names_generator: bool
    # The device keys whose Register<Key>.cpp (gen.py's or a backend's) creates outputs by their own
    # at::detail::empty_<key> functions (and includes their EmptyTensor.h): XPU from 2.5, MTIA from 2.8.
    device_keys_with_empty_functions: frozenset[str]
    # What follows the ufunc files' DECLARE_DISPATCH(...) and REGISTER_DISPATCH(...) lines: nothing from 2.6
    # (the macros end their statements), ";" before.
    dispatch_stub_macros_end: str
    # ---- gen.py's command line (the drop-in, python -m opgen_lsp.gen, takes each release's flags)
    # gen.py's multi-word flags (--install-dir, --backend-whitelist, ...) have a dashed spelling beside the
    # underscore one (gen_backend_stubs' and gen_lazy_tensor's too: --output-dir, --gen-ts-lowerings, ...); from 2.0.
    # Before, the underscore spelling alone (-s/--source-path, -o/--output-dependencies, --dry-run and
    # --per-operator-headers aside), and a dashed one is argparse's "unrecognized arguments".
    command_line_dashed_aliases: bool
    # gen.py takes --mtia; from 2.8. (--headeronly-install-dir comes with enum_tag_in_core's end,
    # --native-aot-ops-dir with writes_native_aot_stubs.)
    gen_py_takes_mtia: bool
    # gen.py takes --xpu (without it, XPU's kernels are left out); from 2.6. Before, XPU's Register<Key>.cpp is
    # always written, into the main folder, and nothing more of XPU (no XPUFunctions.h, no XPU shims).
    gen_py_takes_xpu: bool
    # gen.py takes --aoti-install-dir and --update-aoti-c-shim; from 2.4 (before, every op's shims and their headers
    # go to torch/csrc/inductor/aoti_torch/generated under the working folder: AotiShimForm.every_op).
    gen_py_takes_aoti_flags: bool
    # gen.py takes --extend-aoti-c-shim (C shims of out-of-tree ops, their headers under extend/); from 2.6.
    gen_py_takes_extend_aoti_c_shim: bool
    # ---- a backend's own operator file (docs/backends.md): torchgen as the backend patches it before its parse
    # The dispatch keys the backend appends to torchgen.model.dispatch_keys (PrivateUse1); when any, the backend
    # also appends its out= ops to OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY, and only parse_native_yaml runs (none
    # of gen.py's generators). Empty for torchgen as released.
    backend_dispatch_keys: frozenset[str] = frozenset()

    def __hash__(self) -> int:
        # (the emitters' memos are keyed by the release: hashed by its version, not its hundred fields; equality
        # still compares them all)
        return hash(self.version)

    @property
    def series(self) -> str:
        """X.Y: the profile serves every patch release of it."""
        return ".".join(self.version.split(".")[:2])

    def __str__(self) -> str:
        return f"torch {self.series}"

    @property
    def parse_only(self) -> bool:
        """Read as a backend's own torchgen reads its operator file: parse_native_yaml and nothing after it."""
        return bool(self.backend_dispatch_keys)


# One profile per release and backend key set, so that the profile's identity stays one within a session.
@lru_cache(maxsize=64)  # releases known (11) x the few key sets of the backends open at once
def as_patched_by_backend(release: Release, keys: frozenset[str]) -> Release:
    """`release` as a backend's own torchgen runs it: `keys` appended to dispatch_keys, out= ops not grouped."""
    return replace(release, backend_dispatch_keys=keys) if keys else release
