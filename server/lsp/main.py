"""`opgen-lsp`'s command line and its run: the language server over stdio (the default) or TCP, generating with
the generators its caller gives (the console script, opgen_lsp.serve, gives codegen's)."""

from __future__ import annotations

import argparse
import logging
import sys

from .. import TORCHGEN_VERSION, VERSION_TEXT
from .generators import Generators

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="opgen-lsp",
        description="Language server for PyTorch operator yaml (native_functions.yaml, tags.yaml), "
                    f"matching torchgen {TORCHGEN_VERSION}.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    mode.add_argument("--tcp", action="store_true", help="listen for one client on --host:--port")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default: %(default)s)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default: %(default)s)")
    parser.add_argument("--log-level", default="WARNING", choices=LOG_LEVELS, type=str.upper,
                        help="server log on stderr (default: %(default)s)")
    parser.add_argument("--version", action="version", version=f"opgen-lsp {VERSION_TEXT}")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: a port is a number from 0 to 65535")
    return args


def run(generators: Generators, argv: list[str] | None = None) -> int:
    """Serve until the connection ends; the exit status."""
    args = parse_args(argv)
    # stdout carries the protocol in --stdio mode: log to stderr only.
    from . import log_format, log_levels

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(log_format.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, args.log_level), handlers=[handler])

    log_levels.install()
    # The kernel index scans a cold tree in worker processes, started from a thread of this (threaded)
    # server: forkserver children do not inherit the locks other threads may hold at fork time.
    import multiprocessing

    try:
        multiprocessing.set_start_method("forkserver")
    except (RuntimeError, ValueError):  # already set, or not available on this platform
        pass
    from .server import create_server
    from .watchdog import exit_after

    server = create_server(generators)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    # The connection has ended: an analysis stuck on its thread (which the interpreter waits for) must not
    # keep the process alive.
    exit_after(code=server.exit_code)
    return server.exit_code
