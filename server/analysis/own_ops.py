"""The checks of a backend's own operator file (index/own_ops.py) beyond what its torchgen parse checks: each op
must be one the pinned torch release declares, with exactly that release's schema (the backend registers its
kernels for upstream's op, so a drifted schema is a kernel registered for an op that does not exist), unless
the op is in a namespace of the backend's own."""

from __future__ import annotations

from ..diagnostics import Diagnostic, diag
from ..index.own_ops import UpstreamOps
from ..model.native_yaml import NativeFunctions, Op
from ..suggest import did_you_mean
from ..text import Span

UPSTREAM_NAMESPACE = "aten"


def _func_span(op: Op) -> Span:
    source = op.function.source
    return source.func_scalar.span.shifted(op.line) if source is not None else Span.point(op.line, 0)


def upstream_diagnostics(functions: NativeFunctions, upstream: UpstreamOps) -> list[Diagnostic]:
    """OPG590 for an op whose schema is not the release's, OPG591 for an aten op the release does not declare."""
    out: list[Diagnostic] = []
    for op in functions.ops:
        f = op.function
        if op.generated or f.namespace != UPSTREAM_NAMESPACE:
            continue
        name = str(f.func.name)
        theirs = upstream.schemas.get(name)
        if theirs is None:
            hint, data = did_you_mean(name, upstream.schemas)
            out.append(diag("OPG591", _func_span(op), f"torch {upstream.version} declares no operator '{name}'{hint}; "
                                                      "an op of the backend's own needs a namespace of its own "
                                                      "(func: my_backend::op(...))", data=data))
        elif str(f.func) != theirs:
            out.append(diag("OPG590", _func_span(op), f"'{name}' differs from torch {upstream.version}'s schema: "
                                                      f"{theirs}"))
    return out


def upstream_missing(version: str) -> Diagnostic:
    """OPG900 when the pinned release's own native_functions.yaml is not at hand: nothing is compared."""
    return diag("OPG900", Span.point(0, 0), f"torch {version}'s native_functions.yaml is not at hand, so this "
                                            f"backend's schemas are not compared with it: fetch it with `python3 "
                                            f"tools/torchgen_release.py {version}` (or install torch {version})")
