"""Locate and analyse the native_functions.yaml a command works on."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..index.native import NativeParser, NativeSnapshot, TagsParser
from ..releases import DEFAULT, Release


class InputError(Exception):
    """A required input file is missing or unreadable."""


def packaged_aten() -> str | None:
    """torchgen's packaged ATen folder, when torch is installed."""
    try:
        import torchgen  # noqa: PLC0415  (optional: only for the default inputs)
    except ImportError:
        return None
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen")


def default_native_functions() -> str | None:
    aten = packaged_aten()
    path = os.path.join(aten, "native", "native_functions.yaml") if aten else None
    return path if path and os.path.exists(path) else None


def read_input(path: str) -> str:
    """An input file's text; InputError when it is missing, unreadable or not UTF-8."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


@dataclass(frozen=True)
class NativeInputs:
    path: str
    snapshot: NativeSnapshot

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.snapshot.diagnostics if d.is_error]


def load_native(path: str | None, tags_path: str | None, ignore_keys=frozenset(),
                release: Release = DEFAULT) -> NativeInputs:
    path = path or default_native_functions()
    if path is None:
        raise InputError("no native_functions.yaml: pass --native-functions (torch is not installed to provide one)")
    text = read_input(path)
    tags_path = tags_path or os.path.join(os.path.dirname(path), "tags.yaml")
    tags = TagsParser().parse(read_input(tags_path)).names
    return NativeInputs(path, NativeParser(ignore_keys, release).parse(text, tags))
