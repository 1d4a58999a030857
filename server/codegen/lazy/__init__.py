"""gen_lazy_tensor's files: the plan (`plan`) and the run (`run`). Its per-op code is in `pieces/lazy/`, its check
of a backend yaml (shape-inference header, non_native section) in `analysis/lazy/`."""
