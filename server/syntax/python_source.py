"""Python source read as a syntax tree, never run (fallback_ops.py, native-AOT declarations).

CPython 3.11 keeps the AST constructor's recursion count once per interpreter, not per call: two `ast.parse`
that overlap in two threads (the server's generate parsing fallback_ops.py while another thread parses, or
formats a traceback, which parses too) make one of them raise "SystemError: AST constructor recursion depth
mismatch". So opgen's own parses take turns, and one that a parse outside opgen's control disturbed is tried again.
"""

from __future__ import annotations

import ast
import threading

_TURN = threading.Lock()
_ATTEMPTS = 3  # a disturbed parse is rare (a collision needs a thread switch inside the constructor)
_DISTURBED = "recursion depth mismatch"


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """ast.parse(text), safe beside other threads. Raises SyntaxError (and ValueError for a NUL byte) as it does."""
    for _ in range(_ATTEMPTS - 1):
        try:
            with _TURN:
                return ast.parse(text, filename=filename)
        except SystemError as exc:
            if _DISTURBED not in str(exc):
                raise
    with _TURN:
        return ast.parse(text, filename=filename)
