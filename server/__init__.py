"""opgen-lsp: checker, code generator and language server for PyTorch operator yaml."""

__version__ = "0.1.0"

# The torchgen release whose behaviour opgen reproduces.
TORCHGEN_VERSION = "2.13.0"
