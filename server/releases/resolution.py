"""Which known release inputs belong to, and how it was found.

`detect` finds the release the inputs belong to (a PyTorch checkout's version.txt, the torch beside a
packaged torchgen), `recognise` tells it from a native_functions.yaml's own ops, and `resolve` turns what
was found, or `--torch-version` / opgen.torchVersion, into a profile and a note for a release newer or
older than the ones known. The migration notes say in which release an op came or went.
"""

from __future__ import annotations

import os
import re
from enum import Enum
from functools import lru_cache

from .. import __version__
from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..input_file import UnreadableFile, read_text
from ..text import Span
from .changelog import CUDA_KERNELS_IN_TORCH_CPU_2_15, RELEASES, release_at
from .profile import Release

# What opgen uses when nothing names a release (the reference it was first held to).
DEFAULT = release_at("2.13")
NEWEST = RELEASES[-1]
OLDEST = RELEASES[0]


def known_range() -> str:
    return f"{OLDEST.series} to {NEWEST.series}"


def server_version_text() -> str:
    """The language server's serverInfo.version: the package and the releases it serves, on one line."""
    return f"{__version__} (torch {OLDEST.series}-{NEWEST.series}, default {DEFAULT.series})"


# ---------------------------------------------------------------- versions

_VERSION = re.compile(r"\s*(\d+)\.(\d+)(?:\.(\d+))?([A-Za-z0-9.+_-]*)\s*\Z")


def parse_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of '2.14.1', '2.16.0a0', '2.15.0+cu132'; None when it is not a version."""
    m = _VERSION.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _key(release: Release) -> tuple[int, int]:
    key = parse_version(release.version)
    if key is None:  # a profile written wrong: opgen's own bug, not the user's input
        raise ValueError(f"the profile {release} has no version: {release.version!r}")
    return key


class Fit(Enum):
    KNOWN = "known"
    NEWER = "newer"  # newer than the newest profile: that profile, with a warning
    OLDER = "older"  # older than the oldest: not supported


@record
class Resolved:
    """The profile to use, and how it was chosen."""

    release: Release
    fit: Fit
    found: str  # the version as found or given ("2.16.0a0"); "" when nothing named one
    source: str  # where: "version.txt of ROOT", "--torch-version", "default", ...

    @property
    def note(self) -> str | None:
        """One line for a release other than a known one; None when the release is known."""
        if self.fit is Fit.NEWER:
            return (f"torch {self.found} ({self.source}) is newer than the releases opgen knows "
                    f"({known_range()}): checked and generated as torch {NEWEST.series}")
        if self.fit is Fit.OLDER:
            return (f"torch {self.found} ({self.source}) is older than the releases opgen knows ({known_range()}); "
                    "pass --torch-version to choose one")
        return None

    def status(self) -> dict[str, str]:
        """What a client shows of it (the server's opgen/release notification): the release as found, the
        profile's release, where it came from, how it fits, the note for one other than a known release."""
        return {"version": self.found or self.release.version, "profile": self.release.version,
                "source": self.source, "fit": self.fit.value, "label": self.label, "note": self.note or ""}

    @property
    def label(self) -> str:
        """How the release is shown: 'torch 2.14 (version.txt of /src/pytorch)'."""
        shown = f"torch {self.found}" if self.found else str(self.release)
        return f"{shown} ({self.source})"


def resolve(version: str, source: str) -> Resolved | None:
    """The profile for a version string; None when `version` is not one."""
    key = parse_version(version)
    if key is None:
        return None
    series = f"{key[0]}.{key[1]}"
    if any(r.series == series for r in RELEASES):
        return Resolved(release_at(series), Fit.KNOWN, version.strip(), source)
    if key > _key(NEWEST):
        return Resolved(NEWEST, Fit.NEWER, version.strip(), source)
    return Resolved(OLDEST, Fit.OLDER, version.strip(), source)


def default_resolved() -> Resolved:
    return Resolved(DEFAULT, Fit.KNOWN, "", "default")


# ---------------------------------------------------------------- detection

_PY_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


def _read_small(path: str) -> str | None:
    """The start of a small text file (version.txt, torch/version.py) by the bounded reader, so that a FIFO
    there is not waited on; None when there is no such file."""
    try:
        return read_text(path, limit=64 * 1024)[:4096]
    except UnreadableFile:
        return None


def _checkout_version(folder: str) -> tuple[str, str] | None:
    """A PyTorch checkout's release: version.txt at the root above aten/src/ATen."""
    if not os.path.isdir(os.path.join(folder, "aten", "src", "ATen")):
        return None
    text = _read_small(os.path.join(folder, "version.txt"))
    return (text.strip(), f"version.txt of {folder}") if text and parse_version(text) else None


def _packaged_version(folder: str) -> tuple[str, str] | None:
    """A packaged torchgen's release: torch/version.py beside the torchgen folder holding packaged/ATen."""
    if not os.path.isdir(os.path.join(folder, "torchgen", "packaged", "ATen")):
        return None
    path = os.path.join(folder, "torch", "version.py")
    m = _PY_VERSION.search(_read_small(path) or "")
    return (m.group(1), f"{path}") if m and parse_version(m.group(1)) else None


def _detect_upwards(folder: str) -> tuple[str, str] | None:
    while True:
        found = _checkout_version(folder) or _packaged_version(folder)
        if found is not None:
            return found
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def detect(path: str) -> tuple[str, str] | None:
    """(version, where it was read) of the torch release a native_functions.yaml (or its folder) belongs
    to, looking upwards from it: first in the tree it is placed in, then, when it is reached through a symbolic
    link (itself or a folder above it), in the tree of what the link points at; None when nothing says."""
    placed = os.path.abspath(path)
    found = _detect_upwards(placed if os.path.isdir(placed) else os.path.dirname(placed))
    if found is not None:
        return found
    real = os.path.realpath(path)
    if real == placed:
        return None
    return _detect_upwards(real if os.path.isdir(real) else os.path.dirname(real))


# ---------------------------------------------------------------- recognised from the content

CONTENT_SOURCE = "from its content"
# A whole release's native_functions.yaml has some 2,600 entries; a smaller file (a test's, a fork's excerpt)
# says too little about its release to be told one by its ops.
_FEWEST_ENTRIES = 1500
_MOST_BYTES = 16 * 1024 * 1024  # read no more than this to recognise a file by its content
_FUNC_NAME = re.compile(r"\n-[ \t]+func:[ \t]*([\w.]+)")


@lru_cache(maxsize=1)  # one table, computed from the known releases once
def _holders() -> tuple[tuple[str, frozenset[str]], ...]:
    """(name.overload, the versions of the known releases whose yaml has it) of every op some known release
    added or removed (release_ops.CHANGES): the ops whose presence tells the releases apart."""
    from .release_ops import CHANGES  # noqa: PLC0415  (a table, only read to recognise a file by its content)

    events: dict[str, list[tuple[str, bool]]] = {}
    for version, (added, removed, _) in CHANGES.items():
        for names, present in ((added, True), (removed, False)):
            for name in names:
                events.setdefault(name, []).append((version, present))
    out = []
    for name, changes in events.items():
        present, by_version, holders = not changes[0][1], dict(changes), set()
        for release in RELEASES:
            present = by_version.get(release.version, present)
            if present:
                holders.add(release.version)
        out.append((name, frozenset(holders)))
    return tuple(out)


def recognise(text: str) -> tuple[str, str] | None:
    """(series, how) of the known release whose native_functions.yaml `text` is, told by the ops each release
    added or removed: the release whose ops differ least from the file's, when it is a whole release's file and
    one release fits better than every other; None otherwise. `how` says how many of the telling ops differ."""
    names = set(_FUNC_NAME.findall("\n" + text))
    if len(names) < _FEWEST_ENTRIES:
        return None
    telling = [(name in names, holders) for name, holders in _holders()]
    differing = sorted((sum(has != (r.version in holders) for has, holders in telling), r.series) for r in RELEASES)
    (best, series), (second, _) = differing[0], differing[1]
    if best == second:
        return None
    how = CONTENT_SOURCE if best == 0 else f"{CONTENT_SOURCE}, the nearest: {best} of its ops differ"
    return series, how


def _content_of(path: str) -> str | None:
    try:
        return read_text(path, limit=_MOST_BYTES) if os.path.isfile(path) else None
    except UnreadableFile:
        return None


def resolve_for(path: str | None, override: str | None = None, override_source: str = "--torch-version",
                text: str | None = None) -> Resolved:
    """The profile for inputs at `path`: the override (`--torch-version`, opgen.torchVersion: named by
    `override_source`) if given, else the release detected from the path (its tree's version file), else the
    release recognised from the file's content (`text`, else read from `path` when it is a native_functions.yaml),
    else the default. An override that is no version is the caller's to refuse (see `resolve`)."""
    if override:
        given = resolve(override, override_source)
        if given is not None:
            return given
    found = detect(path) if path else None
    if found is not None:
        resolved = resolve(*found)
        if resolved is not None:
            return resolved
    if text is None and path and os.path.basename(path) == "native_functions.yaml":
        text = _content_of(path)
    recognised = recognise(text) if text else None
    if recognised is not None:
        return Resolved(release_at(recognised[0]), Fit.KNOWN, recognised[0], recognised[1])
    return default_resolved()


# derivs: the release of derivatives.yaml and deprecated.yaml
def resolve_for_autograd(path: str | None, native_path: str | None, override: str | None = None,
                         override_source: str = "--torch-version") -> Resolved:
    """The profile for a derivatives.yaml or deprecated.yaml, found as for a native_functions.yaml (the
    override, else its tree's version.txt or packaged torch/version.py); a file whose tree says none takes the
    release of the native_functions.yaml it is resolved against."""
    resolved = resolve_for(path, override, override_source)
    if resolved.source == default_resolved().source and native_path:
        return resolve_for(native_path, override, override_source)
    return resolved


def release_tags(resolved: Resolved) -> frozenset[str] | None:
    """The tags of the found release's own tags.yaml (release_ops.TAGS), for a native_functions.yaml with none
    beside it; None when no release was found for it (the default) or it is not one of those known."""
    from .release_ops import TAGS  # noqa: PLC0415  (a table, only read for a file without its tags.yaml)

    if resolved.source == default_resolved().source or resolved.fit is not Fit.KNOWN:
        return None
    names = TAGS.get(resolved.release.version)
    return frozenset(names) if names is not None else None


def release_diagnostics(resolved: Resolved) -> tuple[Diagnostic, ...]:
    """What a native_functions.yaml of a release other than a known one gets on its first line: OPG950
    (information: checked as the newest) or OPG951 (an error: older releases are not checked)."""
    note = resolved.note
    if note is None:
        return ()
    return (diag("OPG950" if resolved.fit is Fit.NEWER else "OPG951", Span.point(0, 0), note),)


# ---------------------------------------------------------------- operators across releases

def _events(op: str) -> list[tuple[Release, str]]:
    """(release, "added" / "removed" / "changed") for an op name.overload, oldest first."""
    from .release_ops import CHANGES  # noqa: PLC0415  (a table, only read for migration notes)

    out = []
    for release in RELEASES[1:]:
        added, removed, changed = CHANGES.get(release.version, ((), (), ()))
        for kind, names in (("added", added), ("removed", removed), ("changed", changed)):
            if op in names:
                out.append((release, kind))
    return out


def _previous(release: Release) -> Release:
    return RELEASES[max(RELEASES.index(release) - 1, 0)]


def migration_note(op: str, release: Release) -> str | None:
    """Why `release` lacks the op `op` (name.overload) another known release has: "'cholesky' was removed in
    torch 2.14 (torch 2.13 has it)"; None when no known release has it."""
    events = [(r, kind) for r, kind in _events(op) if kind != "changed"]
    if not events:
        return None
    at = RELEASES.index(release)
    removed = [r for r, kind in events if kind == "removed" and RELEASES.index(r) <= at]
    if removed:
        gone = removed[-1]
        return f"'{op}' was removed in {gone} ({_previous(gone)} has it); this is {release}"
    added = [r for r, kind in events if kind == "added" and RELEASES.index(r) > at]
    if added:
        return f"'{op}' was added in {added[0]}; this is {release}"
    return None


def schema_change_note(op: str, release: Release) -> str | None:
    """"the schema of 'op' changed in torch 2.14", for the latest change up to `release` (the release an
    older backend or kernel may have been written against); None when it never changed."""
    at = RELEASES.index(release)
    changed = [r for r, kind in _events(op) if kind == "changed" and RELEASES.index(r) <= at]
    if not changed:
        return None
    return f"the schema of '{op}' changed in {changed[-1]} (from {_previous(changed[-1])}'s)"


def torch_cpu_cuda_kernel_op(kernel: str) -> str | None:
    """The op (name.overload) a release's own yaml registers a CUDA kernel defined in torch_cpu for."""
    return CUDA_KERNELS_IN_TORCH_CPU_2_15.get(kernel)


def versions_text() -> str:
    """For `opgen --version`: every release known."""
    return ", ".join(r.version for r in RELEASES)
