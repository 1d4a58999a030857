"""The torch releases opgen knows, and what changed between them: one place, passed explicitly.

Each torch release's torchgen is the reference for that release. A `Release` is a frozen profile of
one release: every behaviour of torchgen that changed between the releases opgen knows is a field,
named after what it does, with the release it starts or ends in. Rules, the model, the emitters and
the template engine take the profile as a parameter; nothing else compares versions.

`detect` finds the release the inputs belong to (a PyTorch checkout's version.txt, the torch beside a
packaged torchgen) and `resolve` turns what was found, or `--torch-version` / opgen.torchVersion, into
a profile and a note for a release newer or older than the ones known. docs/releases.md says how to
add the next release.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from enum import Enum
from functools import lru_cache

from . import __version__
from .diagnostics import Diagnostic, diag
from .frozen import record
from .input_file import UnreadableFile, read_text
from .text import Span

# The mutating ops gen.py's functionalization leaves alone (its MUTABLE_OPS_NOT_USING_FUNCTIONALIZATION,
# apart from the op lists of grouping, which opgen keeps in model.generate): release facts.
_SKIPPED_BY_FUNCTIONALIZATION_2_6 = frozenset({"record_stream", "resize_", "resize_as_", "_fill_mem_eff_dropout_mask_"})
_SKIPPED_BY_FUNCTIONALIZATION_2_12 = _SKIPPED_BY_FUNCTIONALIZATION_2_6 | {"_flash_attention_forward_no_dropout_inplace"}
_SKIPPED_BY_FUNCTIONALIZATION_2_15 = _SKIPPED_BY_FUNCTIONALIZATION_2_12 | {"_cudnn_attention_forward_no_dropout_inplace"}
# The CUDA-family kernels gen.py 2.15 knows are defined in torch_cpu (their declarations say TORCH_API), and
# the op its own native_functions.yaml registers each for: gen.py fails when no CUDA-family key registers one.
_CUDA_KERNELS_IN_TORCH_CPU_2_15 = {
    "count_nonzero_cuda": "count_nonzero.dim_IntList", "log_sigmoid_backward_cuda": "log_sigmoid_backward",
    "log_sigmoid_backward_cuda_out": "log_sigmoid_backward.grad_input",
    "triton_multi_head_attention": "_triton_multi_head_attention",
    "NestedTensor_softmax_dropout_cuda": "_nested_tensor_softmax_with_shape",
    "masked_fill__quantized_cuda": "masked_fill_.Scalar", "_index_put_impl_quantized_cuda_": "_index_put_impl_"}
# The ops (by a substring of the unambiguous name) whose AOTI shims check each return pointer for null.
_NULLABLE_RETURNS_2_6 = frozenset({"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                                   "_scaled_dot_product_cudnn_attention", "convolution_backward"})
_NULLABLE_RETURNS_2_7 = _NULLABLE_RETURNS_2_6 | {"_scaled_dot_product_fused_attention_overrideable"}
_NULLABLE_RETURNS_2_9 = _NULLABLE_RETURNS_2_7 | {
    "_functional_sym_constrain_range", "_scaled_dot_product_efficient_attention_backward",
    "_thhn_fused_lstm_cell_backward_impl", "grid_sampler_2d_backward", "grid_sampler_3d_backward", "linear_backward"}
# derivs: the Tensor methods the Python binding generator skips by name (SKIP_PYTHON_BINDINGS) that 2.6's list
# lacks: each got a hand-written binding in the release named.
_HAND_BOUND_2_9 = frozenset({"sym_is_contiguous"})
_HAND_BOUND_2_12 = _HAND_BOUND_2_9 | {"dim", "get_device", "is_contiguous", "numel", "storage_offset"}


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
    # Generated out= / in-place variants (added to the model) get the tags out / inplace; from 2.13.
    generated_variants_tagged_by_kind: bool

    # ---- gen.py (and the other generators)
    # A template's block placeholder strips each line's trailing whitespace (and indents no empty line); from 2.8.
    template_blocks_strip_lines: bool
    # Functionalization replays views through ViewMeta classes (ViewMetaClasses.h / .cpp); from 2.9. Before,
    # RegisterFunctionalization's view kernels build ViewMetas of lambdas, which opgen does not write yet.
    functionalization_view_meta_classes: bool
    # An inplace view op's functionalization kernel says "we'll end up runnin the reference function" (a typo
    # gen.py fixed in 2.8); until 2.7.
    inplace_view_comment_says_runnin: bool
    # aoti/fallback_ops.py maps each fallback op to its versions; from 2.8. Before, it is a set of names (every
    # shim has one version) and the C shims have an older form (the aoti_* fields at the end).
    fallback_ops_versioned: bool
    # AOTInductor gets c_shim_aten.cpp too (the aten_shimified_ops, through the dispatcher); from 2.9.
    writes_aten_c_shim: bool
    # Functionalization registers view ops with a CompositeImplicitAutograd kernel too (to that kernel); from 2.10.
    functionalization_registers_composite_views: bool
    # Structured kernels' set_output_* take the output's DimnameList and propagate the names; until 2.12.
    structured_outputs_propagate_names: bool
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
    # gen_lazy_tensor's IR nodes end ToString() with `return std::move(ss).str();` (not `ss.str()`); from 2.13.
    lazy_to_string_moves_stream: bool
    # Cumulative out= ops whose functionalized call keeps the out tensor's dtype when none is given
    # (from 2.12; the dimname overloads only in 2.12).
    cumulative_out_ops: frozenset[str]

    # ---- AOTI C shims (area shims): the older shim form of gen.py until 2.7 (with fallback_ops_versioned)
    # The shims are written in gen.py's loop over its dispatch keys, so --backend-whitelist leaves out the
    # devices it does not name; until 2.7 (from 2.8 every AOTI device gets its shims).
    aoti_shims_follow_dispatch_keys: bool
    # MPS gets shims (with --mps), and --update-aoti-c-shim keeps the MPS and XPU kernels (and their shims);
    # from 2.8. Before, MPS gets none and XPU needs --xpu, whatever --update-aoti-c-shim.
    aoti_shims_for_every_device: bool
    # Tensor arguments go through resolve_tensor_dispatch_flags (written ones through the handle's pointer);
    # from 2.7. Before, every Tensor is `*tensor_handle_to_tensor_pointer(x)` and Tensor? / Tensor lists plain
    # pointer_to_optional / pointer_to_list.
    aoti_tensors_resolve_dispatch_flags: bool
    # A str argument's ATen type is ::std::string_view (seen in pointer_to_optional<...>); before 2.8 c10::string_view.
    aoti_str_is_std_string_view: bool
    # Return assignments are indented by two tabs, after an empty line when there are none; before 2.8 by eight
    # spaces, right after the call.
    aoti_returns_indented_with_tabs: bool
    # A Tensor return's assignment ends in `;;` (its conversion carried a `;`); until 2.7.
    aoti_tensor_return_ends_twice: bool
    # The sources' `#endif // AT_PER_OPERATOR_HEADERS` names its guard; from 2.8 (before, a bare `#endif`).
    aoti_endif_names_guard: bool
    # ---- gen26: torch 2.6's gen.py
    # Register<Key>.cpp is sharded like Operators.cpp (Register<Key>_N.cpp + Register<Key>Everything.cpp), one
    # RegisterDispatchDefinitions.ini block per group; from 2.7. Before, one Register<Key>.cpp holds one block per
    # kernel namespace over all groups.
    register_dispatch_key_sharded: bool
    # The dispatch helpers (create_out, resize_out, ...) open each RegisterDispatchDefinitions.ini block (its
    # ${dispatch_helpers}), not RegisterDispatchKey.cpp; until 2.6.
    dispatch_helpers_per_definitions_block: bool
    # The dispatch keys of opgen's table that this release's gen.py does not have yet: a dispatch table naming one
    # is refused (OPG105) and no Register<Key>.cpp is written for them. SparseCsrXPU from 2.7; NestedTensorHPU
    # and MTIA from 2.8; SparseMPS and SparseCsrMPS from 2.9.
    dispatch_keys_unknown: frozenset[str]
    # Functionalization's meta reference runs are skipped when TORCH_DISABLE_FUNCTIONALIZATION_META_REFERENCE=1
    # (`&& !disable_meta_reference()`); from 2.7.
    meta_reference_can_be_disabled: bool
    # RegistrationDeclarations.h spells types without `at::` (Tensor, ArrayRef<...>); until 2.6.
    registration_declarations_without_at: bool
    # gen.py's outputs lists (--output-dependencies) open `set(<name>` and close after the last file, not on
    # lines of their own; until 2.7.
    outputs_list_name_on_set_line: bool
    # enum_tag.h is one of core/'s files (named in core's outputs list; gen.py has no --headeronly-install-dir);
    # until 2.11.
    enum_tag_in_core: bool
    # ---- derivs: derivatives.yaml, deprecated.yaml and the Functions.h structs of the hover
    # (The autograd loader's rules are the same in every release known; its inputs differ.)
    # Tensor methods the Python binding generator skips by name beyond 2.6's list (they are bound by hand), so
    # that deprecated.yaml cannot call them; sym_is_contiguous from 2.9, dim, numel, ... from 2.12.
    python_bindings_skip_hand_bound: frozenset[str] = _HAND_BOUND_2_12
    # Functions.h's autograd Node structs declare `void compiled_args(CompiledNodeArgs& args) const override;`
    # (before, not const); from 2.7.
    node_compiled_args_const: bool = True
    # ---- torch 2.5's gen.py (and the generators beside it)
    # ConstQuantizerPtr is a type of func: schemas (torchgen's BaseTy; gen.py has no C++ type for it, so it
    # parses and fails to generate); until 2.5.
    const_quantizer_ptr_type: bool = False
    # An argument named with a reserved Python keyword (but gen.py's three exceptions) is an error (OPG302); from
    # 2.6.
    refuses_python_keyword_argument_names: bool = True
    # A group whose variants are all CompositeImplicitAutograd gets its generated out= / functional variants when
    # one of them is tagged `core`; from 2.6 (before, such a group gets none).
    core_composite_ops_get_generated_variants: bool = True
    # The generated variants are built from the mutable variant when there is one, else the in-place one; from 2.6
    # (before, from the in-place one first).
    generated_variants_based_on_mutable: bool = True
    # The at::_ops structs' name, overload_name and schema_str are `static constexpr const char*` members; from
    # 2.6. Before, STATIC_CONSTEXPR_STR_INL_EXCEPT_WIN_CUDA(...) in Operators.h, defined out of line by
    # STATIC_CONST_STR_OUT_OF_LINE_FOR_WIN_CUDA(...) in Operators_N.cpp.
    operator_names_static_constexpr: bool = True
    # Functions.h's symint templates test `std::is_same_v<T, ...>`; from 2.6 (before, `std::is_same<T, ...>::value`).
    symint_templates_use_is_same_v: bool = True
    # Register<Key>.cpp's TORCH_LIBRARY_IMPL blocks close with `};` (gen.py's and gen_backend_stubs' static
    # registration); until 2.5 (from 2.6, `}`).
    registration_blocks_end_in_semicolon: bool = False
    # A CUDA kernel's device guard starts `globalContext().lazyInitDevice(c10::DeviceType::CUDA);`; from 2.6
    # (before, `globalContext().lazyInitCUDA();`).
    lazy_init_names_the_device: bool = True
    # Structured XPU kernels' classes hold a device guard (`c10::OptionalDeviceGuard guard_;`) that their
    # set_output_* set; from 2.6.
    structured_xpu_outputs_guard_device: bool = True
    # gen_lazy_tensor's to_meta gives the meta tensor's dtype, layout and device through std::make_optional(...);
    # until 2.5.
    lazy_to_meta_makes_optionals: bool = False
    # With --rocm, CUDA's guard is HIP's masquerading one: Register<Key>.cpp and the CUDA shims include
    # ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h (not c10/hip/HIPGuard.h), and structured CUDA classes hold a
    # c10::hip::OptionalHIPGuardMasqueradingAsCUDA; until 2.10.
    rocm_guards_masquerade_as_cuda: bool = False
    # What follows the ufunc files' DECLARE_DISPATCH(...) and REGISTER_DISPATCH(...) lines: nothing from 2.6
    # (the macros end their statements), ";" before.
    dispatch_stub_macros_end: str = ""
    # ---- gen.py's command line (the drop-in, python -m opgen_lsp.gen, takes each release's flags)
    # gen.py takes --mtia; from 2.8. (--headeronly-install-dir comes with enum_tag_in_core's end,
    # --native-aot-ops-dir with writes_native_aot_stubs.)
    gen_py_takes_mtia: bool = True
    # gen.py takes --xpu (without it, XPU's kernels are left out); from 2.6. Before, XPU's Register<Key>.cpp is
    # always written, into the main folder, and nothing more of XPU (no XPUFunctions.h, no XPU shims).
    gen_py_takes_xpu: bool = True
    # gen.py takes --extend-aoti-c-shim (C shims of out-of-tree ops, their headers under extend/); from 2.6.
    gen_py_takes_extend_aoti_c_shim: bool = True
    # ---- a backend's own operator file (docs/backends.md): torchgen as the backend patches it before its parse
    # The dispatch keys the backend appends to torchgen.model.dispatch_keys (PrivateUse1); when any, the backend
    # also appends its out= ops to OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY, and only parse_native_yaml runs (none
    # of gen.py's generators). Empty for torchgen as released.
    backend_dispatch_keys: frozenset[str] = frozenset()

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


_R2_13 = Release(
    version="2.13.0", generation_verified=True, template_blocks_strip_lines=True,
    functionalization_view_meta_classes=True, writes_aten_c_shim=True,
    inplace_view_comment_says_runnin=False, fallback_ops_versioned=True,
    named_tensor_types=False, refuses_const_ref_mutable_out=True, philox_ops_need_no_seeded_tag=False,
    skipped_by_functionalization=_SKIPPED_BY_FUNCTIONALIZATION_2_12, generated_variants_tagged_by_kind=True,
    functionalization_registers_composite_views=True,
    structured_outputs_propagate_names=False,
    xpu_family_waits_for_flag=False, structured_xpu_kernels_export_xpu=True, device_family_kernel_exports=False,
    cuda_kernels_in_torch_cpu=frozenset(),
    owning_types_hold_tensors_by_value=False, writes_native_aot_stubs=False, single_output_view_replay=False,
    fallback_variants_carry_since=True, lazy_to_string_moves_stream=True, aoti_nullable_returns=_NULLABLE_RETURNS_2_9,
    cumulative_out_ops=frozenset({"cumsum.out", "cumprod.out"}),
    # AOTI C shims (area shims)
    aoti_shims_follow_dispatch_keys=False, aoti_shims_for_every_device=True, aoti_tensors_resolve_dispatch_flags=True,
    aoti_str_is_std_string_view=True, aoti_returns_indented_with_tabs=True, aoti_tensor_return_ends_twice=False,
    aoti_endif_names_guard=True,
    register_dispatch_key_sharded=True, dispatch_helpers_per_definitions_block=False,  # gen26
    dispatch_keys_unknown=frozenset(), meta_reference_can_be_disabled=True, registration_declarations_without_at=False,
    outputs_list_name_on_set_line=False, enum_tag_in_core=False,
)
_R2_12 = replace(_R2_13, version="2.12.1", named_tensor_types=True,
                 generated_variants_tagged_by_kind=False, structured_outputs_propagate_names=True,
                 fallback_variants_carry_since=False, lazy_to_string_moves_stream=False,
                 cumulative_out_ops=_R2_13.cumulative_out_ops | {"cumsum.dimname_out", "cumprod.dimname_out"})
_R2_11 = replace(_R2_12, version="2.11.0", skipped_by_functionalization=_SKIPPED_BY_FUNCTIONALIZATION_2_6,
                 cumulative_out_ops=frozenset(),
                 python_bindings_skip_hand_bound=_HAND_BOUND_2_9,  # derivs
                 enum_tag_in_core=True)  # gen26
_R2_10 = replace(_R2_11, version="2.10.0", rocm_guards_masquerade_as_cuda=True)
_R2_9 = replace(_R2_10, version="2.9.1", functionalization_registers_composite_views=False)
_R2_7 = replace(_R2_9, version="2.7.1", functionalization_view_meta_classes=False,
                writes_aten_c_shim=False, aoti_nullable_returns=_NULLABLE_RETURNS_2_7, template_blocks_strip_lines=False,
                inplace_view_comment_says_runnin=True, fallback_ops_versioned=False,
                python_bindings_skip_hand_bound=frozenset(),  # derivs
                # AOTI C shims (area shims): the older shim form
                aoti_shims_follow_dispatch_keys=True, aoti_shims_for_every_device=False,
                aoti_str_is_std_string_view=False, aoti_returns_indented_with_tabs=False,
                aoti_tensor_return_ends_twice=True, aoti_endif_names_guard=False,
                outputs_list_name_on_set_line=True,  # gen26
                gen_py_takes_mtia=False,
                dispatch_keys_unknown=frozenset({"NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS"}))
_R2_14 = replace(_R2_13, version="2.14.1", xpu_family_waits_for_flag=True, structured_xpu_kernels_export_xpu=False,
                 owning_types_hold_tensors_by_value=True)
_R2_15 = replace(_R2_14, version="2.15.0", philox_ops_need_no_seeded_tag=True,
                 skipped_by_functionalization=_SKIPPED_BY_FUNCTIONALIZATION_2_15, device_family_kernel_exports=True,
                 cuda_kernels_in_torch_cpu=frozenset(_CUDA_KERNELS_IN_TORCH_CPU_2_15),
                 writes_native_aot_stubs=True, single_output_view_replay=True)

_R2_6 = replace(_R2_7, version="2.6.0", generation_verified=True, refuses_const_ref_mutable_out=False,
                aoti_nullable_returns=_NULLABLE_RETURNS_2_6,
                node_compiled_args_const=False,  # derivs
                aoti_tensors_resolve_dispatch_flags=False,  # AOTI C shims (area shims)
                register_dispatch_key_sharded=False, dispatch_helpers_per_definitions_block=True,  # gen26
                dispatch_keys_unknown=_R2_7.dispatch_keys_unknown | {"SparseCsrXPU"},
                meta_reference_can_be_disabled=False, registration_declarations_without_at=True)
# torch 2.5: the fields of the section "torch 2.5's gen.py" above, and the keys and flags it lacks.
_R2_5 = replace(_R2_6, version="2.5.1",
                core_composite_ops_get_generated_variants=False, generated_variants_based_on_mutable=False,
                operator_names_static_constexpr=False, symint_templates_use_is_same_v=False,
                registration_blocks_end_in_semicolon=True, lazy_init_names_the_device=False,
                dispatch_stub_macros_end=";", gen_py_takes_xpu=False,
                structured_xpu_outputs_guard_device=False, structured_xpu_kernels_export_xpu=False,
                refuses_python_keyword_argument_names=False, gen_py_takes_extend_aoti_c_shim=False,
                lazy_to_meta_makes_optionals=True, const_quantizer_ptr_type=True,
                dispatch_keys_unknown=_R2_6.dispatch_keys_unknown | {"SparseXPU", "NestedTensorXPU"})
# Every release known, oldest first.
RELEASES: tuple[Release, ...] = (
    _R2_5,
    _R2_6,
    _R2_7,
    replace(_R2_7, version="2.8.0", template_blocks_strip_lines=True,
            inplace_view_comment_says_runnin=False, fallback_ops_versioned=True,
            # AOTI C shims (area shims): the form of 2.8 on
            aoti_shims_follow_dispatch_keys=False, aoti_shims_for_every_device=True, aoti_str_is_std_string_view=True,
            aoti_returns_indented_with_tabs=True, aoti_tensor_return_ends_twice=False, aoti_endif_names_guard=True,
            outputs_list_name_on_set_line=False,  # gen26
            dispatch_keys_unknown=frozenset({"SparseMPS", "SparseCsrMPS"}), gen_py_takes_mtia=True),
    _R2_9,
    _R2_10,
    _R2_11,
    _R2_12,
    _R2_13,
    _R2_14,
    _R2_15,
)
# What opgen uses when nothing names a release (the reference it was first held to).
DEFAULT = _R2_13
NEWEST = RELEASES[-1]
OLDEST = RELEASES[0]
_BY_SERIES = {r.series: r for r in RELEASES}


def known_range() -> str:
    return f"{OLDEST.series} to {NEWEST.series}"


def server_version_text() -> str:
    """The language server's serverInfo.version: the package and the releases it serves, on one line."""
    return f"{__version__} (torch {OLDEST.series}-{NEWEST.series}, default {DEFAULT.series})"


# ---------------------------------------------------------------- versions

_VERSION = re.compile(r"\s*(\d+)\.(\d+)(?:\.(\d+))?([A-Za-z0-9.+_-]*)\s*\Z")


def parse_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of '2.14.1', '2.16.0a0', '2.15.0+cu132'; None when it is not a version."""
    m = _VERSION.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _key(release: Release) -> tuple[int, int]:
    key = parse_version(release.version)
    if key is None:  # a profile written wrong: opgen's own bug, not the user's input
        raise ValueError(f"the profile {release} has no version: {release.version!r}")
    return key


class Fit(Enum):
    KNOWN = "known"
    NEWER = "newer"  # newer than the newest profile: that profile, with a warning
    OLDER = "older"  # older than the oldest: not supported


@record
class Resolved:
    """The profile to use, and how it was chosen."""

    release: Release
    fit: Fit
    found: str  # the version as found or given ("2.16.0a0"); "" when nothing named one
    source: str  # where: "version.txt of ROOT", "--torch-version", "default", ...

    @property
    def note(self) -> str | None:
        """One line for a release other than a known one; None when the release is known."""
        if self.fit is Fit.NEWER:
            return (f"torch {self.found} ({self.source}) is newer than the releases opgen knows "
                    f"({known_range()}): checked and generated as torch {NEWEST.series}")
        if self.fit is Fit.OLDER:
            return (f"torch {self.found} ({self.source}) is older than the releases opgen knows ({known_range()}); "
                    "pass --torch-version to choose one")
        return None

    def status(self) -> dict[str, str]:
        """What a client shows of it (the server's opgen/release notification): the release as found, the
        profile's release, where it came from, how it fits, the note for one other than a known release."""
        return {"version": self.found or self.release.version, "profile": self.release.version,
                "source": self.source, "fit": self.fit.value, "label": self.label, "note": self.note or ""}

    @property
    def label(self) -> str:
        """How the release is shown: 'torch 2.14 (version.txt of /src/pytorch)'."""
        shown = f"torch {self.found}" if self.found else str(self.release)
        return f"{shown} ({self.source})"


def resolve(version: str, source: str) -> Resolved | None:
    """The profile for a version string; None when `version` is not one."""
    key = parse_version(version)
    if key is None:
        return None
    exact = _BY_SERIES.get(f"{key[0]}.{key[1]}")
    if exact is not None:
        return Resolved(exact, Fit.KNOWN, version.strip(), source)
    if key > _key(NEWEST):
        return Resolved(NEWEST, Fit.NEWER, version.strip(), source)
    return Resolved(OLDEST, Fit.OLDER, version.strip(), source)


def default_resolved() -> Resolved:
    return Resolved(DEFAULT, Fit.KNOWN, "", "default")


# ---------------------------------------------------------------- detection

_PY_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def _read_small(path: str) -> str | None:
    """The start of a small text file (version.txt, torch/version.py) by the bounded reader, so that a FIFO
    there is not waited on; None when there is no such file."""
    try:
        return read_text(path, limit=64 * 1024)[:4096]
    except UnreadableFile:
        return None


def _checkout_version(folder: str) -> tuple[str, str] | None:
    """A PyTorch checkout's release: version.txt at the root above aten/src/ATen."""
    if not os.path.isdir(os.path.join(folder, "aten", "src", "ATen")):
        return None
    text = _read_small(os.path.join(folder, "version.txt"))
    return (text.strip(), f"version.txt of {folder}") if text and parse_version(text) else None


def _packaged_version(folder: str) -> tuple[str, str] | None:
    """A packaged torchgen's release: torch/version.py beside the torchgen folder holding packaged/ATen."""
    if not os.path.isdir(os.path.join(folder, "torchgen", "packaged", "ATen")):
        return None
    path = os.path.join(folder, "torch", "version.py")
    m = _PY_VERSION.search(_read_small(path) or "")
    return (m.group(1), f"{path}") if m and parse_version(m.group(1)) else None


def _detect_upwards(folder: str) -> tuple[str, str] | None:
    while True:
        found = _checkout_version(folder) or _packaged_version(folder)
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def detect(path: str) -> tuple[str, str] | None:
    """(version, where it was read) of the torch release a native_functions.yaml (or its folder) belongs
    to, looking upwards from it: first in the tree it is placed in, then, when it is reached through a symbolic
    link (itself or a folder above it), in the tree of what the link points at; None when nothing says."""
    placed = os.path.abspath(path)
    found = _detect_upwards(placed if os.path.isdir(placed) else os.path.dirname(placed))
    if found is not None:
        return found
    real = os.path.realpath(path)
    if real == placed:
        return None
    return _detect_upwards(real if os.path.isdir(real) else os.path.dirname(real))


# ---------------------------------------------------------------- recognised from the content

CONTENT_SOURCE = "from its content"
# A whole release's native_functions.yaml has some 2,600 entries; a smaller file (a test's, a fork's excerpt)
# says too little about its release to be told one by its ops.
_FEWEST_ENTRIES = 1500
_MOST_BYTES = 16 * 1024 * 1024  # read no more than this to recognise a file by its content
_FUNC_NAME = re.compile(r"\n-[ \t]+func:[ \t]*([\w.]+)")


@lru_cache(maxsize=1)  # one table, computed from the known releases once
def _holders() -> tuple[tuple[str, frozenset[str]], ...]:
    """(name.overload, the versions of the known releases whose yaml has it) of every op some known release
    added or removed (release_ops.CHANGES): the ops whose presence tells the releases apart."""
    from .release_ops import CHANGES  # noqa: PLC0415  (a table, only read to recognise a file by its content)

    events: dict[str, list[tuple[str, bool]]] = {}
    for version, (added, removed, _) in CHANGES.items():
        for names, present in ((added, True), (removed, False)):
            for name in names:
                events.setdefault(name, []).append((version, present))
    out = []
    for name, changes in events.items():
        present, by_version, holders = not changes[0][1], dict(changes), set()
        for release in RELEASES:
            present = by_version.get(release.version, present)
            if present:
                holders.add(release.version)
        out.append((name, frozenset(holders)))
    return tuple(out)


def recognise(text: str) -> tuple[str, str] | None:
    """(series, how) of the known release whose native_functions.yaml `text` is, told by the ops each release
    added or removed: the release whose ops differ least from the file's, when it is a whole release's file and
    one release fits better than every other; None otherwise. `how` says how many of the telling ops differ."""
    names = set(_FUNC_NAME.findall("\n" + text))
    if len(names) < _FEWEST_ENTRIES:
        return None
    telling = [(name in names, holders) for name, holders in _holders()]
    differing = sorted((sum(has != (r.version in holders) for has, holders in telling), r.series) for r in RELEASES)
    (best, series), (second, _) = differing[0], differing[1]
    if best == second:
        return None
    how = CONTENT_SOURCE if best == 0 else f"{CONTENT_SOURCE}, the nearest: {best} of its ops differ"
    return series, how


def _content_of(path: str) -> str | None:
    try:
        return read_text(path, limit=_MOST_BYTES) if os.path.isfile(path) else None
    except UnreadableFile:
        return None


def resolve_for(path: str | None, override: str | None = None, override_source: str = "--torch-version",
                text: str | None = None) -> Resolved:
    """The profile for inputs at `path`: the override (`--torch-version`, opgen.torchVersion: named by
    `override_source`) if given, else the release detected from the path (its tree's version file), else the
    release recognised from the file's content (`text`, else read from `path` when it is a native_functions.yaml),
    else the default. An override that is no version is the caller's to refuse (see `resolve`)."""
    if override:
        given = resolve(override, override_source)
        if given is not None:
            return given
    found = detect(path) if path else None
    if found is not None:
        resolved = resolve(*found)
        if resolved is not None:
            return resolved
    if text is None and path and os.path.basename(path) == "native_functions.yaml":
        text = _content_of(path)
    recognised = recognise(text) if text else None
    if recognised is not None:
        return Resolved(_BY_SERIES[recognised[0]], Fit.KNOWN, recognised[0], recognised[1])
    return default_resolved()


# derivs: the release of derivatives.yaml and deprecated.yaml
def resolve_for_autograd(path: str | None, native_path: str | None, override: str | None = None,
                         override_source: str = "--torch-version") -> Resolved:
    """The profile for a derivatives.yaml or deprecated.yaml, found as for a native_functions.yaml (the
    override, else its tree's version.txt or packaged torch/version.py); a file whose tree says none takes the
    release of the native_functions.yaml it is resolved against."""
    resolved = resolve_for(path, override, override_source)
    if resolved.source == default_resolved().source and native_path:
        return resolve_for(native_path, override, override_source)
    return resolved


def release_tags(resolved: Resolved) -> frozenset[str] | None:
    """The tags of the found release's own tags.yaml (release_ops.TAGS), for a native_functions.yaml with none
    beside it; None when no release was found for it (the default) or it is not one of those known."""
    from .release_ops import TAGS  # noqa: PLC0415  (a table, only read for a file without its tags.yaml)

    if resolved.source == default_resolved().source or resolved.fit is not Fit.KNOWN:
        return None
    names = TAGS.get(resolved.release.version)
    return frozenset(names) if names is not None else None


def release_diagnostics(resolved: Resolved) -> tuple[Diagnostic, ...]:
    """What a native_functions.yaml of a release other than a known one gets on its first line: OPG950
    (information: checked as the newest) or OPG951 (an error: older releases are not checked)."""
    note = resolved.note
    if note is None:
        return ()
    return (diag("OPG950" if resolved.fit is Fit.NEWER else "OPG951", Span.point(0, 0), note),)


# ---------------------------------------------------------------- operators across releases

def _events(op: str) -> list[tuple[Release, str]]:
    """(release, "added" / "removed" / "changed") for an op name.overload, oldest first."""
    from .release_ops import CHANGES  # noqa: PLC0415  (a table, only read for migration notes)

    out = []
    for release in RELEASES[1:]:
        added, removed, changed = CHANGES.get(release.version, ((), (), ()))
        for kind, names in (("added", added), ("removed", removed), ("changed", changed)):
            if op in names:
                out.append((release, kind))
    return out


def _previous(release: Release) -> Release:
    return RELEASES[max(RELEASES.index(release) - 1, 0)]


def migration_note(op: str, release: Release) -> str | None:
    """Why `release` lacks the op `op` (name.overload) another known release has: "'cholesky' was removed in
    torch 2.14 (torch 2.13 has it)"; None when no known release has it."""
    events = [(r, kind) for r, kind in _events(op) if kind != "changed"]
    if not events:
        return None
    at = RELEASES.index(release)
    removed = [r for r, kind in events if kind == "removed" and RELEASES.index(r) <= at]
    if removed:
        gone = removed[-1]
        return f"'{op}' was removed in {gone} ({_previous(gone)} has it); this is {release}"
    added = [r for r, kind in events if kind == "added" and RELEASES.index(r) > at]
    if added:
        return f"'{op}' was added in {added[0]}; this is {release}"
    return None


def schema_change_note(op: str, release: Release) -> str | None:
    """"the schema of 'op' changed in torch 2.14", for the latest change up to `release` (the release an
    older backend or kernel may have been written against); None when it never changed."""
    at = RELEASES.index(release)
    changed = [r for r, kind in _events(op) if kind == "changed" and RELEASES.index(r) <= at]
    if not changed:
        return None
    return f"the schema of '{op}' changed in {changed[-1]} (from {_previous(changed[-1])}'s)"


def torch_cpu_cuda_kernel_op(kernel: str) -> str | None:
    """The op (name.overload) a release's own yaml registers a CUDA kernel defined in torch_cpu for."""
    return _CUDA_KERNELS_IN_TORCH_CPU_2_15.get(kernel)


def versions_text() -> str:
    """For `opgen --version`: every release known."""
    return ", ".join(r.version for r in RELEASES)
