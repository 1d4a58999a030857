"""`opgen explain OP`: every piece of C++ torchgen generates for one operator."""

from __future__ import annotations

import argparse
import json
import sys

from .. import status
from .torch_version import add_torch_version_argument, resolve_native_release


def add_explain_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    explain = sub.add_parser("explain", help="show the C++ torchgen generates for one operator")
    explain.add_argument("op", metavar="OP", help="name.overload (or name for the default overload)")
    explain.add_argument("--backend", metavar="KEY", help="only the pieces of this dispatch key (an out-of-tree "
                                                          "key shows its <KEY>NativeFunctions.h declaration)")
    explain.add_argument("--json", action="store_true", help="print {op, snippets: [{title, file, code}]}")
    explain.add_argument("--native-functions", metavar="F", help="native_functions.yaml (default: torch's)")
    explain.add_argument("--tags", metavar="F", help="tags.yaml (default: beside native_functions.yaml)")
    add_torch_version_argument(explain)
    explain.set_defaults(run=run_explain)


def run_explain(args: argparse.Namespace) -> int:
    from ..codegen.options import CodegenOptions
    from ..index.inputs import InputError, InvalidInput, load_native
    from ..pieces.explain import Explainer

    resolved = resolve_native_release(args)
    if resolved is None:  # older than the releases known: an error of the inputs, as `opgen check` says (OPG951)
        return status.INPUT_ERRORS
    try:
        inputs = load_native(args.native_functions, args.tags, CodegenOptions(release=resolved.release).ignore_keys,
                             release=resolved.release)
    except InputError as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.INPUT_ERRORS if isinstance(exc, InvalidInput) else status.USAGE
    if inputs.errors:
        print(f"opgen: {inputs.path} has {len(inputs.errors)} error(s); run 'opgen check' on it", file=sys.stderr)
        return status.INPUT_ERRORS
    explainer = Explainer(inputs.snapshot.functions, resolved.release)
    if explainer.function(args.op) is None:
        near = ", ".join(explainer.closest(args.op)) or "none"
        print(f"opgen: unknown operator '{args.op}' (write name.overload, e.g. add.Tensor); closest: {near}",
              file=sys.stderr)
        return status.USAGE
    snippets = explainer.explain(args.op, args.backend)
    print(f"opgen: explained as {resolved.label}", file=sys.stderr)
    if args.json:
        payload = {"op": args.op, "snippets": [{"title": s.title, "file": s.file, "code": s.code} for s in snippets]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.stdout.write("".join(f"// ===== {s.title} ({s.file})\n{s.code}\n\n" for s in snippets))
    return status.CLEAN
