"""OPG960: the fallback ops (torchgen's aoti/fallback_ops.py) that gen.py's AOTInductor C shim generator fails on.

Which ops get a shim, and their versions, is data: the `inductor_fallback_ops` and `aten_shimified_ops` dicts of
fallback_ops.py (before torch 2.8 `inductor_fallback_ops` is a set of names: one version each). opgen reads that
file as data (a Python literal, never executed): from the PyTorch tree around the ATen folder, else from the
installed torchgen. The check needs it, so the parse of native_functions.yaml alone cannot say it: `opgen check`,
the server and `opgen generate` (before anything is written) ask this module. The shims themselves are written by
codegen/files/aoti.py.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Mapping, Sequence

from ..diagnostics import Diagnostic, diag
from ..index.inputs import InputError, read_input
from ..index.native import NativeSnapshot, problem_span
from ..model import dispatch as dk
from ..model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ..model.native_yaml import NativeFunctions
from ..model.schema import OperatorName
from ..pieces.dest import aoti
from ..pieces.dest.aoti import FallbackOps
from ..releases import Release
from ..syntax import python_source
from .fallback_ops_files import fallback_ops_candidates

FALLBACK_DICTS = ("inductor_fallback_ops", "aten_shimified_ops")


def _assignment(node: ast.stmt) -> tuple[ast.expr, ast.expr | None] | None:
    """(target, value) of a statement that assigns one target, annotated or not."""
    if isinstance(node, ast.AnnAssign):
        return node.target, node.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0], node.value
    return None


def _literal_assignments(text: str) -> dict[str, object]:
    tree = python_source.parse(text)
    out: dict[str, object] = {}
    for node in tree.body:
        target, value = _assignment(node) or (None, None)
        if isinstance(target, ast.Name) and target.id in FALLBACK_DICTS and value is not None:
            out[target.id] = ast.literal_eval(value)
    return out


def _versions_of(table: object, what: str, with_since: bool, versioned: bool = True
                 ) -> tuple[tuple[str, tuple[aoti.OpVersion, ...]], ...]:
    if not versioned:
        # A set of names (before torch 2.8), one version each. gen.py only asks `name in` it, so a dict, list or
        # tuple serves as well (and other members never match); a string would match its substrings.
        if not isinstance(table, (set, frozenset, dict, list, tuple)):
            raise aoti.FallbackOpsError(f"{what} is not a set of op names")
        return tuple((name, (aoti.OpVersion(1),)) for name in sorted({n for n in table if isinstance(n, str)}))
    if not isinstance(table, dict):
        raise aoti.FallbackOpsError(f"{what} is not a dict")
    return tuple((name, aoti.parse_versions(name, meta if isinstance(meta, dict) else {}, with_since))
                 for name, meta in table.items())


def parse_fallback_ops(text: str, path: str = "fallback_ops.py",
                       *, release: Release) -> tuple[FallbackOps | None, str | None]:
    """fallback_ops.py's two dicts, read as literals in the release's format; (None, error) when they cannot
    be read."""
    try:
        tables = _literal_assignments(text)
        needed = FALLBACK_DICTS if release.writes_aten_c_shim else FALLBACK_DICTS[:1]
        missing = [n for n in needed if n not in tables]
        if missing:
            return None, f"{path}: no {', '.join(missing)}"
        with_since = release.fallback_variants_carry_since
        inductor = _versions_of(tables["inductor_fallback_ops"], "inductor_fallback_ops", with_since,
                                release.aoti_shim_form.fallback_ops_versioned)
        return FallbackOps(inductor,
                           _versions_of(tables.get("aten_shimified_ops", {}), "aten_shimified_ops", with_since)), None
    except (SyntaxError, ValueError) as exc:  # FallbackOpsError is a ValueError, as literal_eval's errors are
        return None, f"{path}: {exc}"


def load_fallback_ops(source_path: str, release: Release) -> tuple[FallbackOps | None, str]:
    """torchgen's fallback ops lists, read as data in the release's format; (None, why) when there are none
    to read, (None, "") for a release whose shims are every op's (before 2.4: it has no fallback_ops.py)."""
    if release.aoti_shim_form.every_op:
        return None, ""
    for path in fallback_ops_candidates(source_path):
        if os.path.isfile(path):
            try:
                text = read_input(path)
            except InputError as exc:
                return None, str(exc)
            ops, error = parse_fallback_ops(text, path, release=release)
            return ops, error or ""
    return None, "needs torchgen's aoti/fallback_ops.py (not found beside --source-path nor installed)"


def shim_devices(release: Release, *, with_mps: bool = False, with_xpu: bool = False) -> list[dk.DispatchKey | None]:
    """The devices that get a shim file (None: aten, through the dispatcher), before a release that writes them in
    its loop over the dispatch keys keeps only those keys (codegen.files.aoti.aoti_backends)."""
    if not release.writes_aoti_c_shims:
        return []
    keys: list[dk.DispatchKey | None] = [dk.K["CPU"], dk.K["CUDA"]]
    if release.writes_aten_c_shim:
        keys.append(None)
    if with_mps and release.aoti_shim_form.for_every_device:
        keys.append(dk.K["MPS"])
    if with_xpu:
        keys.append(dk.K["XPU"])
    return keys


def default_shim_devices(release: Release) -> list[dk.DispatchKey | None]:
    """The devices gen.py's default run (no --mps, --xpu, --backend-whitelist) writes shims for: CPU and CUDA are
    among its dispatch keys, aten is not one."""
    keys = shim_devices(release)
    return [k for k in keys if k is not None] if release.aoti_shim_form.follow_dispatch_keys else keys


def backend_index(model: NativeFunctions, key: dk.DispatchKey) -> BackendIndex:
    """gen.py's index for a key; a key without kernels gets its default (an empty, Undefined index)."""
    index = model.backend_indices.get(key)
    if index is None:
        return BackendIndex(dk.K["Undefined"], use_out_as_primary=True, device_guard=False, external=False, index={})
    return index


def fallback_op_name(f: NativeFunction) -> str:
    return f"{f.namespace}.{f.func.name.name}.{f.func.name.overload_name or 'default'}"


def fallback_functions(native_functions: Sequence[NativeFunction], table: Mapping[str, object]
                       ) -> list[tuple[str, NativeFunction]]:
    """The listed ops present in the yaml, sorted by fallback name (a later duplicate wins)."""
    found = {name: f for f in native_functions if (name := fallback_op_name(f)) in table}
    return sorted(found.items())


def structured_delegates(groups: Sequence[object]) -> dict[OperatorName, NativeFunctionsGroup]:
    """The out= op a group's functions delegate to -> the group (other groups are passed over)."""
    out: dict[OperatorName, NativeFunctionsGroup] = {}
    for g in groups:
        if not isinstance(g, NativeFunctionsGroup):
            continue
        delegate = next((f.structured_delegate for f in g.functions() if f.structured_delegate is not None), None)
        if delegate is not None:
            out[delegate] = g
    return out


def listed_with_backends(model: NativeFunctions, table: Mapping[str, object], key: dk.DispatchKey | None,
                         extend: bool = False
                         ) -> tuple[list[tuple[str, NativeFunction]], tuple[BackendIndex | None, ...]]:
    """The listed ops present in the yaml, and the backend each device shim calls (None: through the dispatcher
    for aten, else no shim for the device). extend: --extend-aoti-c-shim."""
    listed = fallback_functions(model.native_functions, table)
    if key is None:
        return listed, (None,) * len(listed)
    delegates = structured_delegates(model.groups)
    all_indices = {k: backend_index(model, k) for k in (key, dk.CEA, dk.CEA_NON_FUNCTIONAL, dk.CIA)}
    return listed, tuple(aoti.backend_index_for(f, delegates, key, all_indices, extend=extend) for _, f in listed)


# What gen.py's shim generator makes of one listed op, kept by the server between re-checks:
# id(schema) -> (schema, versions, release, the failure or None).
ShimVerdicts = dict[int, tuple[object, object, Release, "aoti.ShimFails | None"]]


def _shim_fails(f: NativeFunction, versions: tuple[aoti.OpVersion, ...], release: Release,
                verdicts: ShimVerdicts) -> aoti.ShimFails | None:
    """Why gen.py's shim generator fails on the op (None when it writes a shim or leaves the op out); the device
    and the call do not change what fails, so one try per op."""
    kept = verdicts.get(id(f.func))
    if kept is not None and kept[0] is f.func and kept[1] is versions and kept[2] is release:
        return kept[3]
    fails: aoti.ShimFails | None = None
    try:
        aoti.compute_shim(f.func, "cpu", "", versions, release)
    except aoti.NoCShim:
        pass
    except aoti.ShimFails as exc:
        fails = exc
    verdicts[id(f.func)] = (f.func, versions, release, fails)
    return fails


def every_op_shim_failures(model: NativeFunctions, release: Release, devices: Sequence[dk.DispatchKey | None]
                           ) -> tuple[Diagnostic, ...]:
    """OPG960 at each argument gen.py's shim generator fails on (an assertion) in the every-op form (until 2.3),
    for an op that gets a shim on one of the devices."""
    keys = [k for k in devices if k is not None]
    indices = {k: backend_index(model, k) for k in {*keys, dk.CEA, dk.CEA_NON_FUNCTIONAL}}
    found = []
    for op in model.ops:
        f = op.function
        if not any(aoti.every_op_backend_index(f, k, indices) is not None for k in keys):
            continue
        fails = _shim_fails(f, (aoti.OpVersion(1),), release, {})
        if fails is not None:
            at = next(i for i, a in enumerate(f.func.arguments.flat_all) if a.name == fails.argument)
            found.append(diag("OPG960", problem_span(op, ("arg", at)),
                              f"gen.py of {release} writes an AOTI C shim for every op with a kernel, and its shim "
                              f"generator fails on the argument '{fails.argument}' of {f.func.name}, {fails}: give "
                              "it another type"))
    return tuple(found)


def shim_failures(model: NativeFunctions, fallbacks: FallbackOps, release: Release,
                  devices: Sequence[dk.DispatchKey | None], extend: bool = False,
                  verdicts: ShimVerdicts | None = None) -> tuple[Diagnostic, ...]:
    """OPG960 at each argument of a listed op that gen.py's shim generator fails on, for the devices that get
    shims. verdicts keeps each op's verdict for the next call (the server's re-checks)."""
    verdicts = {} if verdicts is None else verdicts
    by_name = {fallback_op_name(f): f for f in model.native_functions}  # a later duplicate wins, as in gen.py
    failing: dict[str, aoti.ShimFails] = {}
    for name, versions in (*fallbacks.inductor, *fallbacks.aten):
        f = by_name.get(name)
        if f is not None and name not in failing and (fails := _shim_fails(f, versions, release, verdicts)):
            failing[name] = fails
    if not failing:
        return ()
    ops = {id(op.function): op for op in model.ops}
    found: dict[str, Diagnostic] = {}
    for key in devices:
        table = fallbacks.aten_map if key is None else fallbacks.inductor_map
        listed, indices = listed_with_backends(model, table, key, extend)
        for (name, f), index in zip(listed, indices):
            if name in failing and name not in found and (key is None or index is not None) and id(f) in ops:
                fails = failing[name]
                at = next(i for i, a in enumerate(f.func.arguments.flat_all) if a.name == fails.argument)
                found[name] = diag("OPG960", problem_span(ops[id(f)], ("arg", at)),
                                   f"'{name}' is an AOTI fallback op (aoti/fallback_ops.py), and gen.py's C shim "
                                   f"generator fails on its argument '{fails.argument}', {fails}, instead of leaving "
                                   "the op without a shim: give it another type, or take the op off the list")
    return tuple(sorted(found.values(), key=lambda d: (d.span.start_line, d.span.start_col)))


def _file_state(source_path: str) -> tuple:
    """The first fallback_ops.py load_fallback_ops would read, and its size and modification time."""
    for path in fallback_ops_candidates(source_path):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):  # as load_fallback_ops' isfile, from the same stat
            return path, st.st_size, st.st_mtime_ns
    return ()


class ShimCheck:
    """The check of a native_functions.yaml (<ATen>/native/) as gen.py's default run writes the shims, with the
    fallback_ops.py generate would read; none when there is none to read (generate says why). For the language
    server's re-checks, fallback_ops.py is read again only when it changes on disk, and each listed op's verdict
    is kept while its entry is unchanged (a whole check costs several ms)."""

    def __init__(self) -> None:
        self._read: dict[tuple, tuple[FallbackOps | None, str]] = {}  # (source, release, file state) -> read
        self._verdicts: ShimVerdicts = {}

    def __call__(self, native_path: str, snapshot: NativeSnapshot) -> list[Diagnostic]:
        source = os.path.dirname(os.path.dirname(os.path.abspath(native_path)))
        key = (source, snapshot.release, _file_state(source))
        if key not in self._read:
            self._read = {key: load_fallback_ops(source, snapshot.release)}
        fallbacks = self._read[key][0]
        if fallbacks is None:
            return []
        found = list(shim_failures(snapshot.functions, fallbacks, snapshot.release,
                                   default_shim_devices(snapshot.release), verdicts=self._verdicts))
        listed = len(fallbacks.inductor) + len(fallbacks.aten)
        if len(self._verdicts) > 2 * listed + 64:  # verdicts of entries edited since
            self._verdicts.clear()
        return found


def shim_check(native_path: str, snapshot: NativeSnapshot) -> list[Diagnostic]:
    """For `opgen check`: OPG960 on a native_functions.yaml (one ShimCheck, used once)."""
    return ShimCheck()(native_path, snapshot)
