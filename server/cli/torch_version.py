"""The command line's side of torch releases: --torch-version, and saying which release is used."""

from __future__ import annotations

import argparse
import sys

from ..releases import Fit, Resolved, known_range, parse_version, resolve_for


def _torch_version(text: str) -> str:
    if parse_version(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a torch version such as 2.14 or 2.14.1")
    return text


def add_torch_version_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--torch-version", "--torch_version", type=_torch_version, metavar="X.Y[.Z]",
                        help="the torch release whose torchgen to match (default: detected from the inputs: "
                             "version.txt of a PyTorch checkout, torch/version.py beside a packaged torchgen, also "
                             "through symbolic links; else native_functions.yaml's own ops; else 2.13). Known: "
                             f"{known_range()}")


def resolve_release(args: argparse.Namespace, path: str | None) -> Resolved | None:
    """The release for the inputs at `path` (or --torch-version), its note (a newer release) said on stderr;
    None, with the reason said, for a release older than those known (the caller exits 1, as `opgen check`
    does for its OPG951)."""
    resolved = resolve_for(path, getattr(args, "torch_version", None))
    if resolved.note is not None:
        print(f"opgen: {resolved.note}", file=sys.stderr)
    return None if resolved.fit is Fit.OLDER else resolved


def resolve_native_release(args: argparse.Namespace) -> Resolved | None:
    """resolve_release for what is read against --native-functions (a backend yaml, `explain`): the release of
    that file, else of the installed torchgen's."""
    from ..index.inputs import default_native_functions

    return resolve_release(args, args.native_functions or default_native_functions())
