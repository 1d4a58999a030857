"""opgen-lsp: checker, code generator and language server for PyTorch operator yaml."""

__version__ = "0.1.0"

# The torchgen release opgen follows when the inputs name none (server/releases/ knows the others).
TORCHGEN_VERSION = "2.13.0"

# How opgen names itself to users and clients: its own version and the reference it follows.
VERSION_TEXT = f"{__version__} (torchgen {TORCHGEN_VERSION})"
