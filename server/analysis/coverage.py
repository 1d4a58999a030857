"""Which ATen ops a backend covers in a torch release (`opgen coverage`).

Every op of the release's native_functions.yaml (generated out= and in-place variants included) falls in one
category:

- implemented: the backend yaml lists it (supported, full_codegen or autograd);
- free: the backend needs no kernel of its own: gen_backend_stubs writes the out= / in-place variant around the
  listed functional kernel (use_out_as_primary false), or the op has a composite kernel (CompositeImplicitAutograd
  decomposes it before any backend is reached, CompositeExplicitAutograd[NonFunctional] calls other ops);
- to implement: only backend-specific kernels (CPU, CUDA, ...), or a structured_delegate (which in-tree structured
  kernels share and an out-of-tree backend does not): the backend implements it or falls back (a boxed fallback
  such as a CPU fallback, or an error).
"""

from __future__ import annotations

from ..frozen import record
from ..index.backend import check_backend
from ..index.native import NativeSnapshot
from ..model.native_function import NativeFunction, NativeFunctionsGroup
from ..model.native_yaml import Op
from ..model.schema import OperatorName, SchemaKind, SchemaKindError

IMPLEMENTED, FREE, TO_IMPLEMENT = "implemented", "free", "to implement"
CATEGORIES = (IMPLEMENTED, FREE, TO_IMPLEMENT)
_COMPOSITE_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")


@record
class CoveredOp:
    op: str
    category: str
    how: str  # the sections that list it, the composite key or wrapped kernel, the kernels it has elsewhere


@record
class Coverage:
    release: str
    backend: str
    ops: tuple[CoveredOp, ...]
    # Ops the yaml lists that the release does not declare (the yaml's errors in this release).
    unknown: tuple[str, ...] = ()
    # Why the file cannot be reported on ("" when it can): said, never a table of 0 implemented ops.
    problem: str = ""

    def of(self, category: str) -> tuple[CoveredOp, ...]:
        return tuple(o for o in self.ops if o.category == category)

    def counts(self) -> dict[str, int]:
        return {c: len(self.of(c)) for c in CATEGORIES}


def _functionals(native: NativeSnapshot) -> dict[OperatorName, OperatorName]:
    """The functional variant of each out= / in-place op of a group."""
    out: dict[OperatorName, OperatorName] = {}
    for g in native.functions.groups:
        if isinstance(g, NativeFunctionsGroup):
            for f in g.functions():
                if f is not g.functional:
                    out[f.func.name] = g.functional.func.name
    return out


def _composite(op: Op) -> str | None:
    keys = {str(key) for key, _ in op.metadata}
    return next((k for k in _COMPOSITE_KEYS if k in keys), None)


def _elsewhere(f: NativeFunction, op: Op) -> str:
    """What the release itself has for an op a backend must implement: its kernels' keys, or its delegate."""
    if f.structured_delegate is not None:
        return f"structured_delegate: {f.structured_delegate}"
    keys = [str(key) for key, _ in op.metadata]
    return "kernels: " + ", ".join(keys) if keys else "no kernel"


def coverage(text: str, native: NativeSnapshot, path: str = "") -> Coverage:
    """Each op of `native`'s release, in file order, in its category for the backend yaml `text` (at `path`)."""
    backend = check_backend(text, native, path)
    if backend.vendor is not None:
        return Coverage(native.release.version, "?", (), problem=f"{backend.vendor.yaml.format}'s format is not read "
                                                                 "by opgen coverage yet (backend yamls only)")
    if backend.yaml is None:
        return Coverage(native.release.version, "?", (), problem="not a backend yaml (gen_backend_stubs' format)")
    resolved = backend.resolved
    listings = resolved.listings if resolved is not None else {}
    kernels = {**resolved.forward_kernels, **resolved.autograd_kernels} if resolved is not None else {}
    wraps = resolved is not None and not resolved.yaml.use_out_as_primary
    functional_of = _functionals(native)
    shown = str(resolved.yaml.backend.value) if resolved is not None and resolved.yaml.backend.present else "?"
    out = []
    for op in native.functions.ops:
        f = op.function
        name = f.func.name
        composite = _composite(op)
        functional = functional_of.get(name)
        if name in kernels:
            sections = dict.fromkeys(item.section for item in listings.get(name, ()))
            out.append(CoveredOp(str(name), IMPLEMENTED, ", ".join(sections)))
        elif wraps and functional in kernels and _kind(f) is not SchemaKind.functional \
                and not f.manual_kernel_registration:
            out.append(CoveredOp(str(name), FREE, f"generated around {functional}'s kernel"))
        elif composite is not None:
            out.append(CoveredOp(str(name), FREE, composite))
        else:
            out.append(CoveredOp(str(name), TO_IMPLEMENT, _elsewhere(f, op)))
    listed = (backend.yaml.forward + backend.yaml.autograd) if backend.yaml is not None else ()
    unknown = tuple(dict.fromkeys(str(i.name) for i in listed if i.name is not None and i.name not in kernels))
    return Coverage(native.release.version, shown, tuple(out), unknown)


def _kind(f: NativeFunction) -> SchemaKind | None:
    try:
        return f.func.kind()
    except SchemaKindError:  # a schema torchgen gives no kind (reported by the check)
        return None

