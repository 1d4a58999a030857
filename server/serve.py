"""`opgen-lsp` (or `python -m opgen_lsp.serve`): the language server, generating with codegen's generators.

The server (lsp/) knows a generator only as `lsp.generators.Generators`; this module, above both lsp/ and codegen/
(CONTRIBUTING.md, "The layers"), gives it codegen's. Each is loaded on its first use: starting the server loads
no generator (tests/lsp/test_main.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .lsp.generators import BackendRequest, Counts, NativeRequest
from .lsp.main import run

if TYPE_CHECKING:  # (loaded on first use)
    from .codegen.backend.run import BackendResult
    from .codegen.job import JobResult, NativeJob


class Codegen:
    """codegen's jobs behind the server's generation commands (lsp.generators.Generators)."""

    def generate_native(self, request: NativeRequest, progress: Callable[[Counts, str], None],
                        cancelled: Callable[[], bool]) -> JobResult:
        from .codegen import job

        return job.run(_native_job(request), progress, cancelled)

    def render_native_file(self, request: NativeRequest, name: str) -> tuple[str, str] | None:
        from .codegen import job

        return job.render_file(_native_job(request), name)

    def generate_backend(self, request: BackendRequest) -> BackendResult:
        from .codegen.backend.run import BackendOptions, generate_backend

        return generate_backend(BackendOptions(request.source_yaml, request.output_dir,
                                               native_functions=request.native_functions, release=request.release,
                                               experimental=False))


def _native_job(request: NativeRequest) -> NativeJob:
    from .codegen.job import NativeJob

    return NativeJob(request.native_path, request.output_dir, per_operator_headers=request.per_operator_headers,
                     torch_version=request.torch_version)


def main(argv: list[str] | None = None) -> int:
    return run(Codegen(), argv)


if __name__ == "__main__":
    sys.exit(main())
