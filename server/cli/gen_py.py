"""`python -m opgen_lsp.gen`: a drop-in for `python -m torchgen.gen` in a PyTorch build (cmake/Codegen.cmake).

It takes exactly the command line the release's gen.py takes (its flags, both spellings where gen.py has both, its
defaults, argparse's usage error and exit status 2 for anything else) and runs `opgen generate` with it: the same
files, the same --output-dependencies lists. The release is detected from -s as `opgen generate` detects it (the
checkout's version.txt, ...), before the rest of the command line is read, since the flags depend on it. A file opgen
cannot generate yet is named on stderr and makes the exit status non-zero (3); nothing different is ever written.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from .. import status
from ..releases import Release
from .generate import add_selection_arguments, generate_as, native_path, spellings
from .main import exit_with
from .torch_version import resolve_release

PROG = "python -m opgen_lsp.gen"
# gen.py's defaults, relative to the folder it runs in (Codegen.cmake runs it at the checkout's root).
DEFAULT_SOURCE_PATH = "aten/src/ATen"
DEFAULT_INSTALL_DIR = "build/aten/src/ATen"
DEFAULT_AOTI_INSTALL_DIR = "torch/csrc/inductor/aoti_torch/generated"


class _SourcePathOnly(argparse.ArgumentParser):
    """Reads -s alone (the release, and so the rest of the flags, depends on it); never exits."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def source_path_of(argv: list[str]) -> str:
    """-s/--source-path as gen.py would read it; its default when it cannot be read (then the release's parser says
    why)."""
    pre = _SourcePathOnly(add_help=False)
    pre.add_argument("-s", "--source-path", default=DEFAULT_SOURCE_PATH)
    try:
        known, _ = pre.parse_known_args(argv)
    except ValueError:
        return DEFAULT_SOURCE_PATH
    return str(known.source_path)


def gen_py_parser(release: Release) -> argparse.ArgumentParser:
    """The command line of `release`'s gen.py: the same flags, spellings, arities and defaults."""
    p = argparse.ArgumentParser(prog=PROG, description=f"Generate ATen source files as gen.py of {release} does "
                                                       "(a drop-in for python -m torchgen.gen).")
    p.add_argument("-s", "--source-path", default=DEFAULT_SOURCE_PATH,
                   help="ATen source folder: native/native_functions.yaml, native/tags.yaml, templates/")
    p.add_argument("-o", "--output-dependencies", help="also write the cmake lists of the generated files")
    p.add_argument("--dry-run", action="store_true", help="write no generated file (the -o lists still are)")
    p.add_argument("--per-operator-headers", action="store_true", help="the ATen/ops/ per-operator layout")
    dashed = release.command_line_dashed_aliases
    p.add_argument("-d", *spellings("--install-dir", dashed), default=DEFAULT_INSTALL_DIR, help="output folder")
    if release.gen_py_takes_aoti_flags:
        p.add_argument("--aoti-install-dir", "--aoti_install_dir", default=DEFAULT_AOTI_INSTALL_DIR,
                       help="folder of the AOTInductor C shims (checked, or written with --update-aoti-c-shim)")
    if not release.enum_tag_in_core:
        p.add_argument("--headeronly-install-dir", "--headeronly_install_dir", default=None,
                       help="folder of the header-only files such as enum_tag.h (default: <install-dir>/core)")
    if release.writes_native_aot_stubs:
        p.add_argument("--native-aot-ops-dir", "--native_aot_ops_dir", default=None,
                       help="folder of the native-AOT declarations (default: torch/_native/ops of the checkout)")
    devices = ("rocm", "mps", *(("xpu",) if release.gen_py_takes_xpu else ()),
               *(("mtia",) if release.gen_py_takes_mtia else ()))
    for device in devices:
        p.add_argument(f"--{device}", action="store_true", help=f"generate for {device.upper()}")
    add_selection_arguments(p, dashed)
    if release.gen_py_takes_aoti_flags:
        p.add_argument("--update-aoti-c-shim", action="store_true", help="write the AOTInductor C shim headers")
    if release.gen_py_takes_extend_aoti_c_shim:
        p.add_argument("--extend-aoti-c-shim", action="store_true", help="C shims of out-of-tree ops")
    return p


def as_generate_arguments(args: argparse.Namespace) -> argparse.Namespace:
    """gen.py's parsed flags as `opgen generate`'s: what gen.py lacks at its default, opgen's own at theirs (every
    file or a non-zero exit; no -v; the processes as by default)."""
    fixed = {"aoti_install_dir": None, "update_aoti_c_shim": False, "headeronly_install_dir": None,
             "native_aot_ops_dir": None, "mtia": False, "xpu": False,
             "extend_aoti_c_shim": False, "implemented_only": False, "jobs": None, "verbose": False,
             "torch_version": None, "cache_dir": None, "no_cache": False}
    return argparse.Namespace(**{**fixed, **vars(args)})


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    resolved = resolve_release(argparse.Namespace(), native_path(source_path_of(argv)))
    if resolved is None:  # older than the releases known (said on stderr): gen.py's flags cannot be known
        return status.INPUT_ERRORS
    args = gen_py_parser(resolved.release).parse_args(argv)
    code = generate_as(as_generate_arguments(args), resolved)
    # gen.py exits 1 on whatever stops it (an unreadable input included); 2 is argparse's usage error alone.
    return status.INPUT_ERRORS if code == status.USAGE else code


def run() -> NoReturn:
    exit_with(main())
