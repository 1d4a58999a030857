"""What every file family needs: the model, the valid tags and gen.py's options, with gen.py's derived sets."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from ...model import dispatch as dk
from ...model.codegen_rules import FUNCTIONS_KEYS
from ...model.native_aot import NONE, NativeAot, NativeAotDeclaration
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup
from ...model.native_yaml import NativeFunctions
from ...pieces.dest.aoti import FallbackOps
from ...releases import Release
from ..contributions import Contributions
from ..options import CodegenOptions, xpu_flag_keys
from ..selection import ALL_OPERATORS, Selection
from .narrow import index_flags

K = dk.K
T = TypeVar("T")
# A family's contributions to a file: (family, items, compute), as GenContext.per_items takes them.
Part = tuple[str, Sequence[Any], Callable[[Any], Any]]

# gen.py's dispatch_keys: the keys that get a Register<Key>.cpp, in this order.
GEN_DISPATCH_KEYS: tuple[dk.DispatchKey, ...] = tuple(K[n] for n in (
    "CPU", "SparseCPU", "SparseCsrCPU", "MkldnnCPU", "CUDA", "MPS", "XPU", "SparseXPU", "SparseCsrXPU",
    "SparseCUDA", "SparseCsrCUDA", "SparseMPS", "SparseCsrMPS", "QuantizedCPU", "QuantizedCUDA",
    "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "NestedTensorCPU", "NestedTensorCUDA", "NestedTensorXPU",
    "NestedTensorHPU", "Meta", "SparseMeta", "SparseCsrMeta", "QuantizedMeta", "NestedTensorMeta",
    "ZeroTensor", "MTIA",
))
# FUNCTIONS_KEYS (model/codegen_rules.py): the keys that get <Key>Functions.h and <Key>Functions_inl.h.
_MPS_KEYS = frozenset(K[n] for n in ("MPS", "SparseMPS", "SparseCsrMPS"))
UNDEFINED = K["Undefined"]


@dataclass(frozen=True)
class GenerateOptions:
    """gen.py's command line, as values."""

    source_path: str = "aten/src/ATen"
    install_dir: str = "build/aten/src/ATen"
    headeronly_install_dir: str | None = None
    aoti_install_dir: str = "torch/csrc/inductor/aoti_torch/generated"
    per_operator_headers: bool = False
    rocm: bool = False
    mps: bool = False
    xpu: bool = False
    mtia: bool = False
    op_registration_whitelist: tuple[str, ...] | None = None
    op_selection_yaml_path: str | None = None
    backend_whitelist: tuple[str, ...] | None = None
    static_dispatch_backend: tuple[str, ...] | None = None
    skip_dispatcher_op_registration: bool = False
    force_schema_registration: bool = False
    generate: frozenset[str] = frozenset({"headers", "sources", "declarations_yaml"})
    dry_run: bool = False
    output_dependencies: str | None = None
    # --update-aoti-c-shim: write the c_shim_<device>.h headers (else compare them with the ones in the aoti
    # install dir); --extend-aoti-c-shim: shims of out-of-tree ops, only for their own kernels.
    update_aoti_c_shim: bool = False
    extend_aoti_c_shim: bool = False
    # The torch release whose gen.py is matched (detected from the inputs, or --torch-version): no default.
    release: Release = field(kw_only=True)
    # --native-aot-ops-dir (gen.py from torch 2.15): None for the checkout's torch/_native/ops, "" for none.
    native_aot_ops_dir: str | None = None

    @property
    def with_mps(self) -> bool:
        """MPS kernels are kept: --mps, or --update-aoti-c-shim (its headers cover every device; from torch 2.8)."""
        return self.mps or self._update_keeps_every_device

    @property
    def xpu_flag(self) -> bool:
        """--xpu as the release's gen.py reads it: before 2.6 it has none (Release.gen_py_takes_xpu), XPU's kernels
        are generated always, into the main folder, and nothing else of --xpu's."""
        return self.xpu and self.release.gen_py_takes_xpu

    @property
    def with_xpu(self) -> bool:
        """XPU kernels are kept: --xpu, or --update-aoti-c-shim (XPU files then stay in the main folder; from
        torch 2.8)."""
        return self.xpu_flag or self._update_keeps_every_device

    @property
    def _update_keeps_every_device(self) -> bool:
        return self.update_aoti_c_shim and self.release.aoti_shim_form.for_every_device

    @property
    def ignore_keys(self) -> frozenset[dk.DispatchKey]:
        """The dispatch keys left out of the model."""
        return CodegenOptions(self.release, self.with_mps, self.with_xpu, self.mtia).ignore_keys

    @property
    def headeronly_dir(self) -> str:
        if self.headeronly_install_dir is not None:
            return self.headeronly_install_dir
        return f"{self.install_dir}/core"

    @property
    def dispatch_keys(self) -> tuple[dk.DispatchKey, ...]:
        keys = [k for k in GEN_DISPATCH_KEYS if self.with_mps or k not in _MPS_KEYS]
        keys = [k for k in keys if (self.with_xpu or k not in self._xpu_flag_keys) and (self.mtia or k is not K["MTIA"])]
        keys = [k for k in keys if k.name not in self.release.dispatch_keys_unknown]
        if self.backend_whitelist:
            keys = [k for k in keys if dk.is_generic_dispatch_key(k) or str(k) in self.backend_whitelist]
        return tuple(keys)

    @property
    def _xpu_flag_keys(self) -> frozenset[dk.DispatchKey]:
        """The keys --xpu brings in."""
        return xpu_flag_keys(self.release)

    @property
    def functions_keys(self) -> frozenset[dk.DispatchKey]:
        keys = set(FUNCTIONS_KEYS)
        if self.with_mps:
            keys |= _MPS_KEYS
        if self.with_xpu:
            keys.add(K["XPU"])
        for name in self.static_dispatch_backend or ():
            key = dk.parse_dispatch_key(name)
            if key is not None:
                keys.add(key)
        return frozenset(keys)


@dataclass(frozen=True)
class GenContext:
    model: NativeFunctions
    valid_tags: frozenset[str]
    options: GenerateOptions
    templates: dict[str, str] = field(compare=False, repr=False)
    # torchgen's aoti/fallback_ops.py, read as data; None: not found, with the reason.
    fallback_ops: FallbackOps | None = field(default=None, compare=False, repr=False)
    fallback_ops_missing: str = field(default="", compare=False, repr=False)
    # --op-registration-whitelist / --op-selection-yaml-path (all operators unless given).
    selection: Selection = field(default=ALL_OPERATORS, compare=False, repr=False)
    # The native-AOT declarations gen.py reads (torch 2.15 on; none before).
    native_aot: NativeAot = field(default=NONE, compare=False, repr=False)
    # The per-item contributions kept across runs (codegen/contributions.py); None: each computed anew.
    contributions: Contributions | None = field(default=None, compare=False, repr=False)

    def per_item(self, family: str, item: Any, compute: Callable[[Any], T]) -> T:
        """compute(item), the item's contribution to the family: kept across runs when there is a memo. compute
        must read nothing of the model but the item (and the run's constants: options, templates, ...)."""
        if self.contributions is None:
            return compute(item)
        return self.contributions.of(family, item, compute)

    def values_key(self, what: str, *parts: Part) -> Callable[[], str] | None:
        """The key of a file whose environment is made from nothing but the run's constants and, in order, the
        contributions of these items to these families (family, items, compute): the digest of those contributions
        (read without loading them: Contributions.digests_blob). None without a memo. `what` names the file."""
        memo = self.contributions
        if memo is None:
            return None

        def key() -> str:
            h = hashlib.sha1(what.encode() + b"\0")
            for n, (family, items, compute) in enumerate(parts):
                blob = memo.digests_blob(family, items, compute, f"{what}\0{n}")
                h.update(f"{family}\0{len(items)}\0".encode() + blob)
            return h.hexdigest()
        return key

    def parts_key(self, what: str, *parts: Part) -> str:
        """values_key(what, *parts)() (a memo is required)."""
        key = self.values_key(what, *parts)
        if key is None:
            raise ValueError("parts_key needs the contributions memo")
        return key()

    def per_items(self, family: str, items: Sequence[Any], compute: Callable[[Any], T]) -> list[T]:
        """[per_item(family, item, compute) for item in items], in bulk."""
        if self.contributions is None:
            return list(map(compute, items))
        return self.contributions.many(family, items, compute)

    def native_aot_for(self, key: dk.DispatchKey, g: NativeFunction | NativeFunctionsGroup
                       ) -> NativeAotDeclaration | None:
        """The declaration whose stub the structured wrapper of g under key consults: the one naming g's functional
        name.overload, else its base name (gen.py's order)."""
        if not self.native_aot.declarations or not isinstance(g, NativeFunctionsGroup):
            return None
        for_key = {d.op: d for d in self.native_aot.declarations if d.dispatch_key == str(key)}
        name = g.functional.func.name
        return for_key.get(str(name)) or for_key.get(name.name.base)

    def native_aot_keys(self) -> frozenset[str]:
        return frozenset(d.dispatch_key for d in self.native_aot.declarations)

    @cached_property
    def native_functions(self) -> tuple[NativeFunction, ...]:
        return self.model.native_functions

    @property
    def groups(self) -> tuple[NativeFunction | NativeFunctionsGroup, ...]:
        return self.model.groups

    @cached_property
    def structured_groups(self) -> tuple[NativeFunctionsGroup, ...]:
        return tuple(g for g in self.model.groups if isinstance(g, NativeFunctionsGroup))

    @cached_property
    def view_groups(self) -> tuple[NativeFunctionsViewGroup, ...]:
        return tuple(g for g in self.model.view_groups if isinstance(g, NativeFunctionsViewGroup))

    @cached_property
    def static_dispatch_backends(self) -> tuple[dk.DispatchKey, ...]:
        """--static-dispatch-backend's keys (checked before planning)."""
        keys = (dk.parse_dispatch_key(name) for name in self.options.static_dispatch_backend or ())
        return tuple(k for k in keys if k is not None)

    def backend_index(self, key: dk.DispatchKey) -> BackendIndex:
        """gen.py's index for a key; a key without kernels gets its default (an empty, Undefined index)."""
        index = self.model.backend_indices.get(key)
        if index is None:
            return BackendIndex(UNDEFINED, use_out_as_primary=True, device_guard=False, external=False, index={})
        return index

    @cached_property
    def declared_indices(self) -> dict[dk.DispatchKey, BackendIndex]:
        """The indices NativeFunctions.h walks, in gen.py's order: its backend_indices is a defaultdict, so by the
        time it writes the headers the static dispatch keys, and (when it wrote the sources first) every dispatch
        key, have been looked up and added, empty, after the keys with kernels. Each adds an empty namespace block
        (at::native) to an op whose kernels live in another namespace."""
        out = dict(self.model.backend_indices)
        added = self.static_dispatch_backends + (self.options.dispatch_keys if "sources" in self.options.generate
                                                 else ())
        for key in added:
            out.setdefault(key, self.backend_index(key))
        return out

    @cached_property
    def declared_flags(self) -> str:
        """What a group's kernel declarations read of the declared indices besides its own kernels: which there
        are and their flags."""
        return ",".join(map(index_flags, self.declared_indices.values()))
