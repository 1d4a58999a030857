"""Options that more than one `opgen` command takes, declared once: the same flags, help and meaning in each."""

from __future__ import annotations

import argparse

from ..report import RENDERERS
from .torch_version import add_torch_version_argument


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
