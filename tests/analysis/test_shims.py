"""The shim check of `opgen check` and the server (analysis/shims.py) asks for the devices gen.py's default run
writes shims for, as the generator computes them from its options (codegen/files/aoti.py), in every release."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.shims import default_shim_devices
from opgen_lsp.codegen.files.aoti import aoti_backends
from opgen_lsp.codegen.files.context import GenContext, GenerateOptions
from opgen_lsp.model import dispatch as dk
from opgen_lsp.releases import RELEASES


@pytest.mark.parametrize("release", RELEASES, ids=str)
def test_the_check_asks_for_the_default_runs_devices(release) -> None:
    ctx = GenContext(None, frozenset(), GenerateOptions(release=release), {})  # type: ignore[arg-type]
    assert default_shim_devices(release) == aoti_backends(ctx)
    # (gen.py before 2.3 writes no shims: no device then)
    assert (dk.K["CPU"] in default_shim_devices(release)) == release.writes_aoti_c_shims
