"""`opgen bc --base REF FILE`: which schema changes break backward or forward compatibility (PyTorch's BC check)."""

from __future__ import annotations

import argparse
import sys

from .. import status
from ..analysis.compat import change_diagnostics, parse_allow_list, schema_changes
from ..index.base_text import base_text
from ..input_file import UnreadableFile, read_text
from ..report import RENDERERS, FileDiagnostic
from .options import add_format_argument


def add_bc_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bc = sub.add_parser("bc", help="check schema changes for backward / forward compatibility",
                        description="Compare each func: of FILE with the same name.overload at REF, as PyTorch's "
                                    "check_forward_backward_compatibility.py does with c10's predicates: OPG209 where "
                                    "old callers break (exit 1, as the check fails), OPG210 where new callers would "
                                    "not work with the old build (reported, as the check only warns).")
    bc.add_argument("file", metavar="FILE", help="native_functions.yaml")
    bc.add_argument("--base", required=True, metavar="REF",
                    help="a git revision of FILE's repository (HEAD, main, a commit), or a torch release X.Y.Z "
                         "whose native_functions.yaml is in opgen's torchgen cache or installed")
    bc.add_argument("--allow-list", metavar="F",
                    help="a file of ALLOW_LIST rows as the check writes them: (\"aten::name regex\", "
                         "datetime.date(Y, M, D)[, \"argument regex\"]); rows past their date are ignored")
    add_format_argument(bc)
    bc.set_defaults(run=run_bc)


def run_bc(args: argparse.Namespace) -> int:
    try:
        current = read_text(args.file)
        allow = parse_allow_list(read_text(args.allow_list)) if args.allow_list else ()
    except UnreadableFile as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.USAGE
    base = base_text(args.file, args.base)
    if base.text is None:
        print(f"opgen: no base to compare with: {base.origin}", file=sys.stderr)
        return status.USAGE
    changes = schema_changes(base.text, current, allow)
    found = change_diagnostics(changes, current, args.base)
    sys.stdout.write(RENDERERS[args.format]([FileDiagnostic(args.file, d) for d in found]))
    backward = sum(d.code == "OPG209" for d in found)
    forward = sum(d.code == "OPG210" for d in found)
    allowed = sum(c.allowed for c in changes)
    print(f"{len(changes)} schema(s) changed or removed since {base.origin}: {backward} break backward "
          f"compatibility, {forward} break forward compatibility, {allowed} allow-listed", file=sys.stderr)
    return status.INPUT_ERRORS if backward else status.CLEAN
