"""The summary of the files a generation wrote, the same for generate, generate-backend and generate-lazy."""

from __future__ import annotations

from opgen_lsp.cli.generation_report import report_written
from opgen_lsp.codegen.writer import WriteResult


def test_verbose_names_each_file_written_and_the_summary_says_as_what(capsys):
    report_written(WriteResult(("out/a.h", "out/b.cpp"), ("out/c.h",), ()), verbose=True,
                   as_what="gen.py of torch 2.13.0 (default)")
    out, err = capsys.readouterr()
    assert out == "wrote out/a.h\nwrote out/b.cpp\n"
    assert err == "opgen: 2 file(s) written, 1 unchanged, as gen.py of torch 2.13.0 (default)\n"


def test_without_verbose_only_the_summary(capsys):
    report_written(WriteResult((), ("x",), ()), verbose=False)
    assert capsys.readouterr() == ("", "opgen: 0 file(s) written, 1 unchanged\n")
