"""The distribution: it lists every package of the source tree (a non-editable install needs them all), and
`python -m build` makes a wheel and an sdist that install and run."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT


def test_every_package_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    root = ROOT / config["package-dir"]["opgen_lsp"]
    found = {"opgen_lsp" + "".join("." + part for part in init.parent.relative_to(root).parts)
             for init in root.rglob("__init__.py")}
    assert set(config["packages"]) == found


@pytest.mark.slow
def test_build_makes_a_wheel_and_an_sdist_that_install(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="the build package (pip install -e '.[test]')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(ROOT)], check=True,
                   env=env, capture_output=True, timeout=900)
    (wheel,) = (tmp_path / "dist").glob("opgen_lsp-*.whl")
    (sdist,) = (tmp_path / "dist").glob("opgen_lsp-*.tar.gz")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"opgen_lsp/cli/main.py", "opgen_lsp/cli/__main__.py", "opgen_lsp/serve.py",
            "opgen_lsp/codegen/files/aten.py"} <= names
    with tarfile.open(sdist) as t:
        assert any(n.endswith("/server/cli/main.py") for n in t.getnames())
    # The wheel alone (its dependencies from this environment) gives both commands.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall",
                    str(wheel)], check=True, env=env, timeout=300)
    for command in ("opgen", "opgen-lsp"):
        done = subprocess.run([str(venv / "bin" / command), "--version"], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0 and "torchgen 2.13" in done.stdout, done.stdout + done.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import opgen_lsp; print(opgen_lsp.__file__)"],
                           env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout
