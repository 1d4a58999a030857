"""Structured PrivateUse1 kernels as pytorch#172539 proposes them (`opgen generate-backend --experimental`).

The proposal's branch (voidbag/pytorch) holds its two test yamls and what its generator wrote for each, on torch
2.10's native_functions.yaml and templates (tools/proposal_files.py obtains them; skipped without them). With
--experimental, opgen writes the same bytes for both. Without it nothing changes: the yaml of today's format gets
torch 2.10's own gen_backend_stubs output, and the proposal's yaml is rejected on its lines, as torchgen rejects
it. The per-op options' rules are checked on small yamls against the installed torch's native_functions.yaml.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import os
import sys
from pathlib import Path

import pytest
from file_trees import files_under, first_difference
from release_files import release_native

from opgen_lsp.codegen.backend.run import BackendOptions, generate_backend
from opgen_lsp.diagnostics import Severity
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.releases import DEFAULT, resolve

from .test_release_matrix import _pytorch_shaped, _torchgen

ROOT = Path(__file__).resolve().parents[2]
RELEASE = "2.10.0"  # the proposal's branch is based on torch 2.10 (its RegisterDispatchKey.cpp template is 2.10's)
CASES = ("new", "existing")  # <case>_privateuse1_native_functions.yaml -> ./<case>_generated/


def _tool():
    spec = importlib.util.spec_from_file_location("proposal_files", ROOT / "tools" / "proposal_files.py")
    module = sys.modules.setdefault("proposal_files", importlib.util.module_from_spec(spec))  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def proposal() -> Path:
    tool = _tool()
    found = tool.cached()
    if found is None and os.environ.get("CI"):
        try:
            found = tool.obtain()
        except OSError as exc:  # GitHub is not reachable from every CI machine; a changed file still fails
            pytest.skip(f"pytorch#172539's test files are not in the cache and cannot be downloaded ({exc})")
    if found is None:
        pytest.skip("pytorch#172539's test files are not in the cache: python3 tools/proposal_files.py")
    return found


def _release_stubs(source: Path, out: str, cwd: Path) -> object:
    """torch 2.10's own gen_backend_stubs (through the reference cache), in a tree shaped like a checkout."""
    oracle = _pytorch_shaped(release_native(RELEASE).parents[4], cwd / "oracle")  # 2.10 reads ../aten/src/ATen
    return _torchgen(oracle, "torchgen.gen_backend_stubs", ["-s", str(source), "-o", out], cwd, [out])


def _generate(source: Path, case: str, cwd: Path, monkeypatch, experimental: bool):
    native = release_native(RELEASE)
    resolved = resolve(RELEASE, "test")
    assert resolved is not None
    monkeypatch.chdir(cwd)
    return generate_backend(BackendOptions(str(source), f"./{case}_generated", native_functions=str(native),
                                           templates=str(native.parents[1] / "templates"), release=resolved.release,
                                           experimental=experimental))


@pytest.mark.parametrize("case", CASES)
def test_the_experimental_output_is_the_proposals(proposal, case, tmp_path, monkeypatch):
    source = proposal / f"{case}_privateuse1_native_functions.yaml"
    result = _generate(source, case, tmp_path, monkeypatch, experimental=True)
    assert not result.errors, result.errors
    # The new yaml writes `structured: true.` (a string, true to the proposal's generator): a warning each.
    found = [(d.diagnostic.code, d.diagnostic.span.start_line, d.diagnostic.severity) for d in result.diagnostics]
    # Its div.out (no functional kernel) gets a derived div.Tensor of self's dtype: a warning (OPG518).
    assert found == ([("OPG517", 6, Severity.WARNING), ("OPG517", 7, Severity.WARNING),
                      ("OPG518", 11, Severity.WARNING)] if case == "new" else [])
    expected, got = files_under(proposal / f"{case}_generated"), files_under(tmp_path / f"{case}_generated")
    assert sorted(got) == sorted(expected) == ["PrivateUse1NativeFunctions.h", "RegisterPrivateUse1.cpp"]
    for name in expected:
        assert got[name] == expected[name], f"{name} differs at {first_difference(expected[name], got[name])}"


def test_without_the_opt_in_todays_yaml_gets_the_releases_output(proposal, tmp_path, monkeypatch):
    source = proposal / "existing_privateuse1_native_functions.yaml"
    theirs, ours = tmp_path / "torchgen", tmp_path / "opgen"
    theirs.mkdir(), ours.mkdir()
    done = _release_stubs(source, "./existing_generated", theirs)
    assert done.returncode == 0, done.stderr[-2000:]  # type: ignore[attr-defined]
    result = _generate(source, "existing", ours, monkeypatch, experimental=False)
    assert not result.has_errors
    expected, got = files_under(theirs / "existing_generated"), files_under(ours / "existing_generated")
    assert got == expected
    # ... which is not the proposal's (its header includes div's meta header; PrivateUse1 gets create_out):
    assert got != files_under(proposal / "existing_generated")


def test_without_the_opt_in_the_proposals_yaml_is_rejected_on_its_lines(proposal, tmp_path, monkeypatch):
    source = proposal / "new_privateuse1_native_functions.yaml"
    result = _generate(source, "new", tmp_path, monkeypatch, experimental=False)
    found = sorted((d.diagnostic.code, d.diagnostic.span.start_line) for d in result.diagnostics
                   if d.diagnostic.is_error)
    # a namespace of three levels; each op with options (the yaml's lines 2, 6, 9, 12)
    assert found == [("OPG504", 1), ("OPG508", 5), ("OPG508", 8), ("OPG508", 11)]
    assert not (tmp_path / "new_generated").exists()
    done = _release_stubs(source, "out", tmp_path)
    assert done.returncode != 0  # type: ignore[attr-defined]  # torch 2.10's gen_backend_stubs rejects it too


# ---------------------------------------------------------------- the per-op options' rules

@pytest.fixture(scope="module")
def native(native_yaml, tags_yaml) -> NativeSnapshot:
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)


HEAD = "backend: PrivateUse1\ncpp_namespace: at::priv1::native\nuse_out_as_primary: true\nsupported:\n"


def _codes(text: str, native: NativeSnapshot, experimental: bool = True) -> list[tuple[str, int, bool]]:
    snapshot = check_backend(text, native, experimental=experimental)
    return sorted((d.code, d.span.start_line, d.is_error) for d in snapshot.diagnostics)


@pytest.mark.parametrize("items, expected", [
    # the proposal's own forms: no diagnostic
    ("  - add.out:\n    structured: true\n    ext_structured_meta: true\n  - div.Tensor\n  - div.out:\n"
     "    device_guard: false\n", []),
    # not a structured op in native_functions.yaml (only the out= variant of a structured op is)
    ("  - add.Tensor:\n    structured: true\n", [("OPG516", 4, True)]),
    # ext_structured_meta without structured
    # (add.out is then unstructured: its functional kernel is derived, of self's dtype)
    ("  - add.out:\n    ext_structured_meta: true\n", [("OPG516", 5, True), ("OPG518", 4, False)]),
    # not a bool: the proposal's generator takes it as true
    ("  - add.out:\n    structured: 1\n", [("OPG517", 5, False)]),
    # two op names in one item
    ("  - add.out:\n    sub.out:\n    structured: true\n", [("OPG508", 4, True)]),
    # several outputs, listed by the out= variant alone: the derived functional would get their dtypes wrong
    ("  - max.dim_max\n", [("OPG516", 4, True)]),
    # a meta() of the backend's own for an op whose meta returns precomputed values
    ("  - max.dim_max:\n    structured: true\n    ext_structured_meta: true\n", [("OPG516", 4, True)]),
])
def test_per_op_options(native, items, expected):
    assert _codes(HEAD + items, native) == expected


def test_a_derived_functional_kernel_warns_of_its_dtype(native):
    # The proposal's generator makes the derived eq.Tensor's output with self.options(), as opgen does: a float
    # self gives a float result where eq's is bool. Warned (OPG518) on the out= op's line, not written otherwise.
    text = HEAD + "  - eq.Tensor_out\n  - argmax.out\n"
    assert _codes(text, native) == [("OPG518", 4, False), ("OPG518", 5, False)]
    [eq, _] = check_backend(text, native, experimental=True).diagnostics
    assert "'eq.Tensor'" in eq.message and "self's dtype" in eq.message and "structured: true" in eq.message
    # Not where no kernel is derived: the functional listed, structured, functional-primary, or no opt-in.
    for quiet in (HEAD + "  - eq.Tensor\n  - eq.Tensor_out\n", HEAD + "  - eq.Tensor_out:\n    structured: true\n",
                  HEAD.replace("use_out_as_primary: true", "use_out_as_primary: false") + "  - eq.Tensor_out\n"):
        assert _codes(quiet, native) == [], quiet
    assert _codes(HEAD.replace("at::priv1::native", "priv1::native") + "  - eq.Tensor_out\n", native,
                  experimental=False) == []
    # A factory's own options carry its dtype: nothing to warn of.
    assert _codes(HEAD + "  - arange.out\n", native) == []


def test_structured_needs_privateuse1_and_out_as_primary(native):
    xla = HEAD.replace("PrivateUse1", "XLA") + "  - add.out:\n    structured: true\n"
    assert _codes(xla, native) == [("OPG516", 4, True)]
    functional_primary = HEAD.replace("true", "false") + "  - add.out:\n    structured: true\n"
    assert _codes(functional_primary, native) == [("OPG516", 4, False)]  # changes nothing: a warning


def test_without_the_opt_in_structured_is_still_rejected(native):
    per_op = HEAD.replace("at::priv1::native", "priv1::native") + "  - add.out:\n    structured: true\n"
    [(code, line, error)] = _codes(per_op, native, experimental=False)
    assert (code, line, error) == ("OPG508", 4, True)
    [diagnostic] = check_backend(per_op, native).diagnostics
    assert "opgen generate-backend --experimental" in diagnostic.message
    top_level = HEAD.replace("supported:", "structured: true\nsupported:") + "  - add.out\n"
    for experimental in (False, True):  # a top-level key neither reads
        assert ("OPG507", 3, True) in _codes(top_level, native, experimental), experimental


def test_every_step_of_the_generation_is_told_which_reading():
    # A default would let a caller that forgets the flag read or write the other format silently.
    from opgen_lsp.codegen.backend.run import check_backend_files
    from opgen_lsp.model.backend import BackendYaml, _Reader, lower_backend_yaml
    from opgen_lsp.pieces.backend_target import BackendTarget
    from opgen_lsp.pieces.dest import register_backend

    for function in (check_backend_files, lower_backend_yaml, _Reader, register_backend._registered,
                     register_backend.anonymous_definitions, register_backend.registrations):
        parameter = inspect.signature(function).parameters["experimental"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, function
        assert parameter.default is inspect.Parameter.empty, function
    for record in (BackendOptions, BackendTarget, BackendYaml):
        [field] = [f for f in dataclasses.fields(record) if f.name == "experimental"]
        assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING, record
    with pytest.raises(TypeError, match="experimental"):
        BackendOptions("backend.yaml", "out", release=DEFAULT)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="experimental"):
        lower_backend_yaml(None)  # type: ignore[call-arg]


def test_the_command_line_says_it_is_experimental(aten, tmp_path, monkeypatch, capsys):
    from opgen_lsp.cli import main

    source = tmp_path / "priv1.yaml"
    source.write_text(HEAD + "  - add.out:\n    structured: true\n  - div.out\n")
    monkeypatch.chdir(tmp_path)
    assert main(["generate-backend", "--experimental", "-s", str(source), "-o", "gen"]) == 0
    assert "--experimental: generating as pytorch#172539's proposed gen_backend_stubs" in capsys.readouterr().err
    header = (tmp_path / "gen" / "PrivateUse1NativeFunctions.h").read_text()
    assert "#include <ATen/ops/add_meta.h>\n#include <ATen/ops/div_meta.h>\nnamespace at {" in header
    assert "struct structured_add_out : public at::meta::structured_add_Tensor {" in header
    register = (tmp_path / "gen" / "RegisterPrivateUse1.cpp").read_text()
    assert "struct structured_add_out_functional final : public " \
           "at::priv1::native::PrivateUse1NativeFunctions::structured_add_out {" in register
    assert "  at::priv1::native::PrivateUse1NativeFunctions::div_out(self, other, self);\n  return self;\n" in register
    # without the flag: the release's reading, which refuses the option and the namespace's depth
    assert main(["generate-backend", "-s", str(source), "-o", "plain"]) == 1
    said = capsys.readouterr()
    assert "generating as pytorch#172539" not in said.err and "[OPG508]" in said.out and "[OPG504]" in said.out
    assert not (tmp_path / "plain").exists()
