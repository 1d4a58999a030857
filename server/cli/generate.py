"""`opgen generate`: gen.py's command line (python -m torchgen.gen), on opgen's generator."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .. import status
from ..releases.tree_release import tree_notes
from .generation_report import report_written, terminal_progress
from .options import add_cache_arguments, add_verbose_argument, open_cache
from .torch_version import add_torch_version_argument, resolve_release

# Where gen.py before 2.4 writes the AOTI C shims, under the working folder (it has no --aoti-install-dir).
FIXED_AOTI_INSTALL_DIR = "torch/csrc/inductor/aoti_torch/generated"

if TYPE_CHECKING:
    from ..cache.store import Cache
    from ..codegen.files.context import GenerateOptions
    from ..codegen.generate import Memo
    from ..codegen.runs import Input
    from ..releases import Release, Resolved

GENERATE_KINDS = ["headers", "sources", "declarations_yaml"]
_HELP_IMPLEMENTED_ONLY = ("write only the files opgen can generate and exit 0; without it, opgen writes them, "
                          "names the files it cannot generate yet and exits with status 3")


def add_generate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate", help="generate ATen's C++ files as torchgen.gen does (byte for byte)",
                       description="Generate ATen source files, as `python -m torchgen.gen` does. Files opgen "
                                   "cannot generate yet are named on stderr and make the exit status 3, unless "
                                   "--implemented-only is given.")
    p.add_argument("-s", "--source-path", default="aten/src/ATen",
                   help="ATen source folder: native/native_functions.yaml, native/tags.yaml, templates/")
    p.add_argument("-o", "--output-dependencies", metavar="FILE",
                   help="also write the cmake lists of generated files (FILE, core_FILE, cuda_FILE, ...)")
    p.add_argument("--dry-run", action="store_true", help="write no generated file (the -o lists still are)")
    p.add_argument("--per-operator-headers", action="store_true", help="the ATen/ops/ per-operator layout")
    p.add_argument("-d", "--install-dir", "--install_dir", default="build/aten/src/ATen", help="output folder")
    # gen.py's default is torch/csrc/inductor/aoti_torch/generated under the current directory: opgen keeps
    # the shims with the other outputs unless told otherwise.
    p.add_argument("--aoti-install-dir", "--aoti_install_dir", default=None,
                   help="output folder of the AOTInductor shims (default: <install-dir>/aoti; gen.py's is "
                        "torch/csrc/inductor/aoti_torch/generated under the current directory)")
    p.add_argument("--headeronly-install-dir", "--headeronly_install_dir", default=None,
                   help="output folder of header-only files such as enum_tag.h (default: <install-dir>/core)")
    p.add_argument("--rocm", action="store_true", help="generate for ROCm/HIP instead of CUDA")
    p.add_argument("--mps", action="store_true", help="include the MPS kernels")
    p.add_argument("--xpu", action="store_true", help="include the XPU kernels")
    p.add_argument("--mtia", action="store_true", help="include the MTIA kernels")
    add_selection_arguments(p)
    p.add_argument("--update-aoti-c-shim", action="store_true",
                   help="write the AOTInductor C shim headers c_shim_<device>.h (and include the MPS and XPU "
                        "kernels); without it, a header that would change in the aoti install dir is an error")
    p.add_argument("--extend-aoti-c-shim", action="store_true",
                   help="C shims of out-of-tree ops (with -s <out-of-tree ATen folder> and --aoti-install-dir "
                        "<in-tree aoti dir>/extend): only for their own kernels; the sources include "
                        "extend/c_shim_<device>.h")
    p.add_argument("--implemented-only", action="store_true", help=_HELP_IMPLEMENTED_ONLY)
    p.add_argument("-j", "--jobs", type=_positive, metavar="N",
                   help="processes that build and write the files (default: $OPGEN_PROCESSES, else one per CPU, "
                        "at most two)")
    add_verbose_argument(p)
    p.add_argument("--native-aot-ops-dir", "--native_aot_ops_dir", default=None, metavar="DIR",
                   help="torch 2.15 on: the folder of native-AOT declarations (<op>/aot.py; default: "
                        "torch/_native/ops of the checkout); an empty string leaves them out")
    add_torch_version_argument(p)
    add_cache_arguments(p)
    p.set_defaults(run=run_generate)


def spellings(name: str, dashed: bool = True) -> tuple[str, ...]:
    """A multi-word flag's spellings: `--a-b` and `--a_b` (gen.py from 2.0, and opgen's own commands), or the
    underscore one alone (gen.py 1.13: Release.command_line_dashed_aliases)."""
    underscore = name.replace("-", "_").replace("__", "--", 1)
    return (name, underscore) if dashed else (underscore,)


def add_selection_arguments(p: argparse.ArgumentParser, dashed: bool = True) -> None:
    """gen.py's flags of what is registered and generated, the same in every release but for their spellings (the
    drop-in takes them too; dashed: the dashed spellings beside the underscore ones)."""
    p.add_argument(*spellings("--op-registration-whitelist", dashed), nargs="*",
                   help="only register these operators (namespace::name)")
    p.add_argument(*spellings("--op-selection-yaml-path", dashed), help="operator selection yaml")
    p.add_argument(*spellings("--backend-whitelist", dashed), nargs="*", help="only these dispatch keys")
    p.add_argument(*spellings("--static-dispatch-backend", dashed), nargs="*",
                   help="static dispatch to these backends")
    p.add_argument(*spellings("--skip-dispatcher-op-registration", dashed), action="store_true",
                   help="do not register operators with the dispatcher")
    p.add_argument(*spellings("--force-schema-registration", dashed), action="store_true",
                   help="register every schema, even of operators not selected")
    p.add_argument("--generate", type=str, nargs="*", choices=GENERATE_KINDS, default=GENERATE_KINDS,
                   help="generate only these kinds of files")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return int(text)


def options_from_args(args: argparse.Namespace, release: Release) -> GenerateOptions:
    """gen.py's options; release: the torch release to match (resolve_release's)."""
    from ..codegen.files.context import GenerateOptions

    def tup(v: Iterable[str] | None) -> tuple[str, ...] | None:
        return None if v is None else tuple(v)

    return GenerateOptions(
        source_path=args.source_path, install_dir=args.install_dir,
        headeronly_install_dir=args.headeronly_install_dir,
        # (gen.py before 2.4 has no --aoti-install-dir: its shims go to a fixed folder under the working one)
        aoti_install_dir=(args.aoti_install_dir or os.path.join(args.install_dir, "aoti"))
        if release.gen_py_takes_aoti_flags else FIXED_AOTI_INSTALL_DIR,
        per_operator_headers=args.per_operator_headers, rocm=args.rocm, mps=args.mps, xpu=args.xpu, mtia=args.mtia,
        op_registration_whitelist=tup(args.op_registration_whitelist),
        op_selection_yaml_path=args.op_selection_yaml_path, backend_whitelist=tup(args.backend_whitelist),
        static_dispatch_backend=tup(args.static_dispatch_backend),
        skip_dispatcher_op_registration=args.skip_dispatcher_op_registration,
        force_schema_registration=args.force_schema_registration, generate=frozenset(args.generate),
        dry_run=args.dry_run, output_dependencies=args.output_dependencies,
        update_aoti_c_shim=args.update_aoti_c_shim,
        # (a release whose gen.py has no --extend-aoti-c-shim, before 2.6, writes its in-tree shims; generate_as
        # refuses the flag for it, as that gen.py does, and the drop-in gen.py does not offer it)
        extend_aoti_c_shim=args.extend_aoti_c_shim and release.gen_py_takes_extend_aoti_c_shim,
        release=release, native_aot_ops_dir=args.native_aot_ops_dir,
    )


def flags_the_release_lacks(args: argparse.Namespace, release: Release) -> list[str]:
    """The flags given that the release's gen.py does not take (it came later)."""
    return [flag for flag, given, taken in (("--aoti-install-dir", args.aoti_install_dir is not None,
                                             release.gen_py_takes_aoti_flags),
                                            ("--update-aoti-c-shim", args.update_aoti_c_shim, release.gen_py_takes_aoti_flags),
                                            ("--xpu", args.xpu, release.gen_py_takes_xpu),
                                            ("--mtia", args.mtia, release.gen_py_takes_mtia),
                                            ("--extend-aoti-c-shim", args.extend_aoti_c_shim,
                                             release.gen_py_takes_extend_aoti_c_shim)) if given and not taken]


def run_generate(args: argparse.Namespace) -> int:
    resolved = resolve_release(args, native_path(args.source_path))
    if resolved is None:  # older than the releases known: an error of the inputs, as `opgen check` says (OPG951)
        return status.INPUT_ERRORS
    return generate_as(args, resolved)


def native_path(source_path: str) -> str:
    """The native_functions.yaml gen.py reads under -s."""
    return os.path.join(source_path, "native", "native_functions.yaml")


def generate_as(args: argparse.Namespace, resolved: Resolved) -> int:
    """`opgen generate` with its parsed arguments, as the release resolved (what it prints, its exit status)."""
    absent = flags_the_release_lacks(args, resolved.release)
    if absent:  # gen.py of that release stops at them with a usage error: no file is written as it would not be
        print(f"opgen: gen.py of {resolved.label} has no {' or '.join(absent)}", file=sys.stderr)
        return status.USAGE
    native = native_path(args.source_path)
    for _, note in tree_notes(native, resolved):  # a vendor's or a pre-release tree's torchgen, a bad version.txt
        print(f"opgen: warning: {note}", file=sys.stderr)
    if not resolved.release.generation_verified:
        print(f"opgen: generation for {resolved.release} is not yet compared with its gen.py; files may differ",
              file=sys.stderr)
    from ..index.documents import paused_gc

    # One run over a bounded model, as generate-backend: the collector's passes over the model cost 5% of a cold
    # per-operator run (most of it after the forked writers return) and free next to nothing.
    with open_cache(args) as cache, paused_gc():
        code = _generate_cached(args, resolved, cache)
        cache.evict_if_grown()
        for note in cache.notes:
            print(f"opgen: note: {note}", file=sys.stderr)
    return code


# The arguments that do not shape what is written (how it is reported, how many processes write it, the cache).
_NOT_IN_THE_RUN_KEY = frozenset({"run", "command", "verbose", "jobs", "cache_dir", "no_cache"})


def run_key(args: argparse.Namespace, resolved: Resolved) -> str | None:
    """The key of this run's record: every flag that shapes the output, the release (its whole profile), where the
    installed torchgen is (its fallback_ops.py may be read), and the memory budget (a file over it is read in part,
    and not generated from)."""
    import importlib.util

    from ..codegen import runs

    try:
        spec = importlib.util.find_spec("torchgen")
        torchgen = repr(spec.submodule_search_locations if spec is not None else None)
    except (ImportError, ValueError):
        torchgen = "none"
    command = {k: v for k, v in vars(args).items() if k not in _NOT_IN_THE_RUN_KEY}
    budget = os.environ.get("OPGEN_MEMORY_BUDGET_MB", "")  # (index.documents.MEMORY_BUDGET_VARIABLE, not imported)
    return runs.run_key(command, resolved.release, f"{torchgen}\n{budget}")


RECORDED = "nothing changed since the last run: its record in opgen's cache"


def _generate_cached(args: argparse.Namespace, resolved: Resolved, cache: Cache) -> int:
    """A run whose record says nothing changed is reported from it (nothing rebuilt, nothing written); any other
    runs in full and, when it wrote every file, is recorded."""
    from ..codegen import runs

    key = run_key(args, resolved) if cache.enabled and not args.dry_run else None
    if key is None and cache.enabled and not args.dry_run:
        print("opgen: note: the current folder no longer exists: running without the cache", file=sys.stderr)
    if key is not None:
        recorded = runs.lookup(cache, key)
        if recorded is not None:
            from ..codegen.writer import WriteResult

            _print_notes(recorded.notes)
            report_written(WriteResult((), recorded.files, ()), verbose=args.verbose,
                           as_what=f"gen.py of {resolved.label}", why=RECORDED)
            return _missing_status(recorded.missing, args.implemented_only)
    from ..analysis.check import installed_package_dir  # (loaded on first use, as the generator)
    from ..codegen.generate import generate, inputs_read

    options = options_from_args(args, resolved.release)
    inputs = runs.read_inputs(inputs_read(options)) if key is not None else ()
    shown = terminal_progress(sys.stderr)
    memo = None if key is None else contributions_memo(cache, key, inputs, native_path(args.source_path))
    result = generate(options, implemented_only=args.implemented_only, processes=args.jobs, progress=shown,
                      memo=memo)
    if shown is not None:
        shown.finish()
    _print_notes(result.notes)
    for line in result.located:
        print(line, file=sys.stderr)
    for error in result.errors:
        print(f"opgen: {error}", file=sys.stderr)
    native = native_path(args.source_path)
    found = os.path.isfile(native)
    if result.written is not None:
        report_written(result.written, verbose=args.verbose, as_what=f"gen.py of {resolved.label}")
    elif found:  # nothing written (errors, a dry run): the release is said all the same
        print(f"opgen: {'checked' if result.errors else 'read'} as {resolved.label}", file=sys.stderr)
    else:  # nothing read: what -s is, last, where the eye lands
        for hint in source_path_hints(args.source_path, installed_package_dir("torchgen")):
            print(f"opgen: {hint}", file=sys.stderr)
    if result.errors:
        return status.INPUT_ERRORS if result.invalid or result.planned else status.USAGE
    missing = tuple((p.path, p.missing_reason) for p in result.missing)
    if key is not None and result.written is not None:
        written = result.written
        done = runs.Recorded((*written.written, *written.unchanged), tuple(path for path, _ in result.lists),
                             result.notes, missing)
        runs.store(cache, key, inputs, done, dict((*written.digests, *result.lists)), {**result.verified, **result.kept})
    return _missing_status(missing, args.implemented_only)


def contributions_memo(cache: Cache, key: str, inputs: Sequence[Input], native: str) -> Memo:
    """Where the run keeps its per-item contributions: under the run's key and the digest of every input but
    native_functions.yaml (the items' fingerprints are of its entries), trusted only if the inputs, once read, are
    still as digested."""
    from ..cache.store import namespaced
    from ..codegen.generate import Memo
    from ..codegen.runs import state_of

    constants = namespaced("generate-constants", key, *(f"{i.kind}\0{i.path}\0{i.digest}" for i in inputs
                                                         if not (i.kind == "file" and i.path == native)))
    return Memo(cache, constants, lambda: all(state_of(i.kind, i.path) == (i.digest, i.stamp) for i in inputs))


def _print_notes(notes: Sequence[str]) -> None:
    if notes:  # gen.py's own lines, kept as it prints them on stdout; said once what they are
        print(f"opgen: note: the {len(notes)} line(s) '... not found' below are gen.py's AOTI ABI check "
              "(printed as gen.py prints them): no C shim header there to compare with, not an error; "
              "--update-aoti-c-shim writes them", file=sys.stderr, flush=True)
    for note in notes:
        print(note, flush=True)


def _missing_status(missing: Sequence[tuple[str, str]], implemented_only: bool) -> int:
    if missing and not implemented_only:
        print(f"opgen: cannot generate {len(missing)} file(s) yet (pass --implemented-only to accept):",
              file=sys.stderr)
        for path, why in missing:
            print(f"  {path}: {why}", file=sys.stderr)
        return status.PARTIAL
    return status.CLEAN


def source_path_hints(source_path: str, torchgen_dir: str | None) -> list[str]:
    """What -s is and where a release's ATen folder comes from, for a source path without native_functions.yaml."""
    hints = [f"-s/--source-path is the ATen folder gen.py reads (native/native_functions.yaml, native/tags.yaml, "
             f"templates/); {source_path!r} holds no native/native_functions.yaml (the default, aten/src/ATen, is a "
             "PyTorch checkout's, run from its root); opgen's own small one: `opgen generate -s samples/aten -d "
             "/tmp/aten-out`"]
    if torchgen_dir is not None:
        hints.append(f"the installed torch's ATen folder: -s {os.path.join(torchgen_dir, 'packaged', 'ATen')}")
    else:
        hints.append("torch is not installed; a release's ATen folder is its torchgen's packaged/ATen, and only "
                     "torchgen/ is needed: `python3 tools/torchgen_release.py X.Y.Z` (in an opgen-lsp clone; it "
                     "prints FOLDER, then -s FOLDER/torchgen/packaged/ATen), or `pip download --no-deps "
                     "torch==X.Y.Z` and unzip the wheel's torchgen/ (`pip install torch` also pulls gigabytes of "
                     "CUDA packages)")
    return hints
