"""The kernel index inside the server: where it comes from, built in the background, kept up to date.

- Roots: the `kernelDirs` setting (a PyTorch checkout's root stands for its aten/src/ATen), else
  `aten/src/ATen` when the workspace is a PyTorch checkout; none elsewhere (then the missing-kernel
  check is off). The macros of the tree's headers (aten/src/ATen and c10) are read too.
- Built off the event loop on its own thread (so analyses keep flowing), reusing the index's
  cache across restarts (keyed by file size and mtime), with `$/progress` when the client accepts it.
- A C++ file that changes (didChangeWatchedFiles, didSave) is re-scanned on the analysis thread,
  one file at a time; the state's generation goes up, which makes native analyses stale.

The state is read by Workspace.analyse (missing kernels) and by the hover/definition/code
action handlers. Nothing here knows LSP types except the progress calls in `build`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Protocol

from lsprotocol import types

from ..diagnostics import Severity
from ..index.kernels import ATEN, KernelIndex, covered, default_cache_path, tree_header_roots, tree_sources
from .host import Host

logger = logging.getLogger(__name__)

SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "information": Severity.INFORMATION,
              "hint": Severity.HINT, "off": None}


def kernel_roots(kernel_dirs: tuple[str, ...], root: str | None) -> tuple[str, ...]:
    """The folders to index: the configured ones (relative to the workspace root), else the checkout's
    aten/src/ATen."""
    if kernel_dirs:
        out = []
        for d in kernel_dirs:
            path = os.path.expanduser(d)
            if not os.path.isabs(path) and root:
                path = os.path.join(root, path)
            out.append(tree_sources(os.path.normpath(path)))
        return tuple(out)
    if root and os.path.isdir(os.path.join(root, ATEN)):
        return (os.path.normpath(os.path.join(root, ATEN)),)
    return ()


@dataclass
class KernelState:
    roots: tuple[str, ...] = ()
    header_roots: tuple[str, ...] = ()  # the tree's header folders (their macros count) outside the roots
    index: KernelIndex | None = None
    generation: int = 0
    severity: Severity | None = Severity.WARNING
    building: bool = False
    # Files changed while the index was being built: re-scanned once it is there.
    pending: set[str] = field(default_factory=set)
    # The task building the index (tests and shutdown wait on it).
    task: asyncio.Task | None = None

    def key(self) -> tuple:
        return (self.generation, self.severity) if self.roots else ()

    @property
    def active(self) -> bool:
        return self.index is not None and self.severity is not None

    def covers(self, path: str) -> bool:
        return covered(path, self.roots, self.header_roots)


class KernelModel(Protocol):
    """The workspace as the kernel index sees it."""

    @property
    def kernels(self) -> KernelState: ...

    @property
    def root(self) -> str | None: ...


class KernelHost(Host, Protocol):
    """The server as the kernel index sees it: the workspace, and a thread of the index's own to build it on."""

    @property
    def model(self) -> KernelModel: ...

    @property
    def kernel_executor(self) -> Executor: ...


def configure(server: KernelHost) -> None:
    """Apply the settings: a new severity re-checks; new roots rebuild the index."""
    state = server.model.kernels
    severity = SEVERITIES.get(server.settings.kernel_severity, Severity.WARNING)
    roots = kernel_roots(server.settings.kernel_dirs, server.model.root)
    absent = [r for r in roots if not os.path.isdir(r)]
    if absent:  # (else every kernel would be reported missing from it)
        server.warn(f"opgen: kernelDirs: no such folder: {', '.join(absent)}; left out")
        roots = tuple(r for r in roots if r not in absent)
    if severity != state.severity:
        state.severity = severity
        state.generation += 1
    if roots != state.roots:
        state.roots, state.header_roots = roots, tree_header_roots(list(roots))
        state.index = None
        state.generation += 1
        if state.task is not None:
            state.task.cancel()
            state.task = None
        if roots and server.configured.is_set():
            state.task = asyncio.ensure_future(build(server))


def start(server: KernelHost) -> None:
    """Start building the index (once the settings are known)."""
    state = server.model.kernels
    # A task that has ended (a build that failed) is no task: read `done()`, not what a finisher would clear.
    if state.roots and state.index is None and (state.task is None or state.task.done()):
        state.task = asyncio.ensure_future(build(server))


async def build(server: KernelHost) -> None:
    state = server.model.kernels
    roots = state.roots
    state.building = True
    token = await server.begin_progress("kernels", types.WorkDoneProgressBegin(
        title="opgen: indexing kernels", cancellable=False, message=", ".join(roots)))
    message = "cancelled"
    try:
        loop = asyncio.get_running_loop()
        index = await loop.run_in_executor(server.kernel_executor, functools.partial(
            KernelIndex.build, list(roots), cache=default_cache_path(list(roots)),
            workers=server.settings.testing.kernel_workers or None))
        if state.roots != roots:
            return
        pending, state.pending = sorted(state.pending), set()
        if pending:
            await loop.run_in_executor(server.analysis_executor, _update_all, index, pending)
        state.index = index
        state.generation += 1
        kernels = sum(len(f.symbols) for f in index.files.values())
        message = f"{len(index.files)} files, {kernels} symbols"
        server.log(f"opgen: kernel index of {', '.join(roots)}: {message}")
        server.recheck_stale()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        message = f"failed: {exc}"
        server.report_failure("indexing kernels", exc)
    finally:
        state.building = False
        if token is not None:
            server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            server.work_done_progress.tokens.pop(token, None)


def _update_all(index: KernelIndex, paths: list[str]) -> None:
    for path in paths:
        index.update(path)


async def files_changed(server: KernelHost, paths: list[str]) -> bool:
    """Re-scan the changed C++ files the index covers; True when any was."""
    state = server.model.kernels
    touched = sorted({os.path.normpath(os.path.abspath(p)) for p in paths if state.covers(p)})
    if not touched:
        return False
    if state.index is None:
        if state.building:
            state.pending.update(touched)
        return False
    index = state.index
    await asyncio.get_running_loop().run_in_executor(server.analysis_executor, _update_all, index, touched)
    if state.index is index:
        state.generation += 1
    return True


class _Model:
    """The part of NativeFunctions that missing_kernels reads, for a few ops at a time."""

    __slots__ = ("ops", "groups", "backend_indices")

    def __init__(self, ops, groups, backend_indices) -> None:
        self.ops, self.groups, self.backend_indices = ops, groups, backend_indices


class _Snapshot:
    __slots__ = ("functions",)

    def __init__(self, functions: _Model) -> None:
        self.functions = functions


class MissingKernels:
    """missing_kernels, remembered per op between re-checks: an edit re-checks only the ops whose entry
    changed (an op's NativeFunction is cached by its entry's text), and moves the others' diagnostics
    with their entry. Everything is dropped when the index, the severity or the set of backends changes."""

    def __init__(self) -> None:
        self._key: tuple = ()
        # id(function) -> (function, (structured group's meta name, generated view_copy?), diagnostics relative
        # to the entry's line)
        self._ops: dict[int, tuple[object, tuple[str | None, bool], tuple]] = {}

    def __call__(self, snapshot, index: KernelIndex, generation: int, severity: Severity, declare,
                 parameters=None) -> tuple:
        from ..analysis.kernel_nav import meta_name
        from ..analysis.kernels import generated_view_copies, missing_kernels
        from ..model.native_function import NativeFunctionsGroup

        model = snapshot.functions
        key = (id(index), generation, severity, frozenset(model.backend_indices))
        if key != self._key:
            self._key, self._ops = key, {}
        groups = {g.out.func.name: g for g in model.groups if isinstance(g, NativeFunctionsGroup)}
        copies = generated_view_copies(model)  # whole-model knowledge the per-op checks below need
        # (by identity: the view groups hold the ops' own functions, and hashing a function hashes its schema)
        copy_ids = {id(c) for c in copies}
        out: list = []
        seen: dict[int, tuple[object, tuple[str | None, bool], tuple]] = {}
        for op in model.ops:
            f = op.function
            group = groups.get(f.func.name) if f.structured else None
            meta = meta_name(group) if group is not None else None
            generated = id(f) in copy_ids
            cached = self._ops.get(id(f))
            if cached is None or cached[0] is not f or cached[1] != (meta, generated):
                # missing_kernels reads only .functions' ops, groups and backend_indices: this op's slice of
                # the model stands for the snapshot.
                found = missing_kernels(_Snapshot(_Model((op,), (group,) if group is not None else (),  # type: ignore[arg-type]
                                                         model.backend_indices)),
                                        index, declare=declare, parameters=parameters, severity=severity,
                                        view_copies=frozenset((f,)) if generated else frozenset(),
                                        with_meta=not snapshot.release.parse_only,
                                        copies_by_native_name=not snapshot.release.view_copy_kernels_by_backend_index)
                cached = (f, (meta, generated), tuple(d.shifted(-op.line) for d in found))
            seen[id(f)] = cached
            out.extend(d.shifted(op.line) for d in cached[2])
        self._ops = seen
        return tuple(out)
