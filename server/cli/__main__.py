"""`python -m opgen_lsp.cli`: the `opgen` command."""

from .main import run

run()
