"""gen_lazy_tensor: IR node classes, lazy kernels, TorchScript lowerings, shape-inference checks."""

import os

# gen_lazy_tensor's --shape-inference-hdr default, relative to where it runs (a PyTorch checkout).
IN_TREE_SHAPE_HEADER = os.path.join("torch", "csrc", "lazy", "core", "shape_inference.h")
