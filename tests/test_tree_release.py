"""A tree whose own files disagree with the release opgen uses: its torchgen (OPG965: a vendor fork, a
pre-release tree), its version.txt naming no release (OPG966).

The digests of server/releases/torchgen_digests.py are checked against each release's torchgen in the cache
(tools/torchgen_release.py; skipped, with the command, for a release not there). The rest runs on a
PyTorch-shaped tree of our own around a copy of the installed torchgen (torch 2.13.0, the reference);
tests/conformance/test_real_tree_torchgen.py measures real trees against their own gen.py.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from opgen_lsp.cli import main
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import RELEASES, resolve_for
from opgen_lsp.releases.tree_release import DIGESTS, SHOWN, differing_files, drift_note, tree_torchgen

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = sys.modules.setdefault(name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def installed_torchgen() -> Path:
    torchgen = pytest.importorskip("torchgen")
    return Path(torchgen.__file__).parent


def test_every_known_release_has_digests() -> None:
    assert list(DIGESTS) == [r.version for r in RELEASES]
    for table in DIGESTS.values():
        assert {"gen.py", "model.py", "gen_backend_stubs.py", "gen_lazy_tensor.py", "dest/register_dispatch_key.py"} \
            <= set(table)


# (about 0.3 s a release: the default and the newest in the quick suite, the others with the slow tests)
@pytest.mark.parametrize("version", [r.version if r.version in ("2.13.0", "2.15.0") else
                                     pytest.param(r.version, marks=pytest.mark.slow) for r in RELEASES])
def test_the_digests_are_those_of_the_release(version: str) -> None:
    folder = _tool("torchgen_release").cached(version)
    if folder is None:
        pytest.skip(f"torch {version}'s torchgen is not in the cache: python3 tools/torchgen_release.py {version}")
    assert _tool("torchgen_digests").digests(folder / "torchgen") == DIGESTS[version]


def test_the_installed_torchgen_is_its_release() -> None:
    native = installed_torchgen() / "packaged" / "ATen" / "native" / "native_functions.yaml"
    resolved = resolve_for(str(native))
    assert tree_torchgen(str(native)) == str(installed_torchgen())
    assert resolved.release.version == "2.13.0" and drift_note(str(native), resolved) is None


NATIVE = "- func: abs(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CompositeExplicitAutograd: abs\n"


def checkout(root: Path, version: str = "2.13.0") -> Path:
    """A PyTorch checkout of our own: version.txt, a one-op native_functions.yaml, a copy of the installed
    torchgen's Python files; its native_functions.yaml."""
    native = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    native.write_text(NATIVE)
    (native.parent / "tags.yaml").write_text("- tag: core\n  desc: core\n")
    (root / "version.txt").write_text(f"{version}\n")
    shutil.copytree(installed_torchgen(), root / "torchgen", ignore=shutil.ignore_patterns("packaged", "__pycache__"))
    return native


def test_a_tree_with_its_releases_torchgen_gets_nothing(tmp_path: Path, capsys) -> None:
    native = checkout(tmp_path / "pytorch")
    assert main(["check", str(native)]) == 0
    assert "OPG965" not in capsys.readouterr().out
    # Line ends do not count (a checkout on Windows).
    gen = tmp_path / "pytorch" / "torchgen" / "gen.py"
    gen.write_bytes(gen.read_bytes().replace(b"\n", b"\r\n"))
    assert differing_files(str(gen.parent), "2.13.0") == ()


def test_a_changed_and_a_missing_file_are_named(tmp_path: Path, capsys) -> None:
    native = checkout(tmp_path / "pytorch")
    torchgen = tmp_path / "pytorch" / "torchgen"
    with (torchgen / "gen_functionalization_type.py").open("a") as f:
        f.write("# a vendor's change\n")
    (torchgen / "aoti" / "fallback_ops.py").unlink()
    assert main(["check", str(native)]) == 0  # a warning: the check still passes
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "[OPG965]" in line]
    assert line.startswith(f"{native}:1:1: warning: this tree's torchgen ({torchgen}) differs from torch 2.13.0's "
                           "in gen_functionalization_type.py, aoti/fallback_ops.py: opgen checks and generates as "
                           "torch 2.13.0")
    assert out.endswith(f"0 errors, 1 warning in 1 file, checked as torch 2.13.0 (version.txt of {tmp_path / 'pytorch'})\n")


def test_many_differing_files_are_counted(tmp_path: Path) -> None:
    native = checkout(tmp_path / "pytorch")
    torchgen = tmp_path / "pytorch" / "torchgen"
    shutil.rmtree(torchgen / "api")
    note = drift_note(str(native), resolve_for(str(native)))
    missing = [n for n in DIGESTS["2.13.0"] if n.startswith("api/")]
    assert note is not None and f"and {len(missing) - SHOWN} more:" in note


def test_a_release_chosen_by_hand_is_compared_too(tmp_path: Path, capsys) -> None:
    native = checkout(tmp_path / "pytorch")  # torch 2.13's torchgen, checked as 2.14
    assert main(["check", "--torch-version", "2.14", str(native)]) == 0
    assert "differs from torch 2.14.1's in" in capsys.readouterr().out


def test_newer_and_older_trees_get_their_own_note_only(tmp_path: Path, capsys) -> None:
    for version in ("2.16.0a0", "1.12.0"):
        native = checkout(tmp_path / version, version)
        assert drift_note(str(native), resolve_for(str(native))) is None


def test_a_tree_without_torchgen_and_a_lone_yaml_get_nothing(tmp_path: Path) -> None:
    native = checkout(tmp_path / "pytorch")
    shutil.rmtree(tmp_path / "pytorch" / "torchgen")
    assert tree_torchgen(str(native)) is None and drift_note(str(native), resolve_for(str(native))) is None
    lone = tmp_path / "lone" / "native_functions.yaml"
    lone.parent.mkdir()
    lone.write_text(NATIVE)
    assert drift_note(str(lone), resolve_for(str(lone), "2.13")) is None


def test_generate_says_it_in_one_line(tmp_path: Path, capsys) -> None:
    checkout(tmp_path / "pytorch")
    with (tmp_path / "pytorch" / "torchgen" / "model.py").open("a") as f:
        f.write("# a vendor's change\n")
    aten = tmp_path / "pytorch" / "aten" / "src" / "ATen"
    shutil.copytree(installed_torchgen() / "packaged" / "ATen" / "templates", aten / "templates")
    main(["generate", "-s", str(aten), "-d", str(tmp_path / "out"), "--generate", "headers"])
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "torchgen" in line and "differs" in line] == [
        f"opgen: warning: this tree's torchgen ({tmp_path / 'pytorch' / 'torchgen'}) differs from torch 2.13.0's in "
        "model.py: opgen checks and generates as torch 2.13.0, which the tree's own gen.py may not match"]


def test_the_server_shows_it_on_the_first_line(tmp_path: Path) -> None:
    native = checkout(tmp_path / "pytorch")
    with (tmp_path / "pytorch" / "torchgen" / "gen.py").open("a") as f:
        f.write("# a vendor's change\n")
    ws = Workspace(str(tmp_path))
    ws.open("file:///n", str(native), NATIVE, 1)
    found = [d for d in ws.analyse("file:///n").diagnostics if d.code == "OPG965"]
    assert [(d.span.start_line, d.severity.name) for d in found] == [(0, "WARNING")]
    assert "in gen.py:" in found[0].message


CONFLICTED = "<<<<<<< HEAD\n2.9.0\n=======\n2.8.0\n>>>>>>> 0123abc (a vendor's merge)\n"


@pytest.mark.parametrize("text", [CONFLICTED, "", "main\n"])
def test_a_version_txt_naming_no_release_is_said(text: str, tmp_path: Path, capsys) -> None:
    native = tmp_path / "pytorch" / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    native.write_text(NATIVE)
    (native.parent / "tags.yaml").write_text("")
    (tmp_path / "pytorch" / "version.txt").write_text(text)
    assert main(["check", str(native)]) == 0
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "[OPG966]" in line]
    first = next((t.strip() for t in text.splitlines() if t.strip()), "")
    assert line.startswith(f"{native}:1:1: warning: version.txt of {tmp_path / 'pytorch'} names no torch release "
                           f"({first!r}): checked and generated as torch 2.13 (the default); pass --torch-version")
    assert main(["check", "--torch-version", "2.9", str(native)]) == 0  # a release chosen: nothing to say
    assert "OPG966" not in capsys.readouterr().out
    ws = Workspace(str(tmp_path))
    ws.open("file:///n", str(native), NATIVE, 1)
    assert [d.code for d in ws.analyse("file:///n").diagnostics] == ["OPG966"]


def test_a_checkout_without_version_txt_gets_nothing(tmp_path: Path, capsys) -> None:
    native = tmp_path / "vendor" / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    native.write_text(NATIVE)
    (native.parent / "tags.yaml").write_text("")
    assert main(["check", str(native)]) == 0
    assert capsys.readouterr().out == "no problems in 1 file, checked as torch 2.13 (default)\n"


def test_fifos_in_a_tree_never_block(tmp_path: Path, capsys) -> None:
    import os

    native = checkout(tmp_path / "pytorch")
    (tmp_path / "pytorch" / "version.txt").unlink()
    os.mkfifo(tmp_path / "pytorch" / "version.txt")
    (tmp_path / "pytorch" / "torchgen" / "model.py").unlink()
    os.mkfifo(tmp_path / "pytorch" / "torchgen" / "model.py")
    assert main(["check", str(native)]) == 0  # no release named: the default, 2.13
    out = capsys.readouterr().out
    assert "differs from torch 2.13.0's in model.py:" in out and "OPG966" not in out
