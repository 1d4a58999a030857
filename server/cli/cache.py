"""`opgen cache info|clear`: where the persistent cache is, what it holds, and emptying it."""

from __future__ import annotations

import argparse
import os
import sys

from .. import status


def add_cache_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cache", help="show or empty opgen's persistent cache",
                       description="opgen's persistent cache (the records of `opgen generate` runs): `info` says "
                                   "where it is and what it holds, `clear` removes every entry of opgen's (nothing "
                                   "else in the folder is touched).")
    p.add_argument("action", choices=["info", "clear"])
    p.add_argument("--cache-dir", metavar="DIR",
                   help="the cache's folder (default: $OPGEN_CACHE_DIR, else $XDG_CACHE_HOME/opgen-lsp or "
                        "~/.cache/opgen-lsp)")
    p.set_defaults(run=run_cache)


def run_cache(args: argparse.Namespace) -> int:
    from ..cache.store import SUBFOLDER, Cache, default_folder

    folder = args.cache_dir or default_folder()
    if folder is None:
        print("opgen: the cache is off (OPGEN_CACHE_DIR=off)", file=sys.stderr)
        return status.CLEAN
    with Cache(folder, create=False) as cache:  # a mistyped --cache-dir is not made
        if cache.absent:
            print(f"opgen: no cache at {os.path.join(folder, SUBFOLDER)}"
                  + (": nothing to clear" if args.action == "clear" else ""), file=sys.stderr)
            return status.CLEAN
        for note in cache.notes:
            print(f"opgen: note: {note}", file=sys.stderr)
        if not cache.enabled:
            return status.USAGE
        if args.action == "clear":
            removed = cache.clear()
            print(f"opgen: removed {removed} cache entr{'y' if removed == 1 else 'ies'} from {cache.info().folder}")
            return status.USAGE if cache.notes else status.CLEAN
        info = cache.info()
        print(f"{info.folder}: {info.entries} entr{'y' if info.entries == 1 else 'ies'}, {info.size / 1e6:.1f} MB "
              f"(at most {cache.max_bytes / 1e6:.0f} MB)" + (f"; {info.other} other name(s) left alone"
                                                            if info.other else ""))
    return status.CLEAN
