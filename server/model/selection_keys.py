"""The top-level keys of an operator selection yaml (torchgen's SelectiveBuilder): `opgen check` tells such a file
by its first key before reading it, so this module loads nothing."""

TOP_LEVEL_KEYS = ("include_all_non_op_selectives", "include_all_operators", "debug_info", "operators",
                  "kernel_metadata", "et_kernel_metadata", "custom_classes", "build_features")
