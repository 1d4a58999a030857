"""`python -m opgen_lsp.gen`: a drop-in for `python -m torchgen.gen` (gen.py's command line; see docs/build.md)."""

from .cli.gen_py import run

if __name__ == "__main__":
    run()
