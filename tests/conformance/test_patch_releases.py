"""Every patch release of a known series, not only the one the matrix measures.

A profile is per series (2.4): the matrix holds opgen to the newest patch release of each (2.4.1), and a user with
torch 2.4.0 installed is checked and generated as 2.4. That is exact only if 2.4.0 runs the generators 2.4.1 runs:
here each older patch release's torchgen is held to its series' digests (server/releases/torchgen_digests.py, the
files each release's generators run), found as its own version from its install, and its own native_functions.yaml
checks clean. (torchgen differs within a series only outside those files: 2.1.0's packaged gen_variable_type.py,
which opgen does not emulate, and 2.14.0's native_functions.yaml, which is an input.)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from release_files import release_native

from opgen_lsp.cli import main
from opgen_lsp.releases import RELEASES, resolve_for
from opgen_lsp.releases.tree_release import DIGESTS

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

# The patch releases of each known series in the package index besides the one the matrix measures.
OLDER_PATCHES = ("1.13.0", "2.0.0", "2.1.0", "2.1.1", "2.2.0", "2.2.1", "2.3.0", "2.4.0", "2.5.0", "2.7.0", "2.9.0",
                 "2.12.0", "2.14.0")


def _digests(torchgen: Path) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("torchgen_digests", ROOT / "tools" / "torchgen_digests.py")
    module = sys.modules.setdefault("torchgen_digests", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.digests(torchgen)


def _series(version: str) -> str:
    return ".".join(version.split(".")[:2])


def test_each_patch_release_belongs_to_a_known_series_and_is_not_the_measured_one() -> None:
    measured = {r.version for r in RELEASES}
    assert not measured & set(OLDER_PATCHES)
    assert {_series(v) for v in OLDER_PATCHES} <= {r.series for r in RELEASES}


@pytest.mark.parametrize("version", OLDER_PATCHES)
def test_a_patch_release_runs_its_series_generators(version: str, capsys) -> None:
    native = release_native(version)
    torchgen = native.parents[3]
    resolved = resolve_for(str(native))
    # (as the wheel's torch/version.py says it: '2.4.0+cu121')
    assert (resolved.found.partition("+")[0], resolved.release.series) == (version, _series(version)), resolved.label
    assert _digests(torchgen) == DIGESTS[resolved.release.version]
    tags = native.parent / "tags.yaml"
    assert main(["check", str(native), "--tags", str(tags)]) == 0, capsys.readouterr().out
    assert f"torch {version}" in capsys.readouterr().out
