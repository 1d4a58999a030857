"""Reference outputs produced by torchgen 2.13, shared by the conformance tests of a run."""

from __future__ import annotations

from pathlib import Path

import pytest
import reference


@pytest.fixture(scope="session")
def torchgen_gen_output(aten: Path, tmp_path_factory) -> Path:
    """gen.py's output on the real native_functions.yaml (plain layout); its install dir."""
    out = tmp_path_factory.mktemp("torchgen_gen")
    _run_torchgen(aten, out, "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                  "--aoti-install-dir", str(out / "aoti"))
    return out / "aten"


def _run_torchgen(aten: Path, out: Path, *flags: str) -> None:
    """gen.py in `out`, writing only under it (its outputs are out's folders, replayed from the reference cache)."""
    reference.run(["-m", "torchgen.gen", "-s", str(aten), *flags], cwd=out, check=True,
                  outputs=[Path(name) for name in ("aten", "headeronly", "aoti", "out", "lists")])


@pytest.fixture(scope="session")
def torchgen_outputs_lists(aten: Path, tmp_path_factory) -> Path:
    """gen.py --dry-run -o deps (relative -d out/aten): the folder holding deps, core_deps, cuda_deps, ..."""
    out = tmp_path_factory.mktemp("torchgen_deps")
    _run_torchgen(aten, out, "-d", "out/aten", "--headeronly-install-dir", "out/headeronly",
                  "--aoti-install-dir", "out/aoti", "--dry-run", "-o", "lists/deps")
    return out / "lists"


# Flags that change the content of the sources: ROCm headers, no dispatcher registration, two backends only.
TORCHGEN_VARIANT_FLAGS = ("--generate", "sources", "--rocm", "--skip-dispatcher-op-registration",
                          "--backend-whitelist", "CPU", "CUDA")


@pytest.fixture(scope="session")
def torchgen_variant_output(aten: Path, tmp_path_factory) -> Path:
    """gen.py's sources with TORCHGEN_VARIANT_FLAGS; its install dir."""
    out = tmp_path_factory.mktemp("torchgen_variant")
    _run_torchgen(aten, out, "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                  "--aoti-install-dir", str(out / "aoti"), *TORCHGEN_VARIANT_FLAGS)
    return out / "aten"


@pytest.fixture(scope="session")
def torchgen_per_operator_output(aten: Path, tmp_path_factory) -> Path:
    """gen.py --per-operator-headers on the real native_functions.yaml (7,151 files); its install dir."""
    out = tmp_path_factory.mktemp("torchgen_per_operator")
    _run_torchgen(aten, out, "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                  "--aoti-install-dir", str(out / "aoti"), "--per-operator-headers")
    return out / "aten"


SELECTION_YAML = Path(__file__).parent / "data" / "selection.yaml"
# Each variant: its flags, run once per session by torchgen and compared file by file with opgen's output.
SELECTIVE_VARIANTS = {
    "selection_yaml": ("--op-selection-yaml-path", str(SELECTION_YAML)),
    "whitelist": ("--generate", "sources", "--force-schema-registration", "--op-registration-whitelist",
                  "aten::add", "aten::mul.Tensor", "aten::empty"),
    "static_dispatch": ("--static-dispatch-backend", "CPU"),
}


@pytest.fixture(scope="session")
def torchgen_selective_outputs(aten: Path, tmp_path_factory):
    """name -> gen.py's output root (aten/, headeronly/, aoti/) for each of SELECTIVE_VARIANTS, made on first use."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            out = tmp_path_factory.mktemp(f"torchgen_{name}")
            _run_torchgen(aten, out, "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                          "--aoti-install-dir", str(out / "aoti"), *SELECTIVE_VARIANTS[name])
            made[name] = out
        return made[name]

    return get
