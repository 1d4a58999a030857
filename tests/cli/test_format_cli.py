"""`opgen format` against PyTorch's NATIVEFUNCTIONS lint, the lint's procedure run in the test.

The reference (tests/nativefunctions_lint.py) is the lint's documented procedure written out (tools/linter/adapters/
nativefunctions_linter.py in PyTorch): read the file as text, load it with ruamel.yaml in round-trip mode with
preserve_quotes, width 1000 and booleans False/True, dump it; when the dump differs, `lintrunner -a` replaces
the file with it; when the load fails, the lint reports an error and offers no replacement. opgen must leave
every file byte for byte as the lint's replacement would, on every release's own file and on seeded mutations.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from nativefunctions_lint import lint_dump
from release_files import release_native

from opgen_lsp.cli import main
from opgen_lsp.releases import RELEASES

FAILS = "the lint cannot load it"


def lint_replacement(path: Path) -> bytes | None:
    """The bytes `lintrunner -a` leaves in the file after the NATIVEFUNCTIONS lint (None: the load fails)."""
    with open(path, encoding="utf-8") as f:
        contents = f.read()
    try:
        new_contents = lint_dump(contents)
    except Exception:
        return None
    return new_contents.encode("utf-8") if new_contents != contents else path.read_bytes()


def _agree(path: Path, capsys: pytest.CaptureFixture[str], with_check: bool = True) -> None:
    """opgen format --check (unless told not to: a round trip of a whole file costs seconds), then opgen format,
    against the lint's replacement of the same file."""
    before = path.read_bytes()
    expected = lint_replacement(path)
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
@pytest.mark.parametrize("version", [r.version for r in RELEASES if r.version != "2.13.0"] + ["installed"])
def test_every_release_file_is_formatted_as_the_lint_does(version: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(release_native(version).read_bytes())
    _agree(path, capsys, with_check=False)


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


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_files_are_formatted_as_the_lint_does(seed: int, real_lines: list[str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(seed)
    lines = _window(real_lines, rng)
    for mutate in rng.sample(MUTATIONS, rng.randint(1, 3)):
        mutate(lines, rng)
    path = tmp_path / "native_functions.yaml"
    newline = "\r\n" if seed % 16 == 5 else "\n"
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))
    _agree(path, capsys)


def test_the_mutations_exercise_every_outcome(real_lines: list[str], tmp_path: Path) -> None:
    """The seeds cover files the lint leaves alone, files it rewrites and files it cannot load."""
    outcomes = set()
    for seed in SEEDS:
        rng = random.Random(seed)
        lines = _window(real_lines, rng)
        for mutate in rng.sample(MUTATIONS, rng.randint(1, 3)):
            mutate(lines, rng)
        path = tmp_path / f"{seed}.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = lint_replacement(path)
        outcomes.add("fails" if expected is None else "same" if expected == path.read_bytes() else "rewritten")
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
