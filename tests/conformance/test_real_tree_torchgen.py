"""Real PyTorch trees (tests/real_trees.py, docs/trees.md) through opgen and through torchgen: the tree's own,
and the releases' (tools/torchgen_release.py; each skips, with the command, when its torchgen is not cached).

- The tree's own torchgen accepts its yaml; opgen check gives no error on a tree of a release it knows whose
  torchgen is its release's, the release's torchgen's verdict (located) on one whose torchgen differs (OPG965 says
  so), and on an older one exactly OPG951 (the range it knows), as docs/releases.md promises.
- Each tree's native_functions.yaml + tags.yaml checked as torch 2.6, 2.13 and 2.15: opgen errs iff that release's
  torchgen rejects the yaml (these trees are older than some of them: real inputs nobody here wrote), and then
  has an error on the entry torchgen names.
- A tree of a release whose generation is verified: `opgen generate` writes what that release's gen.py writes for
  the tree's ATen folder (less the files it names, exit 3); against the tree's own gen.py, files differ only when
  OPG965 says the tree's torchgen is not its release's.
- A vendor's own dispatch key (pytorch_zc's torchgen adds ZC): its gen.py accepts a kernel for it, opgen gives the
  release's (2.0.1's) error on that line and says, OPG965, that the tree's torchgen differs.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import reference
from file_trees import files_under
from real_trees import NATIVE, TREES, native_yaml, tree_or_skip
from release_fit import SCHEMA, tags_sorted

from opgen_lsp.cli import main
from opgen_lsp.releases import Fit, Release, known_range, resolve, resolve_for
from opgen_lsp.releases.tree_release import drift_note

from .test_release_matrix import ORACLE, release_folder

pytestmark = pytest.mark.slow

CHECKED_AS = ("2.6.0", "2.13.0", "2.15.0")  # the oldest release, the reference, the newest
_AT_LINE = re.compile(r"native_functions\.yaml:(\d+)")


def torchgen_verdict(pythonpath: Path, native: Path) -> str | None:
    """None when the torchgen on pythonpath reads and groups the yaml (with the tags.yaml beside it), else what it
    raised (release_oracle.py)."""
    done = reference.run([str(ORACLE), str(native.with_name("tags.yaml")), str(native)], cwd=ORACLE.parent,
                         pythonpath=[pythonpath], check=True)
    return json.loads(done.stdout)[0]


def opgen_errors(capsys, native: Path, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["check", *args, "--format", "json", str(native)])
    return [d for d in json.loads(capsys.readouterr().out) if d["severity"] == "error"]


def entry_lines(native: Path, line: int) -> range:
    """The 0-based lines of the entry whose `- func:` is on 1-based `line` (as torchgen names an entry)."""
    lines = native.read_text(encoding="utf-8").split("\n")
    end = next((i for i in range(line, len(lines)) if lines[i].startswith("- ")), len(lines))
    return range(line - 1, end)


@pytest.mark.parametrize("name", sorted(TREES))
def test_the_trees_own_torchgen_and_opgen(name: str, capsys) -> None:
    tree = tree_or_skip(name)
    native = native_yaml(tree)
    assert torchgen_verdict(tree, native) is None
    errors = opgen_errors(capsys, native)
    resolved = resolve_for(str(native))
    if resolved.fit is Fit.OLDER:
        assert [d["code"] for d in errors] == ["OPG951"] and f"({known_range()})" in errors[0]["message"]
    elif drift_note(str(native), resolved) is None:
        assert errors == []
    else:  # a fork's torchgen (OPG965): what opgen promises is its release's verdict (PyTorch_E5M2's Float8 dtype)
        _agrees(native, torchgen_verdict(release_folder(resolved.release.version), native), errors,
                resolved.release.version)


@pytest.mark.parametrize("name", sorted(TREES))
@pytest.mark.parametrize("version", CHECKED_AS)
def test_each_release_and_opgen_agree_on_the_trees_yaml(name: str, version: str, capsys) -> None:
    tree = tree_or_skip(name)
    folder = release_folder(version)
    native = native_yaml(tree)
    said = torchgen_verdict(folder, native)
    errors = opgen_errors(capsys, native, "--torch-version", version)
    _agrees(native, said, errors, version)


def _agrees(native: Path, said: str | None, errors: list[dict], version: str) -> None:
    """opgen errs iff torchgen `version` said something, and then on the entry torchgen names."""
    assert bool(errors) == (said is not None), f"torchgen {version}: {said or 'accepts'}; opgen: " \
                                               f"{[(d['code'], d['range']['start']['line'] + 1) for d in errors[:5]]}"
    located = _AT_LINE.search(said or "")
    if located is not None:
        entry = entry_lines(native, int(located.group(1)))
        assert any(d["range"]["start"]["line"] in entry for d in errors), \
            f"torchgen {version} names line {located.group(1)} ({said[:200]}); opgen does not"


def _generation_verified(version_txt: str) -> bool:
    found = resolve(version_txt, "version.txt")
    return found is not None and found.fit is Fit.KNOWN and found.release.generation_verified


# The trees of a release whose generation is compared with its gen.py (2.6's is not yet: that tree is left out).
GENERATED = sorted(name for name, (_, version_txt) in TREES.items() if _generation_verified(version_txt))


def _gen(pythonpath: Path | None, aten: Path, root: Path, *, aoti: bool) -> dict[str, bytes]:
    """gen.py's (pythonpath's torchgen) or opgen's (None) files for aten, by path under root; aoti: that gen.py
    takes --aoti-install-dir (from 2.4)."""
    root.mkdir()
    args = ["-s", str(aten), "-d", str(root / "aten"), *(["--aoti-install-dir", str(root / "aoti")] * aoti)]
    if pythonpath is None:
        assert main(["generate", *args, "--implemented-only"]) == 0
    else:
        if "--headeronly-install-dir" in (pythonpath / "torchgen" / "gen.py").read_text():
            args += ["--headeronly-install-dir", str(root / "headeronly")]
        done = reference.run(["-m", "torchgen.gen", *args], cwd=root, pythonpath=[pythonpath],
                             outputs=[root / "aten", root / "aoti", root / "headeronly"])
        assert done.returncode == 0, done.stderr[-2000:]
    return files_under(root)


def _as_compared(files: dict[str, bytes], release: Release) -> dict[str, bytes]:
    """gen.py's files with RegisterSchema.cpp's tags sorted where its order is a set's (before 2.1: opgen writes
    them sorted; Release.schema_tags_sorted), as the release matrix compares them."""
    if release.schema_tags_sorted or SCHEMA not in files:
        return files
    return {**files, SCHEMA: tags_sorted(files[SCHEMA])}


def _with_the_trees_fallback_ops(release: Path, tree: Path, tmp_path: Path) -> Path:
    """The release's torchgen, reading the tree's aoti/fallback_ops.py (an input, as opgen reads the tree's own):
    a pre-release tree lists other ops than its release."""
    copy = tmp_path / "release-torchgen"
    shutil.copytree(release / "torchgen", copy / "torchgen", ignore=shutil.ignore_patterns("__pycache__"))
    fallback_ops = tree / "torchgen" / "aoti" / "fallback_ops.py"
    if fallback_ops.exists():  # (from 2.4)
        shutil.copyfile(fallback_ops, copy / "torchgen" / "aoti" / "fallback_ops.py")
    return copy


@pytest.mark.parametrize("name", GENERATED)
def test_generate_matches_the_release_and_the_drift_note_is_honest(name: str, tmp_path: Path) -> None:
    tree = tree_or_skip(name)
    native = native_yaml(tree)
    resolved = resolve_for(str(native))
    version = resolved.release.version
    aten = native.parent.parent
    said = torchgen_verdict(release_folder(version), native)
    if said is not None:  # (opgen's verdict agrees: test_each_release_and_opgen_agree_on_the_trees_yaml)
        pytest.skip(f"torch {version}'s torchgen refuses {name}'s yaml, so there is nothing to generate: {said[:200]}")
    aoti = resolved.release.gen_py_takes_aoti_flags
    ours = _gen(None, aten, tmp_path / "opgen", aoti=aoti)
    theirs = _as_compared(_gen(_with_the_trees_fallback_ops(release_folder(version), tree, tmp_path), aten,
                               tmp_path / "release", aoti=aoti), resolved.release)
    assert sorted(set(theirs) - set(ours)) == [], "files opgen does not write"
    assert [n for n in ours if ours[n] != theirs.get(n)] == []
    own = _as_compared(_gen(tree, aten, tmp_path / "own",
                            aoti="--aoti-install-dir" in (tree / "torchgen" / "gen.py").read_text()), resolved.release)
    differing = sorted(n for n in own if n in ours and own[n] != ours[n])
    print(f"{name}: {len(own) - len(differing) - len(set(own) - set(ours))} of {len(own)} files identical with its "
          f"own gen.py; {len(ours)} of {len(theirs)} written, all identical with torch {version}'s")
    note = drift_note(str(native), resolved)
    assert bool(differing) <= (note is not None), f"{differing} differ, and OPG965 says nothing"


def test_a_vendor_key_of_the_trees_own_torchgen_is_the_nearest_releases_error_and_said(tmp_path: Path,
                                                                                        capsys) -> None:
    """pytorch_zc's torchgen knows a dispatch key ZC that no release has: a kernel registered for it is accepted by
    the tree's own gen.py, and opgen (as its release, 2.0.1) reports the key on its line, with OPG965 naming
    model.py first. What opgen can promise for such a tree is the release's verdict, and it says so."""
    tree = tree_or_skip("pytorch-zc-2.0")
    copy = tmp_path / "zc"
    shutil.copytree(tree / "torchgen", copy / "torchgen")
    shutil.copy(tree / "version.txt", copy / "version.txt")
    native = copy / NATIVE / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    shutil.copy(native_yaml(tree).with_name("tags.yaml"), native.with_name("tags.yaml"))
    text = native_yaml(tree).read_text(encoding="utf-8")
    entry = re.search(r"^- func: abs\(Tensor self\) -> Tensor\n(?:  .*\n)*?  dispatch:\n", text, re.M)
    assert entry is not None
    native.write_text(text[:entry.end()] + "    ZC: abs_zc\n" + text[entry.end():], encoding="utf-8")
    key_line = text[:entry.end()].count("\n")  # 0-based line of the inserted key
    assert torchgen_verdict(copy, native) is None
    capsys.readouterr()
    main(["check", "--format", "json", str(native)])
    found = json.loads(capsys.readouterr().out)
    assert ("OPG104", key_line) in {(d["code"], d["range"]["start"]["line"]) for d in found}
    (drift,) = [d for d in found if d["code"] == "OPG965"]
    assert "differs from torch 2.0.1's in model.py" in drift["message"]
