"""What the server's generation commands (opgen.generate, opgen.showGenerated) need of a code generator.

lsp/ imports no generator (tests/test_layers.py): whoever builds the server gives it one. `opgen-lsp`
(opgen_lsp.serve, above both lsp/ and codegen/) gives codegen's, loaded on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..releases import Release
from ..report import FileDiagnostic


@dataclass(frozen=True)
class NativeRequest:
    """gen.py's files of a native_functions.yaml (tags.yaml beside it), all inside output_dir."""

    native_path: str
    output_dir: str  # absolute; nothing is written outside it
    per_operator_headers: bool = False
    torch_version: str | None = None  # opgen.torchVersion; None: detected from native_path


@dataclass(frozen=True)
class BackendRequest:
    """gen_backend_stubs' files of a backend yaml as saved, checked against its native_functions.yaml."""

    source_yaml: str
    output_dir: str
    native_functions: str
    release: Release  # the native_functions.yaml's, as its check reads it (opgen.torchVersion, else detected)


class Counts(Protocol):
    """How far a native generation is, as `opgen generate` counts on a terminal."""

    @property
    def percentage(self) -> int: ...

    def text(self) -> str: ...


class NativeResult(Protocol):
    @property
    def written(self) -> Sequence[str]: ...

    @property
    def unchanged(self) -> Sequence[str]: ...

    @property
    def missing(self) -> Sequence[str]: ...  # files the generator cannot make (yet)

    @property
    def errors(self) -> Sequence[str]: ...

    @property
    def cancelled(self) -> bool: ...

    def not_generated(self) -> list[str]: ...  # `name, name: why` for each reason a file was not made

    def summary(self) -> str: ...


class Written(Protocol):
    @property
    def written(self) -> Sequence[str]: ...

    @property
    def unchanged(self) -> Sequence[str]: ...


class BackendResult(Protocol):
    @property
    def errors(self) -> Sequence[str]: ...  # problems with the run itself

    @property
    def diagnostics(self) -> Sequence[FileDiagnostic]: ...  # problems of the inputs, placed

    @property
    def written(self) -> Written | None: ...  # None: nothing was written


class Generators(Protocol):
    """The generation jobs the commands run on their worker thread."""

    def generate_native(self, request: NativeRequest, progress: Callable[[Counts, str], None],
                        cancelled: Callable[[], bool]) -> NativeResult:
        """Every file the generator can make, written if changed; errors in the result. progress: told before
        each file (with its path) and once at the end (path ""); cancelled: asked between files."""
        ...

    def render_native_file(self, request: NativeRequest, name: str) -> tuple[str, str] | None:
        """(path, text) of one generated file named by its path or file name, None for a file it does not make;
        raises InputError or OSError for inputs it cannot read."""
        ...

    def generate_backend(self, request: BackendRequest) -> BackendResult: ...
