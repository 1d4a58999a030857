"""gen_lazy_tensor's per-op code: IR node classes (`ir`), lazy kernels (`kernels`), from its schema of an op
(`schema`), and the settings and the pieces of a whole yaml (`code`). Functions of the model and the release only:
the check of a lazy backend yaml (analysis/lazy/), the server's hover and the generator (codegen/lazy/) share them."""
