"""The options generate-backend, generate-lazy and check share are declared once (cli/options.py): the same
spellings, defaults and help in each command, apart from what the command itself means by them."""

from __future__ import annotations

import argparse

import pytest

from opgen_lsp.cli.main import build_parser

SHARED = ("source_yaml", "output_dir", "impl_path", "native_functions", "templates", "format", "verbose",
          "torch_version", "build_in_tree", "per_operator_headers")
# Help that says what the command reads or does with the value, or which torchgen function the switch is of.
OWN_HELP = ("source_yaml", "impl_path", "build_in_tree", "per_operator_headers")


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[command]
    return parser


def _options(command: str) -> dict[str, argparse.Action]:
    return {a.dest: a for a in _subparser(command)._actions}


def _declared(action: argparse.Action) -> tuple:
    return (type(action), tuple(action.option_strings), action.default, action.required, action.metavar,
            action.choices)


@pytest.mark.parametrize("dest", SHARED)
def test_backend_and_lazy_declare_the_shared_options_alike(dest):
    backend, lazy = _options("generate-backend")[dest], _options("generate-lazy")[dest]
    assert _declared(backend) == _declared(lazy)
    assert (backend.help == lazy.help) is (dest not in OWN_HELP)


def test_check_prints_diagnostics_as_the_generators_do():
    assert _declared(_options("check")["format"]) == _declared(_options("generate-backend")["format"])
    assert _options("check")["format"].help == _options("generate-lazy")["format"].help


@pytest.mark.parametrize("spelling", ["--source-yaml", "--source_yaml", "-s"])
def test_both_spellings_of_torchgen_flags_parse(spelling):
    for command in ("generate-backend", "generate-lazy"):
        args = build_parser().parse_args([command, spelling, "b.yaml", "--output_dir", "out", "--impl_path", "k.cpp",
                                          "--impl-path", "l.cpp", "--build-in-tree"])
        assert (args.source_yaml, args.output_dir, args.impl_path, args.build_in_tree) == \
            ("b.yaml", "out", ["k.cpp", "l.cpp"], True)


def test_dry_run_keeps_each_commands_meaning():
    parse = build_parser().parse_args
    assert parse(["generate-backend", "-s", "b.yaml", "-o", "o", "--dry-run"]).dry_run is True
    # gen_lazy_tensor's --dry_run takes a value (argparse's type=bool: any non-empty string is a dry run).
    assert parse(["generate-lazy", "-s", "b.yaml", "-o", "o", "--dry_run", "yes"]).dry_run == "yes"
    assert parse(["generate-lazy", "-s", "b.yaml", "-o", "o"]).dry_run is None


def test_every_generating_command_takes_the_same_verbose_switch():
    declared = {command: _declared(_options(command)["verbose"]) for command in
                ("generate", "generate-backend", "generate-lazy")}
    assert len(set(declared.values())) == 1
