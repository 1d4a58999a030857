"""Where torchgen's aoti/fallback_ops.py is looked for, without reading it: the shim check (shims.py) reads the
first one found, and `opgen check`'s persistent memo (check_memo.py) keys its verdicts by that file's bytes. A
module of its own so that the memo finds the file without importing the model the check needs."""

from __future__ import annotations

import importlib.util
import os


def fallback_ops_candidates(source_path: str) -> list[str]:
    """Where torchgen's aoti/fallback_ops.py may be: the ATen folder's own (aoti/ inside it, as samples/aten has),
    the PyTorch tree around aten/src/ATen, the torchgen package holding a packaged ATen folder, then the
    installed torchgen (found, not imported)."""
    source = os.path.abspath(source_path)
    out = [os.path.join(source, "aoti", "fallback_ops.py"),
           os.path.join(source, "..", "..", "..", "torchgen", "aoti", "fallback_ops.py"),
           os.path.join(source, "..", "..", "aoti", "fallback_ops.py")]
    try:
        spec = importlib.util.find_spec("torchgen")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        out += [os.path.join(p, "aoti", "fallback_ops.py") for p in spec.submodule_search_locations]
    return [os.path.normpath(p) for p in out]
