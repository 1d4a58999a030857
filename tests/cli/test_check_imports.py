"""`opgen check` imports only what the command needs: a check of native_functions.yaml and tags.yaml loads no
generator (opgen_lsp.codegen), only the readers, the rules and the per-op pieces the AOTI shim check compiles
(benchmarks/bench_check_imports.py measures the cost beside torchgen's `import torchgen.gen`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "aten" / "native"


def _imported(*args: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "opgen_lsp.cli", *args], capture_output=True,
                          text=True, timeout=120)
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done.returncode, names


def test_a_native_check_imports_no_generator() -> None:
    status, names = _imported("check", "-q", "--no-cache", str(SAMPLES / "native_functions.yaml"),
                              str(SAMPLES / "tags.yaml"))
    assert status == 0
    assert "opgen_lsp.analysis.shims" in names  # the check ran, the shim check with it
    assert sorted(n for n in names if n.startswith("opgen_lsp.codegen")) == []
    assert not any(n.startswith(("opgen_lsp.index.backend", "opgen_lsp.index.derivatives")) for n in names)


def test_a_command_imports_no_other_commands_module() -> None:
    status, names = _imported("check", "-q", "--no-cache", str(SAMPLES / "native_functions.yaml"),
                              str(SAMPLES / "tags.yaml"))
    commands = {n for n in names if n.startswith("opgen_lsp.cli.")} - {"opgen_lsp.cli.main", "opgen_lsp.cli.__main__"}
    assert status == 0 and "opgen_lsp.cli.check" in commands
    assert not commands & {"opgen_lsp.cli.generate", "opgen_lsp.cli.format", "opgen_lsp.cli.bc",
                           "opgen_lsp.cli.explain", "opgen_lsp.cli.upgrade", "opgen_lsp.cli.scaffold"}
    assert not any(n.startswith("opgen_lsp.analysis.pytorch_format") for n in names)  # (the formatter's)
    assert not {"json", "difflib"} & names  # (a clean text report: see report.py and suggest.py)


def test_a_check_answered_from_the_cache_imports_no_parser(tmp_path: Path) -> None:
    """The verdicts kept (analysis/check_memo.py) are all a check of unchanged files needs: no parser, no model."""
    args = ("check", "-q", "--cache-dir", str(tmp_path), str(SAMPLES / "native_functions.yaml"),
            str(SAMPLES / "tags.yaml"))
    first, names = _imported(*args)
    assert first == 0 and "opgen_lsp.index.native" in names  # parsed, and kept
    again, names = _imported(*args)
    assert again == 0
    loaded = {n for n in names if n.startswith(("opgen_lsp.index.native", "opgen_lsp.model.lower",
                                                "opgen_lsp.model.native_yaml", "opgen_lsp.analysis.shims",
                                                "opgen_lsp.syntax", "yaml"))}
    assert loaded == set()
    assert not {"json", "difflib"} & names
