"""gen_lazy_tensor: IR node classes, lazy kernels, TorchScript lowerings, shape-inference checks."""
