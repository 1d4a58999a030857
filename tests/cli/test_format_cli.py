"""`opgen format` against PyTorch's NATIVEFUNCTIONS lint, the lint's procedure run in the test.

The reference (tests/nativefunctions_lint.py) is the lint's documented procedure written out (tools/linter/adapters/
nativefunctions_linter.py in PyTorch): read the file as text, load it with ruamel.yaml in round-trip mode with
preserve_quotes, width 1000 and booleans False/True, dump it; when the dump differs, `lintrunner -a` replaces
the file with it; when the load fails, the lint reports an error and offers no replacement. opgen must leave
every file byte for byte as the lint's replacement would, on every release's own file and on seeded mutations.
The lint runs as one batch per fixture through the reference cache; opgen's format runs in the test, uncached.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

import pytest
import reference
from nativefunctions_lint import ruamel_yaml
from release_files import release_native

from opgen_lsp.cli import main
from opgen_lsp.releases import RELEASES

FAILS = "the lint cannot load it"
LINT = Path(__file__).resolve().parent.parent / "nativefunctions_lint.py"
VERSIONS = [r.version for r in RELEASES if r.version != "2.13.0"] + ["installed"]


def _available_release_files() -> list[bytes]:
    found = []
    for version in VERSIONS:
        try:
            found.append(release_native(version).read_bytes())
        except pytest.skip.Exception:
            pass  # not fetched: its test skips, with the command that fetches it
    return found


def _lint_batch(files: list[bytes], folder: Path):
    """bytes -> the bytes `lintrunner -a` leaves in a file holding them (None: the load fails), for each of `files`,
    linted by one process through the reference cache (the lint's script, ruamel's package folder and every file
    are the key)."""
    names = {}
    for data in files:
        name = f"{hashlib.sha256(data).hexdigest()}.yaml"
        (folder / name).write_bytes(data)
        names[data] = name
    out = folder / "out"
    outcomes = reference.run_json(LINT, {"files": sorted(set(names.values())), "out": str(out)}, folder,
                                  inputs=[Path(ruamel_yaml.__file__).parent], outputs=[out])

    def replacement(data: bytes) -> bytes | None:
        name = names[data]
        return None if outcomes[name] == "fails" else (out / name).read_bytes()

    return replacement


@pytest.fixture(scope="module")
def release_lint(tmp_path_factory: pytest.TempPathFactory):
    """The lint's replacement of each release's own file (those fetched), in one batch."""
    return _lint_batch(_available_release_files(), tmp_path_factory.mktemp("lint_releases"))


@pytest.fixture(scope="module")
def lint_replacement(real_lines: list[str], tmp_path_factory: pytest.TempPathFactory):
    """The lint's replacement of every seeded mutation (with either line ending), in one batch."""
    files = [_mutated(real_lines, seed, newline).encode("utf-8") for seed in SEEDS for newline in ("\n", "\r\n")]
    return _lint_batch(files, tmp_path_factory.mktemp("lint_mutations"))


def _agree(path: Path, capsys: pytest.CaptureFixture[str], lint_replacement, with_check: bool = True) -> None:
    """opgen format --check (unless told not to: a round trip of a whole file costs seconds), then opgen format,
    against the lint's replacement of the same file."""
    before = path.read_bytes()
    expected = lint_replacement(before)
    check = main(["format", "--check", str(path)]) if with_check else int(expected != before)
    assert path.read_bytes() == before, "--check wrote the file"
    code = main(["format", str(path)])
    after = path.read_bytes()
    capsys.readouterr()
    if expected is None:
        assert (check, code, after) == (1, 1, before), FAILS
        return
    assert after == expected
    changed = expected != before
    assert (check, code) == ((1 if changed else 0), 0)


@pytest.mark.slow
@pytest.mark.versions
@pytest.mark.parametrize("version", VERSIONS)
def test_every_release_file_is_formatted_as_the_lint_does(version: str, tmp_path: Path, release_lint,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(release_native(version).read_bytes())
    _agree(path, capsys, release_lint, with_check=False)


# ---------------------------------------------------------------- seeded mutations of the real file

def _reindent(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    if lines[i].startswith("  ") and lines[i].strip():
        lines[i] = rng.choice(["   ", "    ", " ", "\t  "[: rng.randint(1, 3)]]) + lines[i].lstrip(" ")
    elif lines[i].startswith("- "):
        lines[i] = "-   " + lines[i][2:]


def _requote(lines: list[str], rng: random.Random) -> None:
    keyed = [i for i, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")]
    i = rng.choice(keyed)
    key, _, value = lines[i].partition(": ")
    value = value.strip()
    if value[:1] in "'\"":
        value = value.strip("'\"")
    else:
        value = rng.choice(["'{}'", '"{}"']).format(value.replace("'", "''") if value else value)
    lines[i] = f"{key}: {value}"


def _boolean(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    key = lines[i].partition(":")[0] if lines[i].startswith("  ") and ":" in lines[i] else "  manual_cpp_binding"
    lines.insert(i + 1, f"{key if key.startswith('  ') else '  manual_cpp_binding'}: "
                        f"{rng.choice(['true', 'false', 'True', 'False', 'yes', 'TRUE'])}")


def _comment(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines) + 1)
    lines.insert(i, rng.choice(["# a comment", "  # indented comment", "    #deeper", "#", "#  spaced  "]))
    j = rng.randrange(len(lines))
    if lines[j].strip() and "#" not in lines[j]:
        lines[j] += rng.choice(["  # trailing", " #t", "\t# tab"])


def _trailing_space(lines: list[str], rng: random.Random) -> None:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        lines[i] += rng.choice([" ", "  ", "\t"])


def _long_line(lines: list[str], rng: random.Random) -> None:
    funcs = [i for i, line in enumerate(lines) if line.startswith("- func: ")]
    i = rng.choice(funcs)
    extra = ", ".join(f"Tensor arg{n}" for n in range(rng.randint(60, 90)))
    lines[i] = lines[i].replace("(", f"({extra}, ", 1)


def _blank_lines(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines) + 1)
    lines.insert(i, rng.choice(["", "", "   "]))
    if rng.random() < 0.3:
        lines.extend(["", ""])


def _flow_list(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines) + 1)
    lines.insert(i, rng.choice(["  tags: [core,pointwise]", "  tags: [ core ]", "  tags:\n  - core", "  tags:\n    - core"]))


MUTATIONS = (_reindent, _requote, _boolean, _comment, _trailing_space, _long_line, _blank_lines, _flow_list)
SEEDS = range(64)


@pytest.fixture(scope="module")
def real_lines() -> list[str]:
    return release_native("installed").read_text(encoding="utf-8").splitlines()


def _window(lines: list[str], rng: random.Random) -> list[str]:
    """About 40 lines of the real file, starting at an entry."""
    starts = [i for i, line in enumerate(lines) if line.startswith("- func: ")]
    start = rng.choice(starts[:-12])
    end = next(i for i in starts if i >= start + 40)
    return lines[start:end]


def _mutated(real_lines: list[str], seed: int, newline: str) -> str:
    rng = random.Random(seed)
    lines = _window(real_lines, rng)
    for mutate in rng.sample(MUTATIONS, rng.randint(1, 3)):
        mutate(lines, rng)
    return newline.join(lines) + newline


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_files_are_formatted_as_the_lint_does(seed: int, real_lines: list[str], tmp_path: Path,
                                                      lint_replacement, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(_mutated(real_lines, seed, "\r\n" if seed % 16 == 5 else "\n").encode("utf-8"))
    _agree(path, capsys, lint_replacement)


def test_the_mutations_exercise_every_outcome(real_lines: list[str], lint_replacement) -> None:
    """The seeds cover files the lint leaves alone, files it rewrites and files it cannot load."""
    outcomes = set()
    for seed in SEEDS:
        data = _mutated(real_lines, seed, "\n").encode("utf-8")
        expected = lint_replacement(data)
        outcomes.add("fails" if expected is None else "same" if expected == data else "rewritten")
    assert outcomes == {"fails", "same", "rewritten"}


def test_diff_prints_the_change_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text("- func: a(Tensor x) -> Tensor\n  variants:   function\n  manual_cpp_binding: true\n")
    assert main(["format", "--diff", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[2:] == ["@@ -1,3 +1,3 @@", " - func: a(Tensor x) -> Tensor", "-  variants:   function",
                                    "-  manual_cpp_binding: true", "+  variants: function", "+  manual_cpp_binding: True"]
    assert "variants:   function" in path.read_text()
    assert main(["format", str(path)]) == 0
    assert path.read_text() == "- func: a(Tensor x) -> Tensor\n  variants: function\n  manual_cpp_binding: True\n"


def test_check_and_diff_exclude_each_other(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["format", "--check", "--diff", str(tmp_path / "x.yaml")])
    assert exit_.value.code == 2


def test_a_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["format", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_format_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text("- func: a() -> Tensor\n  b: true\n")
    path.chmod(0o640)
    assert main(["format", str(path)]) == 0
    assert path.stat().st_mode & 0o777 == 0o640 and "b: True" in path.read_text()


def test_check_does_not_import_ruamel(tmp_path: Path) -> None:
    """ruamel.yaml is loaded by the commands that format, never by `opgen check`."""
    path = tmp_path / "native_functions.yaml"
    path.write_text("- func: a(Tensor x) -> Tensor\n")
    probe = ("import sys\nfrom opgen_lsp.cli.main import main\nmain(['check', sys.argv[1]])\n"
             "print(sorted(m for m in sys.modules if m.startswith('ruamel')))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
