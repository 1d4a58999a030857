"""Options that change what is generated, as gen.py's flags do."""

from __future__ import annotations

from ..frozen import record
from ..model.dispatch import DispatchKey, K
from ..releases import Release

_MPS_KEYS = frozenset(K[n] for n in ("MPS", "SparseMPS", "SparseCsrMPS"))
XPU_FAMILY_KEYS = frozenset(K[n] for n in ("XPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU"))


def xpu_flag_keys(release: Release) -> frozenset[DispatchKey]:
    """The dispatch keys gen.py of `release` leaves out without --xpu: XPU (from 2.6), its family (from 2.14);
    none before 2.6, whose gen.py has no --xpu and generates XPU's kernels always."""
    if not release.gen_py_takes_xpu:
        return frozenset()
    return XPU_FAMILY_KEYS if release.xpu_family_waits_for_flag else frozenset({K["XPU"]})


@record
class CodegenOptions:
    release: Release
    mps: bool = False
    xpu: bool = False
    mtia: bool = False

    @property
    def ignore_keys(self) -> frozenset[DispatchKey]:
        """Dispatch keys gen.py leaves out of its model unless their flag is given."""
        keys: set[DispatchKey] = set()
        if not self.mps:
            keys |= _MPS_KEYS
        if not self.xpu:
            keys |= xpu_flag_keys(self.release)
        if not self.mtia:
            keys.add(K["MTIA"])
        return frozenset(keys)
