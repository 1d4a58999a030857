# The AOTInductor fallback ops of the sample ATen folder, in the shape of torchgen's
# aoti/fallback_ops.py. opgen reads the two dicts as literals (it never runs this file).
#
# Each key is "namespace.name.overload" ("default" for the empty overload); its value lists
# the versions of the op's C shim: {} for one version, "vN": {"new_args": [...]} for a version
# that added arguments (older versions pass their defaults), and "since": "TORCH_VERSION_X_Y_Z"
# to guard a declaration by TORCH_FEATURE_VERSION.

# Shims calling a device's kernel (c_shim_cpu, c_shim_cuda, ...); a composite kernel serves every device.
inductor_fallback_ops: dict[str, dict[str, object]] = {
    "aten.clip_range.default": {},
    "aten.count_above.default": {"v2": {"new_args": ["keepdim"], "since": "TORCH_VERSION_2_13_0"}},
    "aten.fill_ramp_.default": {},
    "aten.gather_rows.default": {},
    "aten.halve.default": {},
    "aten.make_ramp.default": {},
    "aten.masked_pick.default": {},
    "aten.pad_to.default": {},
    "aten.smooth.out": {},
    "aten.span_stats.default": {},
    # Returns a list of tensors, which has no C form: it gets no shim.
    "aten._foreach_scale.default": {},
}

# Shims calling the op through the dispatcher (c_shim_aten).
aten_shimified_ops: dict[str, dict[str, object]] = {
    "aten.fold_view.default": {},
    "aten.narrow_band.default": {"since": "TORCH_VERSION_2_13_0"},
    "aten.scale.default": {},
}
