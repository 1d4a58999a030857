"""The `opgen` command line: one subcommand a module, put together here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn, cast

from .. import TORCHGEN_VERSION, VERSION_TEXT
from ..releases import DEFAULT, versions_text

# Each subcommand's module (cli/<name>.py, "-" as "_") and its add_<name>_parser. A run imports its own command's
# module only: what the others import (the generators, the formatter) is no part of `opgen check`'s start-up.
COMMANDS = ("bc", "cache", "check", "coverage", "explain", "format", "generate", "generate-backend", "generate-lazy",
            "scaffold", "upgrade")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with a known command, that command's part only (what a run of it parses)."""
    parser = argparse.ArgumentParser(prog="opgen", description="Check and generate PyTorch operator yaml "
                                                               f"(matches torchgen {TORCHGEN_VERSION} unless the "
                                                               "inputs or --torch-version name another release).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"opgen {VERSION_TEXT}\ntorch releases known: {versions_text()} "
                                f"(default {DEFAULT.version})")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in (command,) if command in COMMANDS else COMMANDS:
        module, add = name.replace("-", "_"), f"add_{name.replace('-', '_')}_parser"
        # (the import statement's own machinery, which -X importtime times, as it times the other imports)
        adder = getattr(__import__(f"{__package__}.{module}", fromlist=[add]), add)
        cast(Callable[[argparse._SubParsersAction], None], adder)(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # (the top level's own options take no value, so the first word that is not an option names the command)
    command = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
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
