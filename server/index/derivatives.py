"""derivatives.yaml and deprecated.yaml text -> their entries, incrementally (unchanged entries are reused by
their text)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..model.deprecated import DeprecatedEntry, check_deprecated, lower_deprecated
from ..model.derivatives import DerivativeEntry, lower_derivative
from ..model.native_yaml import NativeFunctions
from ..releases import Release
from ..syntax.nodes import YMap
from .documents import Document, EntryListParser, PlacedEntry, paused_gc

DERIVATIVES_YAML = "derivatives.yaml"
DEPRECATED_YAML = "deprecated.yaml"


@dataclass(frozen=True)
class DerivativesDocument:
    document: Document[DerivativeEntry]
    # What each entry shows on its own, placed; the rules against native_functions.yaml come on top.
    diagnostics: tuple[Diagnostic, ...]

    def entries(self) -> list[tuple[int, DerivativeEntry]]:
        """(first line, entry) of every entry that lowered."""
        return [(p.line, p.result.value) for p in self.document.entries if p.result.value is not None]

    def placed(self) -> Sequence[PlacedEntry[DerivativeEntry]]:
        return self.document.entries


def _lower(entry: YMap) -> tuple[DerivativeEntry | None, tuple[Diagnostic, ...]]:
    return lower_derivative(entry)


class DerivativesParser:
    def __init__(self) -> None:
        self._parser: EntryListParser[DerivativeEntry] = EntryListParser(DERIVATIVES_YAML, _lower)

    def parse(self, text: str) -> DerivativesDocument:
        with paused_gc():
            document = self._parser.parse(text)
        return DerivativesDocument(document, tuple(document.all_diagnostics()))


class DeprecatedParser:
    """deprecated.yaml as the release's Python binding generator reads it."""

    def __init__(self, release: Release) -> None:
        self.release = release

        def lower(entry: YMap) -> tuple[DeprecatedEntry | None, tuple[Diagnostic, ...]]:
            return lower_deprecated(entry, release)

        self._parser: EntryListParser[DeprecatedEntry] = EntryListParser(DEPRECATED_YAML, lower)

    def check(self, text: str, functions: NativeFunctions) -> tuple[Diagnostic, ...]:
        """Every diagnostic of a deprecated.yaml against the native functions its entries call."""
        with paused_gc():
            document = self._parser.parse(text)
        # native_functions.yaml read in part (OPG007): an entry calling an op that may lie past the cut is not checked.
        entries = [(p.line, p.result.value) for p in document.entries if p.result.value is not None
                   and not functions.may_lie_past_the_cut(p.result.value.aten_name)]
        found = document.all_diagnostics() + check_deprecated(entries, functions.native_functions, self.release)
        return tuple(sorted(found, key=lambda d: (d.span.start_line, d.span.start_col, d.code)))


def tree_native_functions(derivatives_path: str) -> str | None:
    """The native_functions.yaml of the same tree as a derivatives.yaml (or deprecated.yaml), where PyTorch
    keeps them:
    tools/autograd/derivatives.yaml beside aten/src/ATen/native/, or torchgen/packaged/autograd/ beside
    packaged/ATen/native/."""
    here = os.path.dirname(os.path.abspath(derivatives_path))
    candidates = (
        os.path.join(here, "..", "..", "aten", "src", "ATen", "native", "native_functions.yaml"),
        os.path.join(here, "..", "ATen", "native", "native_functions.yaml"),
        os.path.join(here, "native_functions.yaml"),
    )
    for path in candidates:
        if os.path.isfile(path):
            return os.path.normpath(path)
    return None
