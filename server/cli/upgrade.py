"""`opgen upgrade BACKEND_YAML --from X --to Y`: what a backend (a backend yaml, or torch_npu's
npu_native_functions.yaml) must change to move to another torch release."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from .. import status
from .tables import add_report_arguments, markdown_table

if TYPE_CHECKING:
    from ..analysis.upgrade import UpgradeReport


def add_upgrade_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("upgrade", help="list a backend's ops that change between two torch releases",
                       description="For each op a backend yaml lists (supported, full_codegen, autograd), or "
                                   "the upstream ops of torch_npu's npu_native_functions.yaml, say "
                                   "whether it is removed, renamed, changes its schema or changes its kernel "
                                   "declaration (the C++ gen_backend_stubs declares in <Key>NativeFunctions.h) "
                                   "from release --from to release --to, with the old and the new declaration side "
                                   "by side. The releases' own native_functions.yaml are read from opgen's torchgen "
                                   "cache (python3 tools/torchgen_release.py X.Y.Z fetches one) or the installed "
                                   "torch. A vendor file's own new ops are left out (the report says which). "
                                   "Exit status: 0 nothing changes, 1 changes found, 2 an input or a release's "
                                   "file is not at hand, or the file cannot be compared (not a backend yaml, a "
                                   "vendor format not compared yet, no op the older release declares).")
    add_report_arguments(p)
    p.add_argument("--from", dest="old", required=True, metavar="X.Y[.Z]", help="the release the backend builds "
                                                                                 "against today")
    p.add_argument("--to", dest="new", required=True, metavar="X.Y[.Z]", help="the release it moves to")
    p.set_defaults(run=run_upgrade)


def run_upgrade(args: argparse.Namespace) -> int:
    # loaded when the command runs: the parser of every command is built for `opgen check` too
    from ..analysis.upgrade import upgrade_report
    from ..index.inputs import InputError, load_release, read_input

    try:
        text = read_input(args.file)
        old, new = load_release(args.old), load_release(args.new)
    except InputError as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.USAGE
    report = upgrade_report(text, old, new, args.file)
    if report.problem:  # never "0 of 0 change": the file was not compared
        print(f"opgen: {args.file}: cannot compare: {report.problem}", file=sys.stderr)
        return status.USAGE
    sys.stdout.write(RENDER[args.format](args.file, report))
    print(summary(report), file=sys.stderr)
    return status.INPUT_ERRORS if report.changes else status.CLEAN


def summary(report: UpgradeReport) -> str:
    """The stderr line: how many compared ops change, and what was not compared."""
    line = (f"{len(report.changes)} of {report.compared} listed op(s) change from torch {report.old_release} to "
            f"{report.new_release}")
    if report.not_in_old:
        line += (f"; {len(report.not_in_old)} listed op(s) torch {report.old_release} does not declare were not "
                 "compared")
    if report.left_out:
        line += f"; {len(report.left_out)} op(s) of the file left out: {_reasons(report)}"
    return line


def _reasons(report: UpgradeReport) -> str:
    counts: dict[str, int] = {}
    for _, why in report.left_out:
        counts[why] = counts.get(why, 0) + 1
    return ", ".join(f"{n} {why}" for why, n in counts.items())


def render_text(path: str, report: UpgradeReport) -> str:
    old, new = f"torch {report.old_release}", f"torch {report.new_release}"
    width = max(len(old), len(new))
    out = []
    for c in report.changes:
        out.append(f"{path}:{c.span.start_line + 1}:{c.span.start_col + 1}: {c.op} ({c.section}): {c.summary}")
        for what, before, after in (("schema", c.old_schema, c.new_schema),
                                    ("kernel", c.old_declaration, c.new_declaration)):
            if before == after:
                out.append(f"    {what} {'(both)'.ljust(width)}  {before}")
                continue
            out.append(f"    {what} {old.ljust(width)}  {before or '(none)'}")
            out.append(f"    {what} {new.ljust(width)}  {after or '(none)'}")
    if report.not_in_old:
        out.append(f"not in torch {report.old_release} (not compared): {', '.join(report.not_in_old)}")
    for op, why in report.left_out:
        out.append(f"left out: {op}: {why}")
    return "\n".join(out) + ("\n" if out else "")


def render_json(path: str, report: UpgradeReport) -> str:
    return json.dumps({
        "path": path, "from": report.old_release, "to": report.new_release, "compared": report.compared,
        "not_in_from": list(report.not_in_old),
        "left_out": [{"op": op, "why": why} for op, why in report.left_out],
        "changes": [{"op": c.op, "change": c.kind.name.lower(), "renamed_to": c.renamed_to or None,
                     "section": c.section, "line": c.span.start_line + 1, "column": c.span.start_col + 1,
                     "old_schema": c.old_schema or None, "new_schema": c.new_schema or None,
                     "old_declaration": c.old_declaration or None, "new_declaration": c.new_declaration or None}
                    for c in report.changes]}, indent=2) + "\n"


def render_markdown(path: str, report: UpgradeReport) -> str:
    old, new = f"torch {report.old_release}", f"torch {report.new_release}"
    rows = [[str(c.span.start_line + 1), c.op, c.summary, "\n".join(filter(None, (c.old_schema, c.old_declaration))),
             "\n".join(filter(None, (c.new_schema, c.new_declaration)))] for c in report.changes]
    head = (f"## {path}: {len(report.changes)} of {report.compared} listed op(s) change from {old} to {new}\n\n")
    table = markdown_table(["line", "op", "change", old, new], rows, frozenset({1, 3, 4})) if rows else ""
    left = "".join(f"- left out: `{op}`: {why}\n" for op, why in report.left_out)
    return head + table + (("\n" if table else "") + left if left else "")


RENDER = {"text": render_text, "json": render_json, "markdown": render_markdown}
