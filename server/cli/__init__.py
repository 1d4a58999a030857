"""The `opgen` command (`opgen = "opgen_lsp.cli:run"`), one module per subcommand; `python -m opgen_lsp.cli` runs it."""

from .main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
