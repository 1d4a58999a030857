"""One exit-status convention across the commands (server/status.py): 0 clean, 1 errors in the inputs, 2 bad
usage (an unknown option, a missing input), 3 partly generated. Each command, each status it can give."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

import opgen_lsp.codegen.generate as generate_module
from opgen_lsp import status
from opgen_lsp.analysis import shims
from opgen_lsp.cli import main

SAMPLES_ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"
NATIVE = ("- func: abs(Tensor self) -> Tensor\n  variants: function, method\n  dispatch:\n    CPU: abs\n\n"
          "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: abs_out\n")
BAD_NATIVE = NATIVE.replace("variants: function, method", "variants: nope")
TAGS = "- tag: core\n  desc: core aten\n"
BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n"


def _native(folder: Path, text: str = NATIVE, tags: str = TAGS) -> Path:
    (folder / "native").mkdir(parents=True)
    (folder / "native" / "native_functions.yaml").write_text(text, encoding="utf-8")
    (folder / "native" / "tags.yaml").write_text(tags, encoding="utf-8")
    return folder / "native" / "native_functions.yaml"


def _run(argv: list[str]) -> int:
    """main(argv), or the status argparse exits with."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def _no_traceback(capsys) -> str:
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return out.out + out.err


def test_every_command_refuses_an_unknown_option_with_2(capsys) -> None:
    for command in ("check", "explain", "generate", "generate-backend", "generate-lazy"):
        assert _run([command, "--no-such-option"]) == status.USAGE, command
    _no_traceback(capsys)


# ------------------------------------------------------------------------------------------------ check

def test_check(tmp_path: Path, capsys) -> None:
    good = _native(tmp_path / "good")
    bad = _native(tmp_path / "bad", BAD_NATIVE)
    assert _run(["check", str(good)]) == status.CLEAN
    assert _run(["check", str(bad)]) == status.INPUT_ERRORS
    assert _run(["check", str(tmp_path / "missing.yaml")]) == status.USAGE
    _no_traceback(capsys)


# ------------------------------------------------------------------------------------------------ explain

def test_explain(tmp_path: Path, capsys) -> None:
    good = _native(tmp_path / "good")
    bad = _native(tmp_path / "bad", BAD_NATIVE)
    assert _run(["explain", "abs", "--native-functions", str(good)]) == status.CLEAN
    assert _run(["explain", "abs", "--native-functions", str(bad)]) == status.INPUT_ERRORS
    assert _run(["explain", "abz", "--native-functions", str(good)]) == status.USAGE  # no such op: asked wrongly
    assert _run(["explain", "abs", "--native-functions", str(tmp_path / "missing.yaml")]) == status.USAGE
    _no_traceback(capsys)


def test_explain_on_a_file_that_is_not_utf8_is_an_input_error(tmp_path: Path, capsys) -> None:
    path = _native(tmp_path, NATIVE)
    path.write_bytes(NATIVE.encode() + b"# \xff\n")
    assert _run(["explain", "abs", "--native-functions", str(path)]) == status.INPUT_ERRORS
    assert "not UTF-8 text" in _no_traceback(capsys)


# ------------------------------------------------------------------------------------------------ generate

def _generate(source: Path, out: Path, *flags: str) -> int:
    return _run(["generate", "-s", str(source), "-d", str(out / "aten"), "--aoti-install-dir", str(out / "aoti"),
                 *flags])


def test_generate_clean(tmp_path: Path, capsys) -> None:
    assert _generate(SAMPLES_ATEN, tmp_path, "--update-aoti-c-shim") == status.CLEAN
    _no_traceback(capsys)


def test_generate_on_yaml_errors_is_1_with_each_error_at_its_line(tmp_path: Path, capsys) -> None:
    _native(tmp_path / "src", BAD_NATIVE)
    assert _generate(tmp_path / "src", tmp_path / "out") == status.INPUT_ERRORS
    said = _no_traceback(capsys)
    assert f"{tmp_path / 'src' / 'native' / 'native_functions.yaml'}:2:13: error: " in said and "[OPG103]" in said


def test_generate_on_a_tags_file_that_is_not_utf8_is_1(tmp_path: Path, capsys) -> None:
    _native(tmp_path / "src", NATIVE, tags=TAGS)
    (tmp_path / "src" / "native" / "tags.yaml").write_bytes(b"- tag: core\n  desc: \xff\n")
    assert _generate(tmp_path / "src", tmp_path / "out") == status.INPUT_ERRORS
    assert "tags.yaml: not UTF-8 text" in _no_traceback(capsys)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="-j 2 forks")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_generate_on_an_internal_error_is_1_with_one_line(jobs: str, tmp_path: Path, monkeypatch, capsys) -> None:
    """A bug in an emitter (here: rendering Functions.h fails) is one line naming it and where it was raised, the
    same with files built in this process and in worker processes."""
    real_render = generate_module.render

    def render(template, templates, env, *release):
        if template == "Functions.h":
            raise KeyError("oops")
        return real_render(template, templates, env, *release)

    monkeypatch.setattr(generate_module, "render", render)
    assert _generate(SAMPLES_ATEN, tmp_path / "out", "-j", jobs, "--implemented-only") == status.INPUT_ERRORS
    lines = [line for line in _no_traceback(capsys).splitlines() if "internal error" in line]
    assert lines == [f"opgen: internal error: KeyError: 'oops' (raised at {__file__}:{_line_of(render)} in render; "
                     "a bug in opgen, please report it)"]


def _line_of(function) -> int:
    """The line of the raise in function (its only one)."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if "raise" in line)


def test_generate_bad_usage_is_2(tmp_path: Path, capsys) -> None:
    assert _generate(tmp_path / "nowhere", tmp_path / "out") == status.USAGE
    assert _generate(SAMPLES_ATEN, tmp_path / "out", "--static-dispatch-backend", "NotAKey") == status.USAGE
    _no_traceback(capsys)


def test_generate_partly_is_3_unless_implemented_only(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(shims, "fallback_ops_candidates", lambda source_path: [])  # no AOTI shims
    assert _generate(SAMPLES_ATEN, tmp_path / "a", "-j", "1") == status.PARTIAL
    assert "cannot generate" in _no_traceback(capsys)
    assert _generate(SAMPLES_ATEN, tmp_path / "b", "-j", "1", "--implemented-only") == status.CLEAN


# ------------------------------------------------------------------------------------------------ backends

@pytest.fixture
def backend_inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    native = _native(tmp_path / "src")
    good = tmp_path / "xla.yaml"
    good.write_text(BACKEND, encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(BACKEND.replace("- abs", "- abz"), encoding="utf-8")
    return native, good, bad


def _backend_command(command: str, source: Path, native: Path, out: Path) -> int:
    flags = ["--shape-inference-hdr", str(out.parent / "shape.h")] if command == "generate-lazy" else []
    (out.parent / "shape.h").write_text("", encoding="utf-8")
    return _run([command, "-s", str(source), "-o", str(out), "--native-functions", str(native), *flags])


@pytest.mark.parametrize("command", ["generate-backend", "generate-lazy"])
def test_backend_commands(command: str, backend_inputs, tmp_path: Path, capsys) -> None:
    native, good, bad = backend_inputs
    assert _backend_command(command, good, native, tmp_path / "out") == status.CLEAN
    assert _backend_command(command, bad, native, tmp_path / "out") == status.INPUT_ERRORS
    assert _backend_command(command, tmp_path / "missing.yaml", native, tmp_path / "out") == status.USAGE
    _no_traceback(capsys)


@pytest.mark.parametrize("command", ["generate-backend", "generate-lazy"])
def test_backend_commands_on_native_errors_are_1_with_lines(command: str, backend_inputs, tmp_path: Path,
                                                             capsys) -> None:
    native, good, _ = backend_inputs
    native.write_text(BAD_NATIVE, encoding="utf-8")
    assert _backend_command(command, good, native, tmp_path / "out") == status.INPUT_ERRORS
    said = _no_traceback(capsys)
    assert f"{native}:2:13: error: " in said and "[OPG103]" in said
