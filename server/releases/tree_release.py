"""Whether a real tree's own files agree with the release opgen uses for it.

opgen matches the torchgen of each known release (server/releases/), file for file. A PyTorch checkout
(or a packaged torchgen) carries its own torchgen/ beside its yaml; when the files the generators run
differ from those of the release opgen uses for it (server/releases/torchgen_digests.py, written from each release
by tools/torchgen_digests.py), what the tree's own gen.py accepts and writes may differ from what opgen
does, and opgen says so once (OPG965) naming the files, instead of letting a difference pass for a bug: a
vendor fork or a pre-release tree may change torchgen. And a checkout whose version.txt names no release (a
merge left its conflict markers in it, as in a ROCm fork) would be checked as the default release without a
word: OPG966 says so.
"""

from __future__ import annotations

import os

from ..diagnostics import Diagnostic, diag
from ..text import Span
from .resolution import DEFAULT, Fit, Resolved, parse_version
from .torchgen_digests import CHANGES

SHOWN = 3  # files named in the note; the rest are counted
# Named first when they differ: what reads and checks the yaml, then what writes the files.
_FIRST = ("model.py", "gen.py", "native_function_generation.py", "gen_functionalization_type.py")
_MOST_BYTES = 4 * 1024 * 1024  # a file larger than any torchgen module is not read (and counts as differing)


def tree_torchgen(path: str) -> str | None:
    """The torchgen/ folder of the tree a native_functions.yaml (or its folder) belongs to: looking upwards,
    the first folder holding torchgen/gen.py, up to the checkout root (aten/src/ATen) or the packaged
    torchgen's site folder (torchgen/packaged/ATen); None when there is none."""
    folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while True:
        candidate = os.path.join(folder, "torchgen")
        if os.path.isfile(os.path.join(candidate, "gen.py")):
            return candidate
        if os.path.isdir(os.path.join(folder, "aten", "src", "ATen")) or os.path.isdir(
                os.path.join(candidate, "packaged", "ATen")):
            return None  # the tree's root, without a torchgen of its own
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _digest(path: str) -> str | None:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _MOST_BYTES:  # (a FIFO would block the open)
            return None
        import hashlib  # noqa: PLC0415  (a tree's files only: not a plain check's start-up)

        with open(path, "rb") as f:
            return hashlib.sha256(f.read().replace(b"\r\n", b"\n")).hexdigest()[:16]
    except OSError:
        return None


def _accumulated() -> dict[str, dict[str, str]]:
    """release -> every file its generators run -> digest, from the changes release by release."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for version, changed in CHANGES.items():
        current = {**current, **{n: d for n, d in changed.items() if d is not None}}
        current = {n: d for n, d in current.items() if changed.get(n, d) is not None}
        out[version] = current
    return out


DIGESTS = _accumulated()


def differing_files(torchgen: str, version: str) -> tuple[str, ...]:
    """The files of release `version`'s generators (POSIX paths under torchgen/) that the folder lacks or
    holds other bytes of, those of _FIRST first; () for a release with no digests."""
    table = DIGESTS.get(version, {})
    differing = [name for name, want in table.items() if _digest(os.path.join(torchgen, *name.split("/"))) != want]
    return tuple(sorted(differing, key=lambda name: (_FIRST.index(name) if name in _FIRST else len(_FIRST), name)))


def drift_note(path: str | None, resolved: Resolved) -> str | None:
    """One line when the tree of `path` has a torchgen other than its release's; None otherwise, and for a
    release newer or older than those known (OPG950 / OPG951 say what is used for those)."""
    if path is None or resolved.fit is not Fit.KNOWN:
        return None
    torchgen = tree_torchgen(path)
    if torchgen is None:
        return None
    differing = differing_files(torchgen, resolved.release.version)
    if not differing:
        return None
    named = ", ".join(differing[:SHOWN]) + (f" and {len(differing) - SHOWN} more" if len(differing) > SHOWN else "")
    return (f"this tree's torchgen ({torchgen}) differs from torch {resolved.release.version}'s in {named}: "
            f"opgen checks and generates as torch {resolved.release.version}, which the tree's own gen.py "
            "may not match")


def checkout_root(path: str) -> str | None:
    """The PyTorch checkout (the folder above aten/src/ATen) holding a native_functions.yaml, if any."""
    folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while True:
        if os.path.isdir(os.path.join(folder, "aten", "src", "ATen")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def version_txt_note(path: str | None, resolved: Resolved) -> str | None:
    """One line when the checkout of `path` has a version.txt that names no release and nothing else chose one
    (the default is used); None otherwise."""
    if path is None or resolved.source != "default":
        return None
    root = checkout_root(path)
    if root is None:
        return None
    version_txt = os.path.join(root, "version.txt")
    if not os.path.isfile(version_txt):
        return None  # none (nothing claims a release), or no regular file (whose open could block)
    try:
        with open(version_txt, encoding="utf-8", errors="replace") as f:
            text = f.read(4096)
    except OSError:
        return None
    if parse_version(text) is not None:
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return (f"version.txt of {root} names no torch release ({first[:40]!r}): checked and generated as torch "
            f"{DEFAULT.series} (the default); pass --torch-version X.Y (opgen.torchVersion in the editor)")


def tree_notes(path: str | None, resolved: Resolved) -> tuple[tuple[str, str], ...]:
    """(code, line) of what the tree's own files say against the release used: OPG966, OPG965."""
    notes = (("OPG966", version_txt_note(path, resolved)), ("OPG965", drift_note(path, resolved)))
    return tuple((code, note) for code, note in notes if note is not None)


def tree_diagnostics(path: str | None, resolved: Resolved) -> tuple[Diagnostic, ...]:
    """Those notes on the first line of the tree's native_functions.yaml."""
    return tuple(diag(code, Span.point(0, 0), note) for code, note in tree_notes(path, resolved))
