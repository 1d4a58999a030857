"""Locate and analyse the native_functions.yaml a command works on."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..index.native import NativeParser, NativeSnapshot, TagsParser
from ..input_file import NOT_UTF8, SPECIAL, TOO_LARGE, UnreadableFile, read_text
from ..model import dispatch as dk
from ..releases import Fit, Release, known_range, resolve
from .base_text import release_native_path


class InputError(Exception):
    """A required input file is missing or unreadable."""


class InvalidInput(InputError):
    """An input was read and has errors: its located diagnostics (rendered `path:line:col: ...` lines) and a
    one-line summary as the message."""

    def __init__(self, summary: str, located: tuple[str, ...] = ()) -> None:
        super().__init__(summary)
        self.located = located


def invalid_input(path: str, errors: list[Diagnostic], why: str = "") -> InvalidInput:
    """An input with errors: each at its line, and what it stops."""
    from ..report import FileDiagnostic, render_text

    located = tuple(render_text([FileDiagnostic(path, d) for d in errors]).splitlines())
    return InvalidInput(f"{path} has {len(errors)} error(s){why}; nothing generated (see 'opgen check')", located)


def packaged_aten() -> str | None:
    """torchgen's packaged ATen folder, when torch is installed."""
    try:
        import torchgen  # noqa: PLC0415  (only default inputs; untyped, see pyproject's [tool.mypy])
    except ImportError:
        return None
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen")


def default_native_functions() -> str | None:
    aten = packaged_aten()
    path = os.path.join(aten, "native", "native_functions.yaml") if aten else None
    return path if path and os.path.exists(path) else None


def read_input(path: str) -> str:
    """An input file's text; InputError when it is missing, not a regular file, too large or not UTF-8."""
    try:
        return read_text(path)
    except UnreadableFile as exc:
        if exc.kind in (TOO_LARGE, NOT_UTF8, SPECIAL):  # read, and wrong: an input error, as check's OPG006
            raise InvalidInput(str(exc)) from None
        raise InputError(str(exc)) from None


@dataclass(frozen=True)
class NativeInputs:
    path: str
    snapshot: NativeSnapshot
    text: str = ""  # the text the snapshot was parsed from

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.snapshot.diagnostics if d.is_error]


def load_native(path: str | None, tags_path: str | None, ignore_keys: frozenset[dk.DispatchKey] = frozenset(),
                *, release: Release) -> NativeInputs:
    path = path or default_native_functions()
    if path is None:
        raise InputError("no native_functions.yaml: pass --native-functions (torch is not installed to provide one)")
    text = read_input(path)
    tags_path = tags_path or os.path.join(os.path.dirname(path), "tags.yaml")
    tags = TagsParser().parse(read_input(tags_path)).names
    return NativeInputs(path, NativeParser(ignore_keys, release=release).parse(text, tags), text)


def release_native(version: str) -> tuple[str, Release]:
    """The native_functions.yaml of torch release `version` (its torchgen in opgen's cache, or the installed
    torch's) and the release's profile; InputError, saying why, when the release is not known or not at hand."""
    resolved = resolve(version, "--release")
    if resolved is None or resolved.fit is not Fit.KNOWN:
        raise InputError(f"torch {version} is not a release opgen knows ({known_range()})")
    release = resolved.release
    path = release_native_path(release.version) or release_native_path(version)
    if path is None:
        raise InputError(f"torch {version}'s native_functions.yaml is not at hand: fetch its torchgen with "
                         f"`python3 tools/torchgen_release.py {release.version}` (or install torch {release.version})")
    return path, release


def load_release(version: str) -> NativeSnapshot:
    """Torch release `version`'s own native_functions.yaml, read as that release (InputError: see release_native)."""
    path, release = release_native(version)
    return load_native(path, None, release=release).snapshot
