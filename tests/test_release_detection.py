"""Which torch release a native_functions.yaml is, where no version file says: through a symbolic link to the
tree it came from, or from its own content (the ops each release added or removed); and that every command says
the release it used and how it was found, and agrees with the others on the same inputs.

The real files are those of the releases in the torchgen cache (tools/torchgen_release.py; skipped, with the
command, for a release not there); the rest runs on files of our own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from opgen_lsp.analysis.hover import hover
from opgen_lsp.cli import main
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import CONTENT_SOURCE, RELEASES, detect, recognise, resolve_for
from opgen_lsp.releases.resolution import _holders

ROOT = Path(__file__).resolve().parents[1]
NATIVE = "- func: abs(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CompositeExplicitAutograd: abs\n"


def _cached(version: str) -> Path:
    spec = importlib.util.spec_from_file_location("torchgen_release", ROOT / "tools" / "torchgen_release.py")
    module = sys.modules.setdefault("torchgen_release", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    folder = module.cached(version)
    if folder is None:
        pytest.skip(f"torch {version}'s torchgen is not in the cache: python3 tools/torchgen_release.py {version}")
    return folder / "torchgen" / "packaged" / "ATen"


def _yaml_of(names: list[str]) -> str:
    return "".join(f"- func: {name}(Tensor self) -> Tensor\n  variants: function\n" for name in names)


def _as_release(version: str, filler: int = 2000) -> str:
    """A yaml with the ops that tell `version` apart (those it has) among `filler` others."""
    telling = [name for name, holders in _holders() if version in holders]
    return _yaml_of([f"filler_op_{i}" for i in range(filler)] + telling)


# ---------------------------------------------------------------- from the content

@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r.version)
def test_each_release_is_told_by_its_ops(release) -> None:
    assert recognise(_as_release(release.version)) == (release.series, CONTENT_SOURCE)


def test_a_small_file_says_nothing_of_its_release() -> None:
    """A test's or an excerpt's few entries: the default, not the release whose ops it happens to name."""
    assert recognise(_as_release("2.15.0", filler=10)) is None
    assert resolve_for(None, text=_as_release("2.15.0", filler=10)).source == "default"


def test_an_edited_release_is_the_nearest_and_says_so() -> None:
    newest = [name for name, holders in _holders() if holders == {RELEASES[-1].version} or
              (RELEASES[-1].version in holders and RELEASES[-2].version not in holders)]
    text = _as_release(RELEASES[-1].version).replace(f"- func: {newest[0]}(", "- func: renamed_by_a_fork(")
    series, how = recognise(text)
    assert series == RELEASES[-1].series and how == f"{CONTENT_SOURCE}, the nearest: 1 of its ops differ"


def test_a_version_file_wins_over_the_content(tmp_path: Path) -> None:
    native = tmp_path / "pytorch" / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    native.write_text(_as_release("2.15.0"))
    (tmp_path / "pytorch" / "version.txt").write_text("2.14.1\n")
    resolved = resolve_for(str(native))
    assert (resolved.release.series, resolved.source) == ("2.14", f"version.txt of {tmp_path / 'pytorch'}")
    (tmp_path / "pytorch" / "version.txt").unlink()
    resolved = resolve_for(str(native))
    assert (resolved.found, resolved.source, resolved.label) == ("2.15", CONTENT_SOURCE, "torch 2.15 (from its content)")


# ---------------------------------------------------------------- through symbolic links

def _packaged(site: Path, version: str) -> Path:
    """A packaged torchgen's ATen folder (site/torchgen/packaged/ATen) with torch/version.py beside torchgen."""
    aten = site / "torchgen" / "packaged" / "ATen"
    (aten / "native").mkdir(parents=True)
    (aten / "native" / "native_functions.yaml").write_text(NATIVE)
    (aten / "native" / "tags.yaml").write_text("")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text(f"__version__ = '{version}'\n")
    return aten


def test_a_tree_of_links_finds_the_release_of_their_target(tmp_path: Path) -> None:
    aten = _packaged(tmp_path / "site", "2.6.0+cu124")
    links = tmp_path / "links" / "ATen" / "native"  # each file a link, as `cp -rs` makes
    links.mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        (links / name).symlink_to(aten / "native" / name)
    assert detect(str(links / "native_functions.yaml")) == ("2.6.0+cu124", str(tmp_path / "site" / "torch" /
                                                                              "version.py"))
    (tmp_path / "folder_link").symlink_to(aten, target_is_directory=True)  # a link to the folder
    assert detect(str(tmp_path / "folder_link" / "native" / "native_functions.yaml"))[0] == "2.6.0+cu124"


def test_the_tree_a_link_is_placed_in_comes_first(tmp_path: Path) -> None:
    aten = _packaged(tmp_path / "site", "2.6.0")
    checkout = tmp_path / "pytorch"
    (checkout / "aten" / "src" / "ATen" / "native").mkdir(parents=True)
    (checkout / "version.txt").write_text("2.15.0\n")
    link = checkout / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    link.symlink_to(aten / "native" / "native_functions.yaml")
    assert detect(str(link)) == ("2.15.0", f"version.txt of {checkout}")


# ---------------------------------------------------------------- every command says it, and they agree

def _checkout(root: Path, version: str, native: str = NATIVE) -> Path:
    native_dir = root / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    (root / "version.txt").write_text(f"{version}\n")
    (native_dir / "native_functions.yaml").write_text(native)
    (native_dir / "tags.yaml").write_text("")
    return native_dir / "native_functions.yaml"


BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n"


def test_a_backend_yaml_against_an_older_release_fails_alike_in_check_and_generate(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "1.12.1")
    backend = tmp_path / "xla_native_functions.yaml"
    backend.write_text(BACKEND)
    assert main(["check", str(backend), "--native-functions", str(native)]) == 1
    out = capsys.readouterr().out
    assert f"{backend}:1:1: error: torch 1.12.1 (version.txt of {tmp_path / 'pytorch'}) is older" in out
    assert "[OPG951]" in out
    assert main(["generate-backend", "-s", str(backend), "-o", str(tmp_path / "out"),
                 "--native-functions", str(native)]) == 1
    assert "is older than the releases opgen knows" in capsys.readouterr().err
    assert main(["explain", "abs", "--native-functions", str(native)]) == 1
    assert main(["generate", "-s", str(native.parent.parent), "-d", str(tmp_path / "gen")]) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "gen").exists()


def test_explain_says_the_release(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "2.14.1")
    assert main(["explain", "abs", "--native-functions", str(native)]) == 0
    assert capsys.readouterr().err == f"opgen: explained as torch 2.14.1 (version.txt of {tmp_path / 'pytorch'})\n"


def test_a_generator_that_writes_nothing_still_says_the_release(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "2.14.1", NATIVE + "  tags: no_such_tag\n")
    backend = tmp_path / "xla_native_functions.yaml"
    backend.write_text(BACKEND)
    assert main(["generate-backend", "-s", str(backend), "-o", str(tmp_path / "out"),
                 "--native-functions", str(native)]) == 1
    assert f"opgen: checked as torch 2.14.1 (version.txt of {tmp_path / 'pytorch'})" in capsys.readouterr().err


# ---------------------------------------------------------------- the real files

# The releases the issue names run in the quick suite; every other release's file with the slow ones (about 0.5 s each).
_QUICK_RELEASES = ("2.15.0", "2.6.0")


def _quick_or_slow(version: str) -> object:
    return version if version in _QUICK_RELEASES else pytest.param(version, marks=pytest.mark.slow)


@pytest.mark.versions
@pytest.mark.parametrize("version", [_quick_or_slow(r.version) for r in RELEASES])
def test_a_real_yaml_copied_alone_checks_clean_as_its_release(version: str, tmp_path: Path, capsys) -> None:
    """Every release's own file copied without its tree (no version file, no tags.yaml): recognised by its ops, its
    tags checked against its release's; torch 2.13's rules would find errors in several (2.15's _philox_randint_,
    2.6's Dimname, 2.0's ops with a dropout argument and no seeded tag)."""
    copied = tmp_path / "native_functions.yaml"
    copied.write_bytes((_cached(version) / "native" / "native_functions.yaml").read_bytes())
    assert main(["check", str(copied)]) == 0
    out, err = capsys.readouterr()
    series = ".".join(version.split(".")[:2])
    assert out == f"no problems in 1 file, checked as torch {series} (from its content)\n"
    assert err == (f"opgen: {copied}: no tags.yaml beside it: its tags are checked against those of torch {series}'s "
                   "tags.yaml\n")
    # With its tags.yaml beside it (a folder copied without the tree): the same, and no note.
    (tmp_path / "tags.yaml").write_bytes((_cached(version) / "native" / "tags.yaml").read_bytes())
    assert main(["check", str(copied)]) == 0
    assert capsys.readouterr() == (f"no problems in 1 file, checked as torch {series} (from its content)\n", "")


@pytest.mark.versions
def test_the_release_found_decides_a_2_0_file(tmp_path: Path, capsys) -> None:
    """2.0.1's own file read as the release after it gets 2.1's dropout-argument rule: the errors content detection
    spares it."""
    copied = tmp_path / "native_functions.yaml"
    copied.write_bytes((_cached("2.0.1") / "native" / "native_functions.yaml").read_bytes())
    assert main(["check", "--torch-version", "2.1", str(copied)]) == 1
    out = capsys.readouterr().out
    assert out.count("[OPG122]") == 18 and out.count("error") == 18 + 1 + 1  # and 1 OPG307, and the summary's
    assert out.splitlines()[-1].startswith("19 errors, 0 warnings in 1 file, checked as torch 2.1")


@pytest.mark.versions
def test_the_release_found_decides_a_1_13_file(tmp_path: Path, capsys) -> None:
    """1.13.1's own file read as 2.0 gets 2.0's view-copy rule (3 OPG128); 2.0.1's read as 1.13 has its tags refused
    (a list, where 1.13 takes one string of names): the errors content detection spares each."""
    copied = tmp_path / "native_functions.yaml"
    copied.write_bytes((_cached("1.13.1") / "native" / "native_functions.yaml").read_bytes())
    assert main(["check", "--torch-version", "2.0", str(copied)]) == 1
    out = capsys.readouterr().out
    assert out.count("[OPG128]") == 3 and out.splitlines()[-1].startswith("3 errors, 0 warnings in 1 file")
    copied.write_bytes((_cached("2.0.1") / "native" / "native_functions.yaml").read_bytes())
    assert main(["check", "--torch-version", "1.13", str(copied)]) == 1
    assert capsys.readouterr().out.count("[OPG101]") == 63  # every list of tags in its file


@pytest.mark.slow  # a whole real file checked
def test_the_1_13_fork_copied_alone_is_found_as_1_13(tmp_path: Path, capsys) -> None:
    """The real 1.13 fork's file (a PyTorch main of October 2022, tests/real_trees.py) copied without its tree: its
    ops are 1.13.1's, and it checks clean as 1.13."""
    from real_trees import native_yaml, tree_or_skip

    copied = tmp_path / "native_functions.yaml"
    copied.write_bytes(native_yaml(tree_or_skip("pytorch-1.13")).read_bytes())
    assert main(["check", str(copied)]) == 0
    assert capsys.readouterr().out == "no problems in 1 file, checked as torch 1.13 (from its content)\n"


@pytest.mark.versions
def test_a_tree_of_links_to_a_release_checks_and_generates_alike(tmp_path: Path, capsys) -> None:
    """A tree of symbolic links to 2.6's packaged ATen: check and generate-backend both read it as 2.6 (whose
    func: schemas have Dimname), and generate-backend fills 2.6's own templates."""
    aten = _cached("2.6.0")
    links = tmp_path / "ATen"
    for source in aten.rglob("*"):
        if source.is_file():
            target = links / source.relative_to(aten)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)
    native = links / "native" / "native_functions.yaml"
    backend = tmp_path / "xla_native_functions.yaml"
    backend.write_text("backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n- sum.dim_DimnameList\n")
    version_py = aten.parents[2] / "torch" / "version.py"
    label = f"torch {resolve_for(str(aten / 'native' / 'native_functions.yaml')).found} ({version_py})"
    assert label.startswith("torch 2.6.0")
    assert main(["check", str(backend), "--native-functions", str(native)]) == 0
    assert capsys.readouterr().out.endswith(f"checked as {label}\n")
    assert main(["generate-backend", "-s", str(backend), "-o", str(tmp_path / "out"),
                 "--native-functions", str(native)]) == 0
    assert capsys.readouterr().err == f"opgen: 2 file(s) written, 0 unchanged, as {label}\n"


def test_the_server_says_a_release_found_from_the_content(tmp_path: Path) -> None:
    """The status notification's fields and the hover of a func: line, for a copied file of 2.14's ops."""
    native = tmp_path / "native_functions.yaml"
    native.write_text(_as_release("2.14.1"))
    (tmp_path / "tags.yaml").write_text("")
    ws = Workspace(str(tmp_path))
    ws.open("file:///n", str(native), native.read_text(), 1)
    status = ws.release_for(str(native)).status()
    assert (status["version"], status["profile"], status["source"], status["label"]) == \
        ("2.14", "2.14.1", "from its content", "torch 2.14 (from its content)")
    analysis = ws.analyse("file:///n")
    assert analysis.native is not None and analysis.native.release.series == "2.14"
    text = hover(analysis.native, analysis.tags, 0, 10, release_label=status["label"])
    assert text is not None and "read as torch 2.14 (from its content)" in text.markdown
