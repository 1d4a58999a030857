"""Options that more than one `opgen` command takes, declared once: the same flags, help and meaning in each."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..report import RENDERERS
from .torch_version import add_torch_version_argument

if TYPE_CHECKING:
    from ..cache.store import Cache


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text", help="how to print diagnostics")


def add_verbose_argument(parser: argparse.ArgumentParser) -> None:
    """-v of the generating commands (generation_report.report_written prints the files)."""
    parser.add_argument("-v", "--verbose", action="store_true", help="print each file written")


def add_backend_yaml_arguments(parser: argparse.ArgumentParser, *, yaml_keys: str, impl_help: str) -> None:
    """-s, -o and --impl-path of gen_backend_stubs and gen_lazy_tensor (both spellings, as torchgen takes them);
    yaml_keys: the top-level keys the command reads, impl_help: what it does with the kernels' C++ file."""
    parser.add_argument("-s", "--source-yaml", "--source_yaml", required=True, metavar="BACKEND_YAML",
                        help=f"the backend yaml ({yaml_keys} ...)")
    parser.add_argument("-o", "--output-dir", "--output_dir", required=True, metavar="OUTPUT_DIR",
                        help="output folder; also spelled as given in the generated #includes (so it may hold no "
                             "line break, quote, < or >)")
    parser.add_argument("--impl-path", "--impl_path", action="append", default=[], metavar="F", help=impl_help)


def add_include_style_arguments(parser: argparse._ActionsContainer, *, entry_point: str) -> None:
    """Two switches of torchgen's registration emitter that its command lines do not offer; entry_point: the
    torchgen function that takes them."""
    parser.add_argument("--build-in-tree", action="store_true",
                        help=f"include the generated headers with angle brackets, <OUTPUT_DIR/...> (an in-tree "
                             f"backend; torchgen's {entry_point}(build_in_tree=True), not on its command line)")
    parser.add_argument("--per-operator-headers", action="store_true",
                        help=f"include ATen/ops/*.h instead of ATen/Functions.h (must match how ATen was built; "
                             f"{entry_point}(per_operator_headers=True), not on torchgen's command line)")


def add_generation_arguments(parser: argparse.ArgumentParser) -> None:
    """What opgen adds to both backend generators' flags: the inputs (torchgen's packaged ones unless given),
    how to report, and the release to match."""
    parser.add_argument("--native-functions", metavar="F",
                        help="native_functions.yaml (default: the one packaged with the installed torchgen; its "
                             "tags.yaml is read from beside it)")
    parser.add_argument("--templates", metavar="D", help="templates folder (default: torchgen's packaged templates)")
    add_format_argument(parser)
    add_verbose_argument(parser)
    add_torch_version_argument(parser)


def add_cache_arguments(p: argparse.ArgumentParser,
                        use: str = "a run with nothing changed since the last is answered from it") -> None:
    """--cache-dir and --no-cache (generate, check); use: what the command keeps in the cache, for the help."""
    p.add_argument("--cache-dir", metavar="DIR",
                   help="the persistent cache's folder (default: $OPGEN_CACHE_DIR, else $XDG_CACHE_HOME/opgen or "
                        f"~/.cache/opgen): {use}")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the persistent cache")


def open_cache(args: argparse.Namespace) -> Cache:
    """The persistent cache --cache-dir names (else $OPGEN_CACHE_DIR, else the user's cache folder); one that is
    off with --no-cache or OPGEN_CACHE_DIR=off."""
    from ..cache.store import Cache, default_folder

    if getattr(args, "no_cache", False):
        return Cache(None)
    return Cache(getattr(args, "cache_dir", None) or default_folder())
