"""The releases' changelog folds to exactly the profiles opgen had when each release was written as a snapshot.

Until torch 2.5 was the oldest, every profile was a `replace()` of a neighbour's (2.13 the base, both ways). The
snapshots below are those definitions as they were, field for field; the changelog (server/releases/changelog.py)
must give each release the same values (a field added since, for torch 2.4, is not in the snapshots; 2.4 itself is
held to its own torchgen by the matrix, tests/conformance/test_release_matrix.py). Then the fold's own rules.
"""

from __future__ import annotations

from dataclasses import fields

import pytest

from opgen_lsp.releases import RELEASES, Release, release_at
from opgen_lsp.releases.changelog import BEFORE, CHANGELOG, added, change, folded, removed
from opgen_lsp.releases.profile import AUTOGRAD_2_2, CompositeRegistrations

_NULLABLE_2_6 = frozenset({"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                           "_scaled_dot_product_cudnn_attention", "convolution_backward"})
_NULLABLE_2_7 = _NULLABLE_2_6 | {"_scaled_dot_product_fused_attention_overrideable"}
_NULLABLE_2_9 = _NULLABLE_2_7 | {
    "_functional_sym_constrain_range", "_scaled_dot_product_efficient_attention_backward",
    "_thhn_fused_lstm_cell_backward_impl", "grid_sampler_2d_backward", "grid_sampler_3d_backward", "linear_backward"}
_SKIPPED_2_6 = frozenset({"record_stream", "resize_", "resize_as_", "_fill_mem_eff_dropout_mask_"})
_SKIPPED_2_12 = _SKIPPED_2_6 | {"_flash_attention_forward_no_dropout_inplace"}
_SKIPPED_2_15 = _SKIPPED_2_12 | {"_cudnn_attention_forward_no_dropout_inplace"}
_HAND_BOUND_2_9 = frozenset({"sym_is_contiguous"})
_HAND_BOUND_2_12 = _HAND_BOUND_2_9 | {"dim", "get_device", "is_contiguous", "numel", "storage_offset"}
_CUDA_IN_CPU_2_15 = frozenset({
    "count_nonzero_cuda", "log_sigmoid_backward_cuda", "log_sigmoid_backward_cuda_out", "triton_multi_head_attention",
    "NestedTensor_softmax_dropout_cuda", "masked_fill__quantized_cuda", "_index_put_impl_quantized_cuda_"})


def _then(base: dict[str, object], **changed: object) -> dict[str, object]:
    return {**base, **changed}


_S2_13: dict[str, object] = dict(
    version="2.13.0", generation_verified=True, template_blocks_strip_lines=True,
    functionalization_view_meta_classes=True, writes_aten_c_shim=True,
    inplace_view_comment_says_runnin=False, fallback_ops_versioned=True,
    named_tensor_types=False, refuses_const_ref_mutable_out=True, philox_ops_need_no_seeded_tag=False,
    skipped_by_functionalization=_SKIPPED_2_12, generated_variants_tagged_by_kind=True,
    functionalization_registers_composite_views=True, structured_outputs_propagate_names=False,
    xpu_family_waits_for_flag=False, structured_xpu_kernels_export_xpu=True, device_family_kernel_exports=False,
    cuda_kernels_in_torch_cpu=frozenset(), owning_types_hold_tensors_by_value=False, writes_native_aot_stubs=False,
    single_output_view_replay=False, fallback_variants_carry_since=True, lazy_to_string_moves_stream=True,
    aoti_nullable_returns=_NULLABLE_2_9, cumulative_out_ops=frozenset({"cumsum.out", "cumprod.out"}),
    aoti_shims_follow_dispatch_keys=False, aoti_shims_for_every_device=True, aoti_tensors_resolve_dispatch_flags=True,
    aoti_str_is_std_string_view=True, aoti_returns_indented_with_tabs=True, aoti_tensor_return_ends_twice=False,
    aoti_endif_names_guard=True, register_dispatch_key_sharded=True, dispatch_helpers_per_definitions_block=False,
    dispatch_keys_unknown=frozenset(), meta_reference_can_be_disabled=True, registration_declarations_without_at=False,
    outputs_list_name_on_set_line=False, enum_tag_in_core=False,
    # the fields that had defaults (2.13's values)
    python_bindings_skip_hand_bound=_HAND_BOUND_2_12, node_compiled_args_const=True, const_quantizer_ptr_type=False,
    refuses_python_keyword_argument_names=True, core_composite_ops_get_generated_variants=True,
    generated_variants_based_on_mutable=True, operator_names_static_constexpr=True,
    symint_templates_use_is_same_v=True, registration_blocks_end_in_semicolon=False, lazy_init_names_the_device=True,
    structured_xpu_outputs_guard_device=True, lazy_to_meta_makes_optionals=False,
    rocm_guards_masquerade_as_cuda=False, dispatch_stub_macros_end="", gen_py_takes_mtia=True, gen_py_takes_xpu=True,
    gen_py_takes_extend_aoti_c_shim=True, backend_dispatch_keys=frozenset(),
)
_S2_12 = _then(_S2_13, version="2.12.1", named_tensor_types=True, generated_variants_tagged_by_kind=False,
               structured_outputs_propagate_names=True, fallback_variants_carry_since=False,
               lazy_to_string_moves_stream=False,
               cumulative_out_ops=frozenset({"cumsum.out", "cumprod.out", "cumsum.dimname_out", "cumprod.dimname_out"}))
_S2_11 = _then(_S2_12, version="2.11.0", skipped_by_functionalization=_SKIPPED_2_6, cumulative_out_ops=frozenset(),
               python_bindings_skip_hand_bound=_HAND_BOUND_2_9, enum_tag_in_core=True)
_S2_10 = _then(_S2_11, version="2.10.0", rocm_guards_masquerade_as_cuda=True)
_S2_9 = _then(_S2_10, version="2.9.1", functionalization_registers_composite_views=False)
_S2_7 = _then(_S2_9, version="2.7.1", functionalization_view_meta_classes=False, writes_aten_c_shim=False,
              aoti_nullable_returns=_NULLABLE_2_7, template_blocks_strip_lines=False,
              inplace_view_comment_says_runnin=True, fallback_ops_versioned=False,
              python_bindings_skip_hand_bound=frozenset(), aoti_shims_follow_dispatch_keys=True,
              aoti_shims_for_every_device=False, aoti_str_is_std_string_view=False,
              aoti_returns_indented_with_tabs=False, aoti_tensor_return_ends_twice=True, aoti_endif_names_guard=False,
              outputs_list_name_on_set_line=True, gen_py_takes_mtia=False,
              dispatch_keys_unknown=frozenset({"NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS"}))
_S2_8 = _then(_S2_7, version="2.8.0", template_blocks_strip_lines=True, inplace_view_comment_says_runnin=False,
              fallback_ops_versioned=True, aoti_shims_follow_dispatch_keys=False, aoti_shims_for_every_device=True,
              aoti_str_is_std_string_view=True, aoti_returns_indented_with_tabs=True,
              aoti_tensor_return_ends_twice=False, aoti_endif_names_guard=True, outputs_list_name_on_set_line=False,
              dispatch_keys_unknown=frozenset({"SparseMPS", "SparseCsrMPS"}), gen_py_takes_mtia=True)
_S2_14 = _then(_S2_13, version="2.14.1", xpu_family_waits_for_flag=True, structured_xpu_kernels_export_xpu=False,
               owning_types_hold_tensors_by_value=True)
_S2_15 = _then(_S2_14, version="2.15.0", philox_ops_need_no_seeded_tag=True, skipped_by_functionalization=_SKIPPED_2_15,
               device_family_kernel_exports=True, cuda_kernels_in_torch_cpu=_CUDA_IN_CPU_2_15,
               writes_native_aot_stubs=True, single_output_view_replay=True)
_S2_6 = _then(_S2_7, version="2.6.0", refuses_const_ref_mutable_out=False, aoti_nullable_returns=_NULLABLE_2_6,
              node_compiled_args_const=False, aoti_tensors_resolve_dispatch_flags=False,
              register_dispatch_key_sharded=False, dispatch_helpers_per_definitions_block=True,
              dispatch_keys_unknown=frozenset({"NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS", "SparseCsrXPU"}),
              meta_reference_can_be_disabled=False, registration_declarations_without_at=True)
_S2_5 = _then(_S2_6, version="2.5.1", core_composite_ops_get_generated_variants=False,
              generated_variants_based_on_mutable=False, operator_names_static_constexpr=False,
              symint_templates_use_is_same_v=False, registration_blocks_end_in_semicolon=True,
              lazy_init_names_the_device=False, dispatch_stub_macros_end=";", gen_py_takes_xpu=False,
              structured_xpu_outputs_guard_device=False, structured_xpu_kernels_export_xpu=False,
              refuses_python_keyword_argument_names=False, gen_py_takes_extend_aoti_c_shim=False,
              lazy_to_meta_makes_optionals=True, const_quantizer_ptr_type=True,
              dispatch_keys_unknown=frozenset({"NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS", "SparseCsrXPU",
                                               "SparseXPU", "NestedTensorXPU"}))
SNAPSHOTS = (_S2_5, _S2_6, _S2_7, _S2_8, _S2_9, _S2_10, _S2_11, _S2_12, _S2_13, _S2_14, _S2_15)


def _profile(version: str) -> Release:
    return next(r for r in RELEASES if r.version == version)


# The snapshots' fields that are now one AOTI shim form's (Release.aoti_shim_form), by their names there.
_SHIM_FORM = {"fallback_ops_versioned": "fallback_ops_versioned",
              "aoti_shims_follow_dispatch_keys": "follow_dispatch_keys", "aoti_shims_for_every_device": "for_every_device",
              "aoti_str_is_std_string_view": "str_is_std_string_view",
              "aoti_returns_indented_with_tabs": "returns_indented_with_tabs",
              "aoti_tensor_return_ends_twice": "tensor_return_ends_twice", "aoti_endif_names_guard": "endif_names_guard"}


# The snapshots' fields that are now the autograd form's (Release.autograd), by their names there.
_AUTOGRAD_FORM = {"derivatives_save_sym_numel": "saves_sym_numel", "derivatives_name_view_copies": "names_view_copies",
                  "node_optional_strings_are_std": "node_optional_strings_are_std",
                  "node_compiled_args_const": "node_compiled_args_const"}


def _flat(profile: Release) -> dict[str, object]:
    """The profile's values under the snapshots' names."""
    values = {f.name: getattr(profile, f.name) for f in fields(profile) if f.name not in {"aoti_shim_form", "autograd"}}
    # The snapshots' boolean, now one value of a three-valued form (2.0 registers every composite op).
    views = profile.functionalization_registers_composite is CompositeRegistrations.VIEWS
    return {**values, **{old: getattr(profile.aoti_shim_form, new) for old, new in _SHIM_FORM.items()},
            **{old: getattr(profile.autograd, new) for old, new in _AUTOGRAD_FORM.items()},
            "functionalization_registers_composite_views": views}


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda s: str(s["version"]))
def test_every_field_of_the_release_as_its_snapshot_had_it(snapshot: dict[str, object]) -> None:
    profile = _flat(_profile(str(snapshot["version"])))
    differing = {name: (value, snapshot[name]) for name, value in profile.items()
                 if name in snapshot and value != snapshot[name]}
    assert differing == {}


def test_the_snapshots_name_every_field_of_a_profile_but_those_added_since() -> None:
    # A field added for an older release than 2.5 has 2.5's value from 2.5 on; every other field is in each snapshot.
    names = set(_flat(RELEASES[0]))
    assert all(set(s) <= names for s in SNAPSHOTS)
    assert [r.version for r in RELEASES if r.version in {str(s["version"]) for s in SNAPSHOTS}] == \
        [str(s["version"]) for s in SNAPSHOTS]


# ---------------------------------------------------------------- the fold

def test_each_release_is_its_entry_folded_over_the_ones_before() -> None:
    assert [r.version for r in RELEASES] == [entry.version for entry in CHANGELOG]
    for entry, profile in zip(CHANGELOG, RELEASES):
        assert release_at(entry.version) is profile and release_at(profile.series) is profile
    # A change holds from its release on: 2.6 refuses keyword argument names, 2.5 and 2.4 do not.
    assert [r.series for r in RELEASES if not r.refuses_python_keyword_argument_names] == ["1.13", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5"]


def test_a_set_changes_by_the_names_added_or_removed() -> None:
    keys = {r.series: r.dispatch_keys_unknown for r in RELEASES}
    assert keys["2.4"] - keys["2.5"] == {"XPU"} and keys["2.5"] - keys["2.6"] == {"SparseXPU", "NestedTensorXPU"}
    assert keys["2.9"] == frozenset()
    # Both in one release: 2.1 lists four functional ops more and drops _nested_tensor_offsets.
    ops = {r.series: r.functional_ops_without_out_variant for r in RELEASES}
    assert ops["2.1"] - ops["2.0"] == {"_assert_async.msg", "sym_constrain_range", "sym_constrain_range_for_size",
                                       "_nested_tensor_storage_offsets"}
    assert ops["2.0"] - ops["2.1"] == {"_nested_tensor_offsets"}


def test_the_fold_refuses_a_change_that_changes_nothing_or_names_no_field() -> None:
    with pytest.raises(ValueError, match="2.6.0: refuses_python_keyword_argument_names is False already"):
        list(folded(BEFORE, (change("2.4.1"), change("2.5.1", symbool_type=True),
                             change("2.6.0", refuses_python_keyword_argument_names=False))))
    # A form (a record) is compared by value: setting the one a release has already is refused too.
    with pytest.raises(ValueError, match="2.3.1: autograd is AutogradForm"):
        list(folded(BEFORE, (change("2.2.2", autograd=AUTOGRAD_2_2), change("2.3.1", autograd=AUTOGRAD_2_2))))
    with pytest.raises(ValueError, match="names no behaviour"):
        list(folded(BEFORE, (change("2.4.1", no_such_behaviour=True),)))
    with pytest.raises(ValueError, match="already has or never had"):
        list(folded(BEFORE, (change("2.4.1", dispatch_keys_unknown=removed("CPU")),)))
    with pytest.raises(ValueError, match="already has or never had"):  # each of a pair too
        list(folded(BEFORE, (change("2.4.1", dispatch_keys_unknown=(removed("XPU"), added("XPU", "SparseXPU"))),)))
    with pytest.raises(ValueError, match="BEFORE and the profile's fields differ"):
        list(folded({**BEFORE, "extra": 1}, (change("2.4.1"),)))
