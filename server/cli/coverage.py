"""`opgen coverage BACKEND_YAML [--release X]`: the ATen ops a backend implements, gets for free, must implement."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from .. import status
from .tables import add_report_arguments, markdown_table, text_table

if TYPE_CHECKING:
    from ..analysis.coverage import Coverage
    from ..index.native import NativeSnapshot

_TITLES = {"implemented": "implemented by the backend (listed in its yaml)",
           "free": "free: a composite kernel, or a variant gen_backend_stubs generates",
           "to implement": "to implement, or left to the backend's fallback"}


def add_coverage_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("coverage", help="which ATen ops a backend implements, gets for free, or must implement",
                       description="Sort every ATen op of a torch release (generated out= and in-place variants "
                                   "included) for a backend yaml: those it implements (listed under supported, "
                                   "full_codegen or autograd), those it gets for free (a CompositeImplicitAutograd "
                                   "or CompositeExplicitAutograd[NonFunctional] kernel, or an out= / in-place "
                                   "variant gen_backend_stubs writes around the listed functional kernel), and "
                                   "those it must implement or leaves to its fallback; one table per category, "
                                   "with counts. Exit status 0, or 2 when an input is not at hand or is not a "
                                   "backend yaml (a vendor file is not read yet).")
    add_report_arguments(p)
    p.add_argument("--release", metavar="X.Y[.Z]", help="the torch release whose ops are sorted (its "
                   "native_functions.yaml from opgen's torchgen cache or the installed torch; default: the installed "
                   "torch's)")
    p.set_defaults(run=run_coverage)


def _native(release: str | None) -> NativeSnapshot:
    from ..index.inputs import InputError, default_native_functions, load_native, load_release
    from ..releases import resolve_for

    if release is not None:
        return load_release(release)
    path = default_native_functions()
    if path is None:
        raise InputError("no torch release to sort the ops of: pass --release X.Y (torch is not installed)")
    return load_native(path, None, release=resolve_for(path).release).snapshot


def run_coverage(args: argparse.Namespace) -> int:
    from ..analysis.coverage import coverage
    from ..index.inputs import InputError, read_input

    try:
        text = read_input(args.file)
        native = _native(args.release)
    except InputError as exc:
        print(f"opgen: {exc}", file=sys.stderr)
        return status.USAGE
    found = coverage(text, native, args.file)
    if found.problem:
        print(f"opgen: {args.file}: cannot report coverage: {found.problem}", file=sys.stderr)
        return status.USAGE
    sys.stdout.write(RENDER[args.format](args.file, found))
    return status.CLEAN


def _heading(found: Coverage, path: str) -> str:
    counts = found.counts()
    total = sum(counts.values())
    unknown = f"; listed but not in torch {found.release}: {', '.join(found.unknown)}" if found.unknown else ""
    return (f"{path} (backend {found.backend}) in torch {found.release}: {total} ATen ops, "
            + ", ".join(f"{n} {c}" for c, n in counts.items()) + unknown)


def render_text(path: str, found: Coverage) -> str:
    parts = [_heading(found, path) + "\n"]
    for category, count in found.counts().items():
        rows = [[o.op, o.how] for o in found.of(category)]
        parts.append(f"\n{_TITLES[category]} ({count})\n" + text_table(["op", "how"], rows))
    return "".join(parts)


def render_markdown(path: str, found: Coverage) -> str:
    parts = [f"## {_heading(found, path)}\n"]
    for category, count in found.counts().items():
        rows = [[o.op, o.how] for o in found.of(category)]
        parts.append(f"\n### {_TITLES[category]} ({count})\n\n" + markdown_table(["op", "how"], rows, frozenset({0})))
    return "".join(parts)


def render_json(path: str, found: Coverage) -> str:
    return json.dumps({"path": path, "backend": found.backend, "release": found.release, "counts": found.counts(),
                       "not_in_release": list(found.unknown),
                       **{c: [{"op": o.op, "how": o.how} for o in found.of(c)] for c in found.counts()}},
                      indent=2) + "\n"


RENDER = {"text": render_text, "json": render_json, "markdown": render_markdown}
