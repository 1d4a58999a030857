"""The torch releases opgen knows, as a changelog: what each release's torchgen changed, stated once.

`BEFORE` is every behaviour as the oldest release known has it; `CHANGELOG` lists the releases oldest first, each
with the fields (releases.profile.Release) it changes, and `RELEASES` folds them into one profile per release. A
set-valued behaviour changes by `Added(...)` / `Removed(...)` names. Folding refuses an unknown field and a change
that changes nothing, so a fact cannot be stated twice. docs/releases.md says how to add a release.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from ..frozen import record
from .profile import (
    AOTI_SHIMS_2_8,
    AUTOGRAD_1_13,
    AUTOGRAD_2_0,
    AUTOGRAD_2_1,
    AUTOGRAD_2_2,
    AUTOGRAD_2_3,
    AUTOGRAD_2_5,
    AUTOGRAD_2_7,
    C10_OPTIONAL,
    C10_OPTIONAL_1_13,
    C10_OPTIONAL_2_0,
    C10_OPTIONAL_2_1,
    C10_OPTIONAL_2_2,
    EVERY_OP_AOTI_SHIMS,
    OLDER_AOTI_SHIMS,
    REAPPLY_VIEWS_INVERSES,
    RETURN_MODE_INVERSES,
    STD_OPTIONAL,
    CompositeRegistrations,
    Release,
    XlaDataPropagation,
)

# The CUDA-family kernels gen.py 2.15 knows are defined in torch_cpu (their declarations say TORCH_API), and
# the op its own native_functions.yaml registers each for: gen.py fails when no CUDA-family key registers one.
CUDA_KERNELS_IN_TORCH_CPU_2_15 = {
    "count_nonzero_cuda": "count_nonzero.dim_IntList", "log_sigmoid_backward_cuda": "log_sigmoid_backward",
    "log_sigmoid_backward_cuda_out": "log_sigmoid_backward.grad_input",
    "triton_multi_head_attention": "_triton_multi_head_attention",
    "NestedTensor_softmax_dropout_cuda": "_nested_tensor_softmax_with_shape",
    "masked_fill__quantized_cuda": "masked_fill_.Scalar", "_index_put_impl_quantized_cuda_": "_index_put_impl_"}

# torchgen 1.13's functional ops that cannot get an out= variant (each returns no tensor).
FUNCTIONAL_OPS_WITHOUT_OUT_VARIANT_1_13 = frozenset({
    "_assert_async", "_dimI", "_dimV", "_has_same_storage_numel", "_linalg_check_errors", "_local_scalar_dense",
    "_nested_tensor_from_mask_left_aligned", "_nested_tensor_offsets", "_nnz", "_use_cudnn_ctc_loss",
    "_use_cudnn_ctc_loss.Tensor", "_validate_compressed_sparse_indices", "allclose", "dense_dim", "equal",
    "is_coalesced", "is_pinned", "is_same_size", "is_set_to", "q_per_channel_axis", "q_scale",
    "q_zero_point", "qscheme", "record_stream", "sparse_dim"
})

# The SparseCsr keys (the functionality and its per-backend keys): torchgen's DispatchKey has them from 2.3.
SPARSE_CSR_KEYS = ("SparseCsr", "SparseCsrHIP", "SparseCsrHPU", "SparseCsrIPU", "SparseCsrLazy", "SparseCsrMPS",
                   "SparseCsrMTIA", "SparseCsrMeta", "SparseCsrPrivateUse1", "SparseCsrPrivateUse2",
                   "SparseCsrPrivateUse3", "SparseCsrVE", "SparseCsrXLA", "SparseCsrXPU")


@record
class Added:
    """Names a set-valued behaviour gains in a release."""

    names: frozenset[str]


@record
class Removed:
    """Names a set-valued behaviour loses in a release."""

    names: frozenset[str]


def added(*names: str) -> Added:
    return Added(frozenset(names))


def removed(*names: str) -> Removed:
    return Removed(frozenset(names))


@record
class Change:
    """One release and what its torchgen changed from the release before it (field name, new value or delta)."""

    version: str
    changes: tuple[tuple[str, object], ...]


def change(version: str, **changes: object) -> Change:
    return Change(version, tuple(changes.items()))


# Every behaviour as torch 1.13.1's torchgen has it (the oldest release known).
BEFORE: dict[str, object] = dict(
    generation_verified=True,
    # reading native_functions.yaml
    named_tensor_types=True, refuses_const_ref_mutable_out=False, philox_ops_need_no_seeded_tag=False,
    skipped_by_functionalization=frozenset({"record_stream", "resize_"}),
    functional_ops_without_out_variant=FUNCTIONAL_OPS_WITHOUT_OUT_VARIANT_1_13, seeded_tag_by_dropout_arguments=False,
    inplace_view_exempt_ops=frozenset({"resize_"}), device_index_type=False,
    dispatch_key_names_unknown=frozenset({
        "ADInplaceOrView", "FuncTorchDynamicLayerBackMode", "FuncTorchDynamicLayerFrontMode", "Functionalize",
        "AutocastCPU", "AutocastCUDA", "AutocastXPU", "AutogradMTIA", "BatchedNestedTensor", "Conjugate", "Dense",
        "FuncTorchBatched", "FuncTorchBatchedDecomposition", "FuncTorchGradWrapper", "FuncTorchVmapMode", "MAIA",
        "MTIA", "Negative", "NestedTensor", "NestedTensorMTIA", "PreDispatch", "PythonDispatcher", "PythonTLSSnapshot",
        "QuantizedMTIA", "SparseMTIA", *SPARSE_CSR_KEYS}),
    scalar_type_names_unknown=frozenset({"Float8_e5m2", "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz",
                                         "Float8_e8m0fnu"}),
    set_passes_inplace_view_rules=False, aten_ops_get_pt2_compliant_tag=False,
    generated_variants_keep_tags=frozenset({"nondeterministic_seeded"}), tags_as_comma_separated_string=True,
    dispatch_kernel_namespace_levels=2, dispatch_table_rules_count_keys_as_written=False,
    generated_variants_tagged_by_kind=False, const_quantizer_ptr_type=True, refuses_python_keyword_argument_names=False,
    core_composite_ops_get_generated_variants=False, generated_variants_based_on_mutable=False,
    # gen.py and the generators beside it
    template_blocks_strip_lines=False, view_inverse_form=REAPPLY_VIEWS_INVERSES, view_meta_knows_symbolic_inputs=False,
    noop_redispatch_return_ends_twice=True, view_meta_knows_multi_output=False,
    functionalization_leaves_set_source_tensor=False, meta_comment_says_technicaly=True, schema_tags_shared=False,
    schema_tags_sorted=False, schema_fragment_namespaces=frozenset(),
    out_wrappers_handle_no_returns=False, deferred_registration_declared=False, lazy_ts_optional_keyword_values=False,
    functionalization_view_meta_classes=False, inplace_view_comment_says_runnin=True,
    writes_aoti_c_shims=False, writes_aten_c_shim=False, functionalization_registers_composite=CompositeRegistrations.EVERY_OP,
    structured_outputs_propagate_names=True, structured_outputs_exclusively_owned=True,
    xpu_family_waits_for_flag=False, structured_xpu_kernels_export_xpu=False,
    device_family_kernel_exports=False, cuda_kernels_in_torch_cpu=frozenset(), owning_types_hold_tensors_by_value=False,
    writes_native_aot_stubs=False, single_output_view_replay=False, fallback_variants_carry_since=False,
    aoti_nullable_returns=frozenset({"_scaled_dot_product_flash_attention"}),
    lazy_ir_keeps_generators=False, lazy_to_string_moves_stream=False, cumulative_out_ops=frozenset(), cpp_spelling=C10_OPTIONAL_1_13,
    aoti_shim_form=EVERY_OP_AOTI_SHIMS, aoti_tensors_resolve_dispatch_flags=False,
    register_dispatch_key_sharded=False, dispatch_helpers_per_definitions_block=True,
    dispatch_wrappers_named_by_key=False,
    dispatch_keys_unknown=frozenset({"NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS", "SparseCsrXPU",
                                     "SparseXPU", "NestedTensorXPU", "XPU", "SparseCsrMeta"}),
    meta_reference_can_be_disabled=False, functionalization_reference_meta_for_xla_lazy_only=False,
    registration_declarations_without_at=True,
    outputs_list_name_on_set_line=True, enum_tag_in_core=True,
    operator_names_static_constexpr=False, symint_templates_use_is_same_v=False, functions_symint_templates=False,
    registration_blocks_end_in_semicolon=True, lazy_init_names_the_device=False,
    structured_xpu_outputs_guard_device=False, lazy_to_meta_makes_optionals=True, rocm_guards_masquerade_as_cuda=True,
    dispatch_stub_macros_end=";", cpp_default_qualifies_memory_format=False,
    registration_helpers_silence_unused=False, view_copy_kernels_include_group_natives=False,
    view_copy_kernels_by_backend_index=False,
    functionalization_xla_data=XlaDataPropagation.NONE, vmap_unwraps_by_structured_binding=False, vmap_checks_escaped_layer=False,
    vmap_symint_return_overrides=frozenset(), lazy_ir_includes_std_optional=False,
    generated_comment_names_generator=False, device_keys_with_empty_functions=frozenset({"Meta", "CPU", "CUDA", "MPS"}),
    # derivatives.yaml and deprecated.yaml
    autograd=AUTOGRAD_1_13, python_bindings_skip_hand_bound=frozenset(),
    symbool_type=False, optional_tensor_returns=False,
    # gen.py's command line
    command_line_dashed_aliases=False, gen_py_takes_mtia=False, gen_py_takes_xpu=False, gen_py_takes_aoti_flags=False,
    gen_py_takes_extend_aoti_c_shim=False,
)

# Every release known, oldest first, with what its torchgen changed.
CHANGELOG: tuple[Change, ...] = (
    change("1.13.1"),
    change("2.0.1", dispatch_wrappers_named_by_key=True, autograd=AUTOGRAD_2_0,
           view_copy_kernels_by_backend_index=True, cpp_spelling=C10_OPTIONAL_2_0,
           functions_symint_templates=True, vmap_checks_escaped_layer=True,
           functionalization_reference_meta_for_xla_lazy_only=True,
           schema_fragment_namespaces=added("quantized", "quantized_decomposed"),
           tags_as_comma_separated_string=False, dispatch_kernel_namespace_levels=3, command_line_dashed_aliases=True,
           dispatch_table_rules_count_keys_as_written=True, generated_variants_keep_tags=added("view_copy"),
           functional_ops_without_out_variant=added("_chunk_grad_outputs_efficient_attention", "_fused_sdp_choice"),
           dispatch_key_names_unknown=removed("ADInplaceOrView", "FuncTorchDynamicLayerBackMode",
                                              "FuncTorchDynamicLayerFrontMode", "Functionalize")),
    change("2.1.2", seeded_tag_by_dropout_arguments=True, device_index_type=True, autograd=AUTOGRAD_2_1,
           inplace_view_exempt_ops=added("resize_as_"),
           dispatch_key_names_unknown=removed("MTIA", "AutogradMTIA", "QuantizedMTIA", "SparseMTIA", "NestedTensorMTIA",
                                              "FuncTorchBatched", "FuncTorchBatchedDecomposition",
                                              "FuncTorchGradWrapper", "FuncTorchVmapMode"),
           scalar_type_names_unknown=removed("Float8_e5m2", "Float8_e4m3fn"),
           skipped_by_functionalization=added("resize_as_", "_fill_mem_eff_dropout_mask_"),
           functional_ops_without_out_variant=(added("_assert_async.msg", "sym_constrain_range",
                                                     "sym_constrain_range_for_size", "_nested_tensor_storage_offsets"),
                                               removed("_nested_tensor_offsets")),
           structured_outputs_exclusively_owned=False, schema_tags_sorted=True, cpp_spelling=C10_OPTIONAL_2_1,
           out_wrappers_handle_no_returns=True, deferred_registration_declared=True,
           lazy_ts_optional_keyword_values=True,
           functionalization_registers_composite=CompositeRegistrations.NONE,
           functionalization_xla_data=XlaDataPropagation.PROPAGATE),
    change("2.2.2", cpp_spelling=C10_OPTIONAL_2_2, view_meta_knows_multi_output=True,
           functionalization_leaves_set_source_tensor=True, meta_comment_says_technicaly=False, schema_tags_shared=True,
           autograd=AUTOGRAD_2_2, lazy_ir_keeps_generators=True,
           optional_tensor_returns=True, aten_ops_get_pt2_compliant_tag=True,
           generated_variants_keep_tags=added("pt2_compliant_tag"),
           dispatch_key_names_unknown=removed("NestedTensor", "Dense", "Conjugate", "Negative", "BatchedNestedTensor"),
           scalar_type_names_unknown=removed("Float8_e5m2fnuz", "Float8_e4m3fnuz")),
    change("2.3.1", writes_aoti_c_shims=True,
           functional_ops_without_out_variant=added("_assert_scalar", "_cslt_sparse_mm_search", "_nested_get_ragged_idx",
                                                    "_print"), view_inverse_form=RETURN_MODE_INVERSES,
           noop_redispatch_return_ends_twice=False, cpp_spelling=C10_OPTIONAL, dispatch_keys_unknown=removed("SparseCsrMeta"),
           autograd=AUTOGRAD_2_3, set_passes_inplace_view_rules=True,
           dispatch_key_names_unknown=removed("PreDispatch", *SPARSE_CSR_KEYS)),
    change("2.4.1", cpp_spelling=STD_OPTIONAL, functional_ops_without_out_variant=added("_sink_tokens"),
           view_meta_knows_symbolic_inputs=True, aoti_shim_form=OLDER_AOTI_SHIMS,
           aoti_nullable_returns=added("_scaled_dot_product_efficient_attention",
                                       "_scaled_dot_product_cudnn_attention", "convolution_backward"),
           gen_py_takes_aoti_flags=True,
           dispatch_key_names_unknown=removed("AutocastCPU", "AutocastCUDA", "MAIA", "PythonDispatcher",
                                              "PythonTLSSnapshot")),
    change("2.5.1", dispatch_keys_unknown=removed("XPU"), cpp_default_qualifies_memory_format=True,
           registration_helpers_silence_unused=True, view_copy_kernels_include_group_natives=True,
           functionalization_xla_data=XlaDataPropagation.PROPAGATE_DIRECT, vmap_unwraps_by_structured_binding=True,
           vmap_symint_return_overrides=added("_scaled_dot_product_flash_attention",
                                              "_scaled_dot_product_cudnn_attention"),
           lazy_ir_includes_std_optional=True, generated_comment_names_generator=True,
           device_keys_with_empty_functions=added("XPU"), autograd=AUTOGRAD_2_5,
           symbool_type=True),
    change("2.6.0", refuses_python_keyword_argument_names=True,
           functional_ops_without_out_variant=added("_assert_tensor_metadata"), const_quantizer_ptr_type=False,
           core_composite_ops_get_generated_variants=True, generated_variants_based_on_mutable=True,
           operator_names_static_constexpr=True, symint_templates_use_is_same_v=True,
           registration_blocks_end_in_semicolon=False, lazy_init_names_the_device=True, dispatch_stub_macros_end="",
           structured_xpu_outputs_guard_device=True, structured_xpu_kernels_export_xpu=True,
           lazy_to_meta_makes_optionals=False, gen_py_takes_xpu=True, gen_py_takes_extend_aoti_c_shim=True,
           dispatch_keys_unknown=removed("SparseXPU", "NestedTensorXPU")),
    change("2.7.1", refuses_const_ref_mutable_out=True, scalar_type_names_unknown=removed("Float8_e8m0fnu"),
           autograd=AUTOGRAD_2_7,
           aoti_nullable_returns=added("_scaled_dot_product_fused_attention_overrideable"),
           aoti_tensors_resolve_dispatch_flags=True,
           register_dispatch_key_sharded=True, dispatch_helpers_per_definitions_block=False,
           meta_reference_can_be_disabled=True, registration_declarations_without_at=False,
           dispatch_keys_unknown=removed("SparseCsrXPU")),
    change("2.8.0", template_blocks_strip_lines=True, inplace_view_comment_says_runnin=False,
           outputs_list_name_on_set_line=False, gen_py_takes_mtia=True,
           dispatch_keys_unknown=removed("NestedTensorHPU", "MTIA"), device_keys_with_empty_functions=added("MTIA"),
           aoti_shim_form=AOTI_SHIMS_2_8),
    change("2.9.1", functionalization_view_meta_classes=True, writes_aten_c_shim=True,
           aoti_nullable_returns=added(
               "_functional_sym_constrain_range", "_scaled_dot_product_efficient_attention_backward",
               "_thhn_fused_lstm_cell_backward_impl", "grid_sampler_2d_backward", "grid_sampler_3d_backward",
               "linear_backward"),
           python_bindings_skip_hand_bound=added("sym_is_contiguous"),
           dispatch_keys_unknown=removed("SparseMPS", "SparseCsrMPS")),
    change("2.10.0", functionalization_registers_composite=CompositeRegistrations.VIEWS),
    change("2.11.0", rocm_guards_masquerade_as_cuda=False,
           functional_ops_without_out_variant=added("_use_miopen_ctc_loss", "_use_miopen_ctc_loss.Tensor"),
           vmap_symint_return_overrides=added("_scaled_dot_product_flash_attention_quantized")),
    change("2.12.1", skipped_by_functionalization=added("_flash_attention_forward_no_dropout_inplace"),
           cumulative_out_ops=added("cumsum.out", "cumprod.out", "cumsum.dimname_out", "cumprod.dimname_out"),
           python_bindings_skip_hand_bound=added("dim", "get_device", "is_contiguous", "numel", "storage_offset"),
           enum_tag_in_core=False),
    change("2.13.0", named_tensor_types=False, generated_variants_tagged_by_kind=True,
           structured_outputs_propagate_names=False, fallback_variants_carry_since=True,
           lazy_to_string_moves_stream=True, cumulative_out_ops=removed("cumsum.dimname_out", "cumprod.dimname_out"),
           dispatch_key_names_unknown=removed("AutocastXPU")),
    change("2.14.1", xpu_family_waits_for_flag=True, structured_xpu_kernels_export_xpu=False,
           owning_types_hold_tensors_by_value=True),
    change("2.15.0", philox_ops_need_no_seeded_tag=True,
           skipped_by_functionalization=added("_cudnn_attention_forward_no_dropout_inplace"),
           device_family_kernel_exports=True, cuda_kernels_in_torch_cpu=added(*CUDA_KERNELS_IN_TORCH_CPU_2_15),
           writes_native_aot_stubs=True, single_output_view_replay=True),
)


def _applied(values: dict[str, object], entry: Change) -> dict[str, object]:
    """`values` with `entry`'s changes; a ValueError (opgen's own bug, found on import) for an unknown field or a
    change that changes nothing."""
    out = dict(values)
    for name, new in entry.changes:
        if name not in out:
            raise ValueError(f"torch {entry.version}'s change names no behaviour of a profile: {name}")
        old = out[name]
        # A set may gain and lose names in one release: a tuple of Added / Removed, applied in turn.
        deltas = new if isinstance(new, tuple) and new and all(isinstance(d, (Added, Removed)) for d in new) else (new,)
        if isinstance(deltas[0], (Added, Removed)):
            for delta in deltas:
                assert isinstance(delta, (Added, Removed))
                if not isinstance(old, frozenset) or (delta.names & old if isinstance(delta, Added)
                                                      else delta.names - old):
                    raise ValueError(f"torch {entry.version}: {name} already has or never had {sorted(delta.names)}")
                old = old | delta.names if isinstance(delta, Added) else old - delta.names
            new = old
        elif new == old:
            raise ValueError(f"torch {entry.version}: {name} is {new!r} already")
        out[name] = new
    return out


def folded(before: dict[str, object], changelog: tuple[Change, ...]) -> Iterator[Release]:
    """The profile of each release of `changelog`, oldest first: its changes and every earlier one over `before`."""
    names = {f.name for f in fields(Release)} - {"version", "backend_dispatch_keys"}
    if set(before) != names:
        raise ValueError(f"BEFORE and the profile's fields differ: {sorted(set(before) ^ names)}")
    values = before
    for entry in changelog:
        values = _applied(values, entry)
        yield Release(version=entry.version, **values)  # type: ignore[arg-type]


RELEASES: tuple[Release, ...] = tuple(folded(BEFORE, CHANGELOG))
_BY_SERIES = {r.series: r for r in RELEASES}


def release_at(version: str) -> Release:
    """The profile of the known release `version` ("2.6" or "2.6.0"); a KeyError for one not known."""
    return _BY_SERIES[".".join(version.split(".")[:2])]
