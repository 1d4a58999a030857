"""The names PyTorch gives its autograd yamls: a check tells them apart by name before parsing them, so this
module loads nothing (`opgen check` of a native_functions.yaml imports it, not the parsers)."""

DERIVATIVES_YAML = "derivatives.yaml"
DEPRECATED_YAML = "deprecated.yaml"
