"""`opgen format FILE...`: PyTorch's format of native_functions.yaml (the NATIVEFUNCTIONS lint's round trip)."""

from __future__ import annotations

import argparse
import os
import stat
import sys

from .. import status
from ..analysis.pytorch_format import LINT_NAME, LoadFailure, round_trip, unified_diff
from ..codegen.writer import write_atomic
from ..input_file import UnreadableFile, read_text


def add_format_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fmt = sub.add_parser("format", help=f"rewrite native_functions.yaml as PyTorch's {LINT_NAME} lint wants it",
                         description=f"Round-trip each file through ruamel.yaml as PyTorch's {LINT_NAME} lint does "
                                     "(`lintrunner -a` applies the same text) and write the result back, atomically "
                                     "and only when it changed. Exit 1 when a file cannot be read by ruamel, or with "
                                     "--check / --diff when a file would change.")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    mode = fmt.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="write nothing; list the files that would change")
    mode.add_argument("--diff", action="store_true", help="write nothing; print what would change as a unified diff")
    fmt.set_defaults(run=run_format)


def run_format(args: argparse.Namespace) -> int:
    changed: list[str] = []
    failed = unreadable = 0
    for path in args.files:
        try:
            text = read_text(path)
        except UnreadableFile as exc:
            print(f"opgen: {exc}", file=sys.stderr)
            unreadable += 1
            continue
        formatted = round_trip(text)
        if isinstance(formatted, LoadFailure):
            where = f":{formatted.line + 1}" if formatted.line is not None else ""
            print(f"error: {path}{where}: ruamel.yaml cannot read it ({LINT_NAME} fails): {formatted.message}",
                  file=sys.stderr)
            failed += 1
            continue
        if formatted == text:
            continue
        changed.append(path)
        if args.diff:
            sys.stdout.write(unified_diff(text, formatted, path))
        elif args.check:
            print(f"Would reformat: {path}")
        else:
            mode = os.stat(path).st_mode
            write_atomic(path, formatted.encode("utf-8"))
            os.chmod(path, stat.S_IMODE(mode))  # the new file keeps the old one's permissions
    unchanged = len(args.files) - len(changed) - failed - unreadable
    verb = "would be reformatted" if args.check or args.diff else "reformatted"
    print(f"{len(changed)} file(s) {verb}, {unchanged} file(s) left unchanged", file=sys.stderr)
    if unreadable:
        return status.USAGE
    if failed or ((args.check or args.diff) and changed):
        return status.INPUT_ERRORS
    return status.CLEAN
