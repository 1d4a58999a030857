"""Options that change what is generated, as gen.py's flags do."""

from __future__ import annotations

from ..frozen import record
from ..model.dispatch import DispatchKey, K
from ..releases import DEFAULT, Release

_MPS_KEYS = frozenset(K[n] for n in ("MPS", "SparseMPS", "SparseCsrMPS"))
XPU_FAMILY_KEYS = frozenset(K[n] for n in ("XPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU"))


@record
class CodegenOptions:
    mps: bool = False
    xpu: bool = False
    mtia: bool = False
    release: Release = DEFAULT

    @property
    def ignore_keys(self) -> frozenset[DispatchKey]:
        """Dispatch keys gen.py leaves out of its model unless their flag is given."""
        keys: set[DispatchKey] = set()
        if not self.mps:
            keys |= _MPS_KEYS
        if not self.xpu:
            keys |= XPU_FAMILY_KEYS if self.release.xpu_family_waits_for_flag else {K["XPU"]}
        if not self.mtia:
            keys.add(K["MTIA"])
        return frozenset(keys)
