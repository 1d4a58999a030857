"""Vendor dialects of the backend yaml (torch_npu, op-plugin, torch_mlu, torch_musa) on their real files.

Each real file checks with no error against the release it targets, and each mutation of it (an op renamed, an
upstream schema drifted, a new op's schema broken or cut, a section renamed, a bad version) is reported on the
mutated line. torch_npu's and torch_mlu's files are in ../shared/corpus (`corpus`); op-plugin's and torch_musa's are
read from a git mirror of the vendor repository named by $OPGEN_VENDOR_REPOS (a folder holding `owner+name/repo`),
skipped without it. All in-process, resolved against the real native_functions.yaml parsed once per module.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen_lsp.analysis.check import check_paths, classify
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.model.vendor_formats import (
    CUSTOM,
    OP_PLUGIN,
    TORCH_MLU,
    TORCH_MUSA,
    TORCH_NPU,
    UPSTREAM,
    VendorOp,
    lower_vendor_yaml,
    vendor_format,
)
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.libyaml import compose

# ../shared/corpus beside the checkout, as tests/conftest.py finds it.
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
MIRRORS = os.environ.get("OPGEN_VENDOR_REPOS")
NO_MIRROR = "no vendor repository mirror: set OPGEN_VENDOR_REPOS to a folder holding owner+name/repo git mirrors"
# (file name as the vendor names it, where it is: corpus file or (mirror, path in the repository))
SOURCES: dict[str, tuple[str, str | tuple[str, str]]] = {
    TORCH_NPU: ("npu_native_functions.yaml", "torch_npu__npu_native_functions.yaml"),
    TORCH_MLU: ("mlu_functions.yaml", "torch_mlu__mlu_functions.yaml"),
    OP_PLUGIN: ("op_plugin_functions.yaml", ("Ascend+op-plugin", "op_plugin/config/op_plugin_functions.yaml")),
    TORCH_MUSA: ("musa_functions.yaml", ("MooreThreads+torch_musa", "torch_musa/csrc/aten/ops/musa_functions.yaml")),
}


def _mirror_file(repo: str, path: str) -> str | None:
    if not MIRRORS:
        return None
    git_dir = Path(MIRRORS) / repo / "repo"
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True,
                          check=False)
    return done.stdout.decode() if done.returncode == 0 else None


_TEXTS: dict[str, str | None] = {}


def real_text(fmt: str) -> str:
    if fmt not in _TEXTS:
        where = SOURCES[fmt][1]
        if isinstance(where, str):
            file = CORPUS / where
            _TEXTS[fmt] = file.read_text() if file.is_file() else None
        else:
            _TEXTS[fmt] = _mirror_file(*where)
    text = _TEXTS[fmt]
    if text is None:
        pytest.skip(NO_MIRROR)
    return text


@pytest.fixture(scope="module")
def native(native_yaml, tags_yaml) -> NativeSnapshot:
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)


def check(fmt: str, text: str, native: NativeSnapshot):
    return check_backend(text, native, SOURCES[fmt][0])


def errors_by_line(fmt: str, text: str, native: NativeSnapshot, *, warnings: bool = False) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for d in check(fmt, text, native).diagnostics:
        if d.is_error or warnings:
            out.setdefault(d.span.start_line, set()).add(d.code)
    return out


# ---------------------------------------------------------------- the real files

# Errors a real file has against torch 2.13 that are not opgen's: torch_musa's file targets torch 2.7.1 patched
# with 14 ops of its own (and uses 8 named-tensor overloads 2.13 dropped). torch_mlu's is of its r2.4 line (torch
# 2.4, older than any release opgen knows): the 6 attention ops whose schemas changed since are warnings, since its
# codegen reads only the names of aten entries.
KNOWN_AT_2_13 = {TORCH_NPU: 0, TORCH_MLU: 0, OP_PLUGIN: 0, TORCH_MUSA: 22}


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", list(SOURCES))
def test_real_file_checks_clean(fmt: str, native: NativeSnapshot) -> None:
    text = real_text(fmt)
    assert vendor_format(SOURCES[fmt][0], text) == fmt
    found = errors_by_line(fmt, text, native)
    assert sum(len(c) for c in found.values()) == KNOWN_AT_2_13[fmt], found
    if fmt == TORCH_MLU:
        warned = errors_by_line(fmt, text, native, warnings=True)
        assert sorted(c for codes in warned.values() for c in codes) == ["OPG509"] + ["OPG550"] * 5


@pytest.mark.corpus
def test_npu_corpus_file_recognised_by_content() -> None:
    """The corpus copy's name is not torch_npu's: its keys (backend: with custom:) say what it is."""
    text = real_text(TORCH_NPU)
    assert vendor_format("x/torch_npu__npu_native_functions.yaml", text) == TORCH_NPU
    assert classify("x/torch_npu__npu_native_functions.yaml", text) == "backend"


@pytest.mark.corpus
def test_cli_checks_the_npu_file_clean() -> None:
    result = check_paths([str(CORPUS / SOURCES[TORCH_NPU][1])])
    assert not result.usage_error and [i for i in result.items if i.diagnostic.is_error] == []


# ---------------------------------------------------------------- mutations

# A mutation changes one line: (new line, expected code prefix) or None when it does not apply to the entry.
Mutation = Callable[[str, VendorOp], tuple[str, str] | None]


def _replace_in(line: str, op: VendorOp, old: str, new: str) -> str | None:
    at = line.find(old, op.span.start_col)
    return None if at < 0 else line[:at] + new + line[at + len(old):]


def rename(line: str, op: VendorOp) -> tuple[str, str] | None:
    if op.role == CUSTOM or op.schema is not None and op.role != UPSTREAM:
        return None
    done = _replace_in(line, op, op.text, op.text.replace(".", "_zz.", 1) if "." in op.text else op.text + "_zz")
    return (done, "OPG509") if done else None


def drift(line: str, op: VendorOp) -> tuple[str, str] | None:
    if op.role == CUSTOM or op.schema is not None and op.role != UPSTREAM:
        return None
    if op.schema is None:
        done = _replace_in(line, op, op.text, op.text + "(Tensor zz) -> Tensor")
    else:
        done = _replace_in(line, op, ") -> ", ", int zz_extra) -> ")
    return (done, "OPG550") if done else None


def break_new_schema(line: str, op: VendorOp) -> tuple[str, str] | None:
    if op.role != CUSTOM or op.schema is None or "(Tensor " not in op.schema:
        return None
    done = _replace_in(line, op, "(Tensor ", "(Tenzor ")
    return (done, "OPG2") if done else None


def cut_new_schema(line: str, op: VendorOp) -> tuple[str, str] | None:
    if op.role != CUSTOM or op.schema is None:
        return None
    done = _replace_in(line, op, op.schema, op.text)
    return (done, "OPG552") if done else None


def bad_name(line: str, op: VendorOp) -> tuple[str, str] | None:
    if op.schema is not None:
        return None
    done = _replace_in(line, op, op.text, op.text + " 2")  # not a name: OPG508 (or an unknown op, OPG509)
    return (done, "OPG50") if done else None


KINDS: tuple[Mutation, ...] = (rename, drift, break_new_schema, cut_new_schema, bad_name)
PER_KIND = 6

# Hand-written: (a line that starts with this, its replacement, code). Section renames leave the sections the
# generated mutations use alone.
HAND_WRITTEN = {
    TORCH_NPU: [("backend: NPU", "backendd: NPU", "OPG507"),
                ("  - view", "  - 3", "OPG553"), ("symint:", "symint: 3", "OPG506"),
                ("  - _pin_memory", "  - func: _pin_memory", "OPG555")],
    OP_PLUGIN: [("    acl_op: [v2.1, newest]", "    acl_op: [v2.1, newer]", "OPG551"), ("quant:", "quants:", "OPG507"),
                ("    op_api: all_version", "    op_api: [v2.1]", "OPG551"), ("autograd:", "autograds:", "OPG507")],
    TORCH_MLU: [("audio:", "audios:", "OPG507"), ("  - func: _local_scalar_dense", "  - _local_scalar_dense", "OPG553"),
                ("  - func: copy_", "  - func:", "OPG553"),
                ("  - func: cat.out", "  - func: cat.out(Tensor self) -> Tensor", "OPG550"),
                ("    derived_type: bang", "    derived_type: bangc", "OPG554")],
    TORCH_MUSA: [("- func: amax", "- func: amax(Tensor self) -> Tensor", "OPG550"), ("- func: amin", "- 7", "OPG553"),
                 ("- func: hypot_", "- func: hypot_.zz", "OPG509"), ("- func: sgn", "- func: ", "OPG553"),
                 ("  structured: false", "  structured: 3", "OPG554")],
}


def _ops(fmt: str, text: str) -> tuple[VendorOp, ...]:
    model, _ = lower_vendor_yaml(fmt, compose(text)[0])
    assert model is not None
    return model.ops


def mutations(fmt: str, text: str, skip_lines: set[int]) -> list[tuple[str, int, str, str]]:
    """(id, line, new line, expected code prefix): up to PER_KIND entries per kind, spread over the file, one
    mutation per line, then the hand-written ones."""
    lines = text.split("\n")
    used = set(skip_lines)
    out = []
    for old, new, code in HAND_WRITTEN[fmt]:
        at = next(i for i, line in enumerate(lines) if line.startswith(old) and i not in used)
        used.add(at)
        out.append((f"hand-{old.strip()}", at, new + lines[at][len(old):], code))
    renamed = {new.rstrip(":") for old, new, _ in HAND_WRITTEN[fmt] if old.endswith(":")} | {
        old.rstrip(":") for old, _, _ in HAND_WRITTEN[fmt] if old.endswith(":")}
    every = _ops(fmt, text)
    # The file's new ops listed again (torch_npu's supported: copy_memory_): no upstream schema to drift from.
    new_ops = {op.text for op in every if op.role == CUSTOM}
    ops = [op for op in every if op.section not in renamed
           and (op.versions is None or "v2.13" in op.versions)]
    for kind in KINDS:
        found = 0
        for op in ops[:: max(1, len(ops) // 60)]:
            line = op.span.start_line
            made = None if line in used or kind is drift and op.text in new_ops else kind(lines[line], op)
            if made is None:
                continue
            used.add(line)
            out.append((f"{kind.__name__}-{op.text}", line, made[0], made[1]))
            found += 1
            if found == PER_KIND:
                break
    return out


_RESULTS: dict[str, tuple[list[tuple[str, int, str, str]], dict[int, set[str]], dict[int, set[str]]]] = {}


def _batch(fmt: str, native: NativeSnapshot):
    """All of a file's mutations applied at once (each changes its own line) and checked once: the file's
    mutations, its errors before and after."""
    if fmt not in _RESULTS:
        text = real_text(fmt)
        baseline = errors_by_line(fmt, text, native, warnings=True)
        made = mutations(fmt, text, set(baseline))
        lines = text.split("\n")
        for _, line, new, _ in made:
            lines[line] = new
        _RESULTS[fmt] = (made, baseline, errors_by_line(fmt, "\n".join(lines), native, warnings=True))
    return _RESULTS[fmt]


MAX_MUTATIONS = len(KINDS) * PER_KIND + 5


@pytest.mark.corpus
@pytest.mark.parametrize("n", range(MAX_MUTATIONS))
@pytest.mark.parametrize("fmt", list(SOURCES))
def test_mutation_reported_on_its_line(fmt: str, n: int, native: NativeSnapshot) -> None:
    made, baseline, found = _batch(fmt, native)
    if n >= len(made):
        pytest.skip(f"{fmt}: {len(made)} mutations")
    name, line, _, code = made[n]
    new = found.get(line, set()) - baseline.get(line, set())
    assert any(c.startswith(code) for c in new), (name, line, found.get(line))


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", list(SOURCES))
def test_at_least_20_mutations(fmt: str, native: NativeSnapshot) -> None:
    made, baseline, found = _batch(fmt, native)
    assert len(made) >= 20
    # Nothing reported on a line no mutation touched, but OPG556: a structured group whose out variant a mutation
    # took away is reported on the group's other entries (gen_mlu_stubs fails on them).
    touched = {line for _, line, _, _ in made}
    elsewhere = {line for line, codes in found.items() if line not in touched and codes - {"OPG556"}}
    assert elsewhere <= set(baseline) | {0}


# ---------------------------------------------------------------- the queries the server answers with

SMALL = {
    "musa_functions.yaml": "- func: relu\n- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n- func: re\n",
    "op_plugin_functions.yaml": ("all_version: [v2.12, v2.13]\nofficial:\n  - func: relu(Tensor self) -> Tensor\n"
                                 "    op_api: all_version\ncustom:\n  - func: npu_x(Tensor self) -> Tensor\n"
                                 "    op_api: v2.13\n"),
    "npu_native_functions.yaml": ("backend: NPU\ncpp_namespace: at_npu::native\nsupported:\n  - relu\ncustom:\n"
                                  "  - func: npu_thing(Tensor self) -> Tensor\n"),
}


def test_hover_definition_completion_symbols(native: NativeSnapshot) -> None:
    from opgen_lsp.analysis import backend as query
    from opgen_lsp.analysis import vendor as vendor_query

    musa = check_backend(SMALL["musa_functions.yaml"], native, "musa_functions.yaml")
    hover = query.hover(musa, native, 1, 10)
    assert hover is not None and "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in hover.markdown
    assert "differs" in hover.markdown
    declared = query.definition(musa, native, 0, 9)
    assert declared is not None and native.ops_by_name["relu"].line == declared.start_line
    lines = SMALL["musa_functions.yaml"].splitlines()
    assert "relu" in {c.label for c in query.complete(lines, 2, len(lines[2]), native)}

    plugin = check_backend(SMALL["op_plugin_functions.yaml"], native, "op_plugin_functions.yaml")
    assert plugin.vendor is not None
    tree = {s.name: [c.name for c in s.children] for s in vendor_query.symbols(plugin.vendor.yaml)}
    assert tree == {"official": ["relu"], "custom": ["npu_x"]}
    hover = query.hover(plugin, native, 2, 12)
    assert hover is not None and "v2.12, v2.13" in hover.markdown and "relu(Tensor self) -> Tensor" in hover.markdown

    npu = check_backend(SMALL["npu_native_functions.yaml"], native, "npu_native_functions.yaml")
    hover = query.hover(npu, native, 5, 14)
    assert hover is not None and "a new op" in hover.markdown
    assert query.definition(npu, native, 5, 14) is None  # a new op: nothing upstream to go to
    lines = ["backend: NPU", "supported:", "  - rel"]
    assert "relu" in {c.label for c in query.complete(lines, 2, len(lines[2]), native)}
