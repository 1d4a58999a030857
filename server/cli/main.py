"""The `opgen` command line: one subcommand a module, put together here."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from .. import TORCHGEN_VERSION, VERSION_TEXT
from ..releases import DEFAULT, versions_text
from .bc import add_bc_parser
from .check import add_check_parser
from .coverage import add_coverage_parser
from .explain import add_explain_parser
from .format import add_format_parser
from .generate import add_generate_parser
from .generate_backend import add_generate_backend_parser
from .generate_lazy import add_generate_lazy_parser
from .scaffold import add_scaffold_parser
from .upgrade import add_upgrade_parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opgen", description="Check and generate PyTorch operator yaml "
                                                               f"(matches torchgen {TORCHGEN_VERSION} unless the "
                                                               "inputs or --torch-version name another release).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"opgen {VERSION_TEXT}\ntorch releases known: {versions_text()} "
                                f"(default {DEFAULT.version})")
    sub = parser.add_subparsers(dest="command", required=True)
    add_bc_parser(sub)
    add_check_parser(sub)
    add_coverage_parser(sub)
    add_explain_parser(sub)
    add_format_parser(sub)
    add_generate_parser(sub)
    add_generate_backend_parser(sub)
    add_generate_lazy_parser(sub)
    add_scaffold_parser(sub)
    add_upgrade_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


def run() -> NoReturn:
    """The process entry point: main(), then exit without tearing the heap down. Freeing a parsed
    native_functions.yaml object by object at interpreter exit costs about 0.1 s of CPU, a fifth of a
    generate-backend run, for memory the OS takes back at once anyway; files are closed by then."""
    exit_with(main())


def exit_with(code: int) -> NoReturn:
    """Flush stdout and stderr (a closed pipe makes the status non-zero), then leave at once (see run)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said on it
            code = code or 1
    os._exit(code)
