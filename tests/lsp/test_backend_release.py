"""The server's backend generation (opgen.generate, target "backend") writes the files of the release the
native_functions.yaml is checked as, as `opgen generate-backend` does for the same inputs (it used 2.13 whatever the
tree). A tree with torch 2.5.1's templates, read as 2.5.1 (opgen.torchVersion): the files are the CLI's for 2.5.1
(which the release matrix holds to 2.5.1's gen_backend_stubs), not its 2.13 ones. Marked `versions`: it reads 2.5.1's
templates from the torchgen cache (tools/torchgen_release.py), and skips without them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from release_files import release_native

from opgen_lsp.cli import main

from .helpers import TAGS, open_document, write
from .test_workspace_features import BACKEND, FULL_NATIVE

pytestmark = [pytest.mark.asyncio, pytest.mark.versions]


def _files(folder: Path) -> dict[str, bytes]:
    """The files written into folder, with folder (which Register<Key>.cpp's #include spells) as OUT."""
    return {p.name: p.read_bytes().replace(str(folder).encode(), b"OUT") for p in sorted(folder.iterdir())}


@pytest.mark.configuration({"torchVersion": "2.5.1"})
async def test_backend_generation_is_the_native_release(client: LanguageClient, tmp_path_factory):
    root: Path = client.root  # type: ignore[attr-defined]
    templates = release_native("2.5.1").parent.parent / "templates"
    shutil.copytree(templates, root / "templates")  # beside ops/, as in a checkout: the release's own templates
    native = write(client, "ops/native_functions.yaml", FULL_NATIVE)
    write(client, "ops/tags.yaml", TAGS)
    uri = open_document(client, write(client, "ops/my_backend.yaml", BACKEND))
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri, "target": "backend"}]))
    assert result["errors"] == [] and result["written"] == 3, result
    served = _files(Path(result["outputDir"]))
    assert b'#include "OUT/PrivateUse1NativeFunctions.h"' in served["RegisterPrivateUse1.cpp"]

    cli = {}
    for version in ("2.5.1", "2.13.0"):
        out = tmp_path_factory.mktemp(f"cli_{version}")
        status = main(["generate-backend", "-s", str(root / "ops" / "my_backend.yaml"), "-o", str(out),
                       "--native-functions", str(native), "--torch-version", version])
        cli[version] = _files(out) if status in (0, 1) else None  # (1: warnings only)
    assert served == cli["2.5.1"]
    assert served != cli["2.13.0"]
