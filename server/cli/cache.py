"""`opgen cache info|clear`: where opgen's caches are, what they hold, and emptying them."""

from __future__ import annotations

import argparse
import os
import sys

from .. import status


def add_cache_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cache", help="show or empty opgen's persistent caches",
                       description="opgen's caches live in $XDG_CACHE_HOME/opgen (~/.cache/opgen). `info` says "
                                   "where the records of `opgen generate` runs and the verdicts of `opgen check` "
                                   "are and what they hold; `clear` removes them and, when the cache folder is that "
                                   "default one, the kernel index's files (kernels-*.json). Nothing else in the "
                                   "folder is touched: the torch releases tools/torchgen_release.py fetched "
                                   "(torchgen/) and the PyTorch trees (trees/) are kept.")
    p.add_argument("action", choices=["info", "clear"])
    p.add_argument("--cache-dir", metavar="DIR",
                   help="the cache's folder (default: $OPGEN_CACHE_DIR, else $XDG_CACHE_HOME/opgen or "
                        "~/.cache/opgen)")
    p.set_defaults(run=run_cache)


def run_cache(args: argparse.Namespace) -> int:
    from ..cache.root import user_cache_root
    from ..cache.store import SUBFOLDER, Cache, default_folder

    folder = args.cache_dir or default_folder()
    if folder is None:
        print("opgen: the cache is off (OPGEN_CACHE_DIR=off)", file=sys.stderr)
        return status.CLEAN
    root = user_cache_root()
    code = status.CLEAN
    with Cache(folder, create=False) as cache:  # a mistyped --cache-dir is not made
        if cache.absent:
            print(f"opgen: no cache at {os.path.join(folder, SUBFOLDER)}"
                  + (": nothing to clear" if args.action == "clear" else ""), file=sys.stderr)
        else:
            for note in cache.notes:
                print(f"opgen: note: {note}", file=sys.stderr)
            if not cache.enabled:
                return status.USAGE
            if args.action == "info":
                info = cache.info()
                print(f"{info.folder}: {info.entries} entr{'y' if info.entries == 1 else 'ies'}, "
                      f"{info.size / 1e6:.1f} MB (at most {cache.max_bytes / 1e6:.0f} MB)"
                      + (f"; {info.other} other name(s) left alone" if info.other else ""))
                return status.CLEAN
            removed = cache.clear()
            print(f"opgen: removed {removed} cache entr{'y' if removed == 1 else 'ies'} (generate's run records and "
                  "per-item pieces, check's verdicts) "
                  f"from {cache.info().folder}")
            code = status.USAGE if cache.notes else status.CLEAN
            for note in cache.notes:
                print(f"opgen: note: {note}", file=sys.stderr)
    if args.action == "clear":
        code = max(code, _clear_kernel_index(folder, root))
    return code


def _clear_kernel_index(folder: str, root: str) -> int:
    """The kernel index keeps its files in the user cache root, whatever --cache-dir says: they are cleared with
    that folder only."""
    from ..cache.root import clear_kernel_index

    if os.path.realpath(folder) != os.path.realpath(root):
        print(f"opgen: the kernel index's files in {root} (kernels-*.json) are kept: they are cleared with that "
              "folder (`opgen cache clear` without --cache-dir or OPGEN_CACHE_DIR)")
        return status.CLEAN
    removed, failed = clear_kernel_index(root)
    print(f"opgen: removed {removed} kernel index file(s) (kernels-*.json) from {root}; the torch releases "
          "(torchgen/) and PyTorch trees (trees/) there are kept")
    for why in failed:
        print(f"opgen: note: {why}", file=sys.stderr)
    return status.USAGE if failed else status.CLEAN
