"""The `opgen` command line."""

from __future__ import annotations

import argparse
import sys

from . import TORCHGEN_VERSION, __version__
from .report import RENDERERS


def _check(args: argparse.Namespace) -> int:
    from .analysis.check import check_paths

    result = check_paths(args.paths, args.tags)
    sys.stdout.write(RENDERERS[args.format](result.items))
    for note in result.notes:
        print(note, file=sys.stderr)
    if result.usage_error:
        return 2
    return 1 if result.has_errors else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opgen", description="Check and generate PyTorch operator yaml "
                                                               f"(matches torchgen {TORCHGEN_VERSION}).")
    parser.add_argument("--version", action="version", version=f"opgen {__version__} (torchgen {TORCHGEN_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report every mistake in native_functions.yaml / tags.yaml files")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to check")
    check.add_argument("--tags", metavar="F", help="tags.yaml to use (default: the one beside each file)")
    check.add_argument("--format", choices=sorted(RENDERERS), default="text")
    check.set_defaults(run=_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
