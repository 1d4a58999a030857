"""The lists and types each release's torchgen reads native_functions.yaml with, against that torchgen itself.

Release.functional_ops_without_out_variant is the release's FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT;
skipped_by_functionalization with the grouping exceptions is its MUTABLE_OPS_NOT_USING_FUNCTIONALIZATION; DeviceIndex
and SymBool are types exactly where its BaseTy has them. Then the 1.13/2.0-side verdicts these fields decide, each on
one edited entry of the release's own file, with the release's torchgen (the matrix's oracle) saying the same, and
the dispatch table rules of a run without --mps (gen.py's own parse with its ignored keys).
Marked `versions`: each release's torchgen comes from the cache of tools/torchgen_release.py (skipped with the
command when it cannot be had).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main
from opgen_lsp.codegen.options import CodegenOptions
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.model import dispatch as dk
from opgen_lsp.model.generate import skips_functionalization
from opgen_lsp.model.native_function import ScalarType
from opgen_lsp.releases import RELEASES, Release, release_at

from .test_release_matrix import _aten, _pytorch_shaped, _torchgen, opgen_errors, release_folder, verdicts

pytestmark = [pytest.mark.versions, pytest.mark.slow]

_LISTS = """
import json
from torchgen.gen_functionalization_type import MUTABLE_OPS_NOT_USING_FUNCTIONALIZATION as skipped
from torchgen.model import BaseTy, DispatchKey, ScalarType
from torchgen.native_function_generation import FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT as functional
print(json.dumps({"functional": sorted(functional), "skipped": sorted(skipped),
                  "types": sorted(t for t in ("DeviceIndex", "SymBool") if hasattr(BaseTy, t)),
                  "keys": sorted(DispatchKey.__members__), "dtypes": sorted(ScalarType.__members__)}))
"""


@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r.version)
def test_the_release_lists_are_its_torchgen_s(release: Release, tmp_path: Path) -> None:
    folder = release_folder(release.version)
    theirs = json.loads(reference.run(["-c", _LISTS], cwd=tmp_path, pythonpath=[folder], check=True).stdout)
    assert sorted(release.functional_ops_without_out_variant) == theirs["functional"]
    assert [name for name in theirs["skipped"] if not skips_functionalization(name, release)] == []
    assert sorted(release.skipped_by_functionalization - set(theirs["skipped"])) == []
    ours = sorted(t for t, known in (("DeviceIndex", release.device_index_type), ("SymBool", release.symbool_type))
                  if known)
    assert ours == theirs["types"]
    assert sorted(release.dispatch_key_names_unknown) == sorted(set(dk.ALL_KEY_NAMES) - set(theirs["keys"]))
    assert sorted(release.scalar_type_names_unknown) == sorted(set(ScalarType.__members__) - set(theirs["dtypes"]))


# One entry of the release's own file edited (old -> new): (id, old, new, versions whose torchgen refuses it).
_PROBE = "- func: _probe(Tensor self, float dropout_p) -> Tensor\n  variants: function\n\n"
_TAGGED = "- func: _probe_tagged(Tensor self) -> Tensor\n  variants: function\n"  # (its own keys follow)
_ALL = {"1.13.1", "2.0.1", "2.1.2", "2.2.2"}
EDITS = [
    # An op with a `dropout` argument but no dropout in its name: random from 2.1 (needs nondeterministic_seeded).
    ("dropout-argument", None, _PROBE, {"2.1.2", "2.2.2"}),
    # DeviceIndex arrived as a type in 2.1.
    ("device-index", None, _PROBE.replace("float dropout_p", "DeviceIndex index"), {"1.13.1", "2.0.1"}),
    # resize_as_ tagged inplace_view: exempt from the out-of-place view rule from 2.1.
    # (2.1's own entry has the tag already: there the file as it is is the case.)
    ("resize-as-inplace-view", "  autogen: resize_as, resize_as.out\n\n",
     "  autogen: resize_as, resize_as.out\n  tags: inplace_view\n\n", {"1.13.1", "2.0.1"}),
    # A Float8 dtype in a ufunc inner loop: Float8_e5m2 is a ScalarType from 2.1, Float8_e5m2fnuz from 2.2.
    ("float8-dtype", "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)\n",
     "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf, Float8_e5m2)\n", {"1.13.1", "2.0.1"}),
    ("float8-fnuz-dtype", "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)\n",
     "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf, Float8_e5m2fnuz)\n", {"1.13.1", "2.0.1", "2.1.2"}),
    # tags: a list of names from 2.0; in 1.13 one string of names separated by ", " (a list is refused, and from
    # 2.0 such a string is one unknown name).
    ("tags-as-a-list", None, _TAGGED + "  tags: [dynamic_output_shape, data_dependent_output]\n\n", {"1.13.1"}),
    ("tags-as-one-string", None, _TAGGED + "  tags: dynamic_output_shape, data_dependent_output\n\n",
     {"2.0.1", "2.1.2", "2.2.2"}),
    ("tags-string-misspelt", None, _TAGGED + "  tags: dynamic_output_shape,data_dependent_output\n\n", _ALL),
    ("tags-empty-string", None, _TAGGED + "  tags: ''\n\n", {"2.0.1", "2.1.2", "2.2.2"}),
    # A kernel's namespace: 2 levels before its name in 1.13, 3 from 2.0 (test_a_kernel_of_three_namespace_levels).
    ("kernel-two-namespaces", None, _TAGGED + "  dispatch:\n    CPU: a::b::probe_cpu\n\n", set()),
    ("kernel-four-namespaces", None, _TAGGED + "  dispatch:\n    CPU: a::b::c::d::probe_cpu\n\n", _ALL),
]
EDIT_RELEASES = ("1.13.1", "2.0.1", "2.1.2", "2.2.2")


def _edited(original: str, old: str | None, new: str) -> tuple[str, int]:
    """The file with the edit, and the 0-based line where the edited entry starts."""
    if old is None:  # appended
        return original.rstrip("\n") + "\n\n" + new, original.rstrip("\n").count("\n") + 2
    if old not in original and new in original:  # the release's own file has it so
        return original, original[:original.index(new)].count("\n")
    assert original.count(old) == 1, old
    return original.replace(old, new), original[:original.index(old)].count("\n")


@pytest.mark.parametrize("version", EDIT_RELEASES)
def test_the_1_13_and_2_0_verdicts_agree_with_each_release(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    native = _aten(folder) / "native"
    original = (native / "native_functions.yaml").read_text()
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    files, cases = [], []
    for id, old, new, refused_by in EDITS:
        text, first = _edited(original, old, new)
        path = tmp_path / id / "native_functions.yaml"
        path.parent.mkdir()
        path.write_text(text)
        files.append(path)
        cases.append((id, text, first, first + new.count("\n"), version in refused_by))
    theirs = verdicts(folder, native / "tags.yaml", files)
    found = []
    for (id, text, first, last, refused), said in zip(cases, theirs):
        errors = opgen_errors(version, text, tags)
        on_entry = [d.code for d in errors if first <= d.span.start_line <= last]
        found.append((id, said is not None, bool(errors), bool(on_entry)))
        assert (said is not None) == refused, (id, said)  # the release's torchgen says what the edit is for
    assert found == [(id, refused, refused, refused) for id, _, _, _, refused in cases]


@pytest.mark.parametrize("version,code", [("1.13.1", "OPG108"), ("2.0.1", "OPG129"), ("2.1.2", "OPG129")])
def test_a_kernel_of_three_namespace_levels(version: str, code: str, tmp_path: Path) -> None:
    """1.13's parse refuses a kernel `a::b::c::name` (2 levels); from 2.0 the parse takes 3 and gen.py then fails
    writing CPUFunctions_inl.h (OPG129, the generators' rule): the error is the parse's only in 1.13."""
    folder = release_folder(version)
    native = _aten(folder) / "native"
    path = tmp_path / "native_functions.yaml"
    path.write_text(_TAGGED + "  dispatch:\n    CPU: a::b::c::probe_cpu\n")
    (said,) = verdicts(folder, native / "tags.yaml", [path])
    assert (said is not None) == (code == "OPG108"), said
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    assert [(d.code, d.span.start_line) for d in opgen_errors(version, path.read_text(), tags)] == [(code, 3)]


# A dispatch table whose one other kernel is MPS's (gen.py leaves MPS out without --mps): (id, dispatch table,
# the releases whose gen.py refuses it without --mps). With --mps every release takes both.
WITHOUT_MPS = [
    ("composite-own-name-and-mps", "    CompositeImplicitAutograd: _probe_mps\n    MPS: _probe_mps_kernel\n", {"1.13.1"}),
    ("composite-other-name-and-mps", "    CompositeImplicitAutograd: probe_impl\n    MPS: _probe_mps_kernel\n",
     {"1.13.1"}),
    ("composite-own-name-alone", "    CompositeImplicitAutograd: _probe_mps\n", {"1.13.1", "2.0.1"}),
]
_WITHOUT_MPS_ORACLE = """
import json, sys, yaml
from torchgen import gen
from torchgen.model import DispatchKey
tags, without_mps, *paths = sys.argv[1:]
valid = gen.parse_tags_yaml(tags)
said = []
for path in paths:
    try:
        with open(path) as f:
            gen.parse_native_yaml_struct(yaml.load(f, Loader=gen.LineLoader), valid,
                                         {DispatchKey.MPS} if without_mps == "1" else None, path=path)
        said.append(None)
    except Exception as exc:
        said.append(f"{type(exc).__name__}: {exc}")
print(json.dumps(said))
"""


@pytest.mark.parametrize("version", ["1.13.1", "2.0.1"])
def test_the_dispatch_table_rules_of_a_run_without_mps(version: str, tmp_path: Path) -> None:
    """gen.py without --mps (its parse given MPS as an ignored key) against `opgen generate` without --mps (the
    parser given CodegenOptions' ignored keys): 1.13 counts the keys kept, 2.0 the keys written."""
    folder = release_folder(version)
    native = _aten(folder) / "native"
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    files = []
    for id, table, _ in WITHOUT_MPS:
        path = tmp_path / id / "native_functions.yaml"
        path.parent.mkdir()
        path.write_text(f"- func: _probe_mps(Tensor self) -> Tensor\n  dispatch:\n{table}\n")
        files.append(path)
    for without_mps in (True, False):
        theirs = json.loads(reference.run(["-c", _WITHOUT_MPS_ORACLE, str(native / "tags.yaml"), str(int(without_mps)),
                                           *map(str, files)], cwd=tmp_path, pythonpath=[folder], check=True).stdout)
        parser = NativeParser(CodegenOptions(release_at(version), mps=not without_mps).ignore_keys,
                              release=release_at(version))
        ours = [[d.code for d in parser.parse(path.read_text(), tags).diagnostics if d.is_error] for path in files]
        refused = [version in refused_by and (without_mps or id.endswith("-alone")) for id, _, refused_by in WITHOUT_MPS]
        assert [said is not None for said in theirs] == refused, theirs
        assert [bool(codes) for codes in ours] == refused, ours
        assert all(codes in ([], ["OPG110"], ["OPG111"]) for codes in ours), ours


def test_the_1_13_fields_change_in_2_0() -> None:
    old, new = release_at("1.13"), release_at("2.0")
    assert (old.tags_as_comma_separated_string, new.tags_as_comma_separated_string) == (True, False)
    assert (old.dispatch_kernel_namespace_levels, new.dispatch_kernel_namespace_levels) == (2, 3)
    assert (old.dispatch_table_rules_count_keys_as_written, new.dispatch_table_rules_count_keys_as_written) == (False,
                                                                                                               True)
    assert (old.generated_variants_keep_tags, new.generated_variants_keep_tags) == (
        {"nondeterministic_seeded"}, {"nondeterministic_seeded", "view_copy"})
    assert release_at("2.2").generated_variants_keep_tags - release_at("2.1").generated_variants_keep_tags == {
        "pt2_compliant_tag"}
    assert new.functional_ops_without_out_variant - old.functional_ops_without_out_variant == {
        "_chunk_grad_outputs_efficient_attention", "_fused_sdp_choice"}


def test_the_2_0_fields_change_in_2_1() -> None:
    old, new = release_at("2.0"), release_at("2.1")
    assert (old.seeded_tag_by_dropout_arguments, new.seeded_tag_by_dropout_arguments) == (False, True)
    assert (old.device_index_type, new.device_index_type) == (False, True)
    assert new.inplace_view_exempt_ops - old.inplace_view_exempt_ops == {"resize_as_"}
    assert new.skipped_by_functionalization - old.skipped_by_functionalization == {"resize_as_",
                                                                                   "_fill_mem_eff_dropout_mask_"}
    assert "_nested_tensor_offsets" in old.functional_ops_without_out_variant - new.functional_ops_without_out_variant


# A backend yaml naming a key by the name of `backend:` (and its Autograd key): (release, key, whether that
# release's gen_backend_stubs refuses it), around each release where keys arrived (Functionalize 1.13/2.0).
BACKEND_KEYS = [("1.13.1", "Functionalize", True), ("2.0.1", "Functionalize", False),
                ("2.0.1", "MTIA", True), ("2.1.2", "MTIA", False), ("2.2.2", "SparseCsrXLA", True),
                ("2.3.1", "SparseCsrXLA", False), ("2.12.1", "AutocastXPU", True), ("2.13.0", "AutocastXPU", False)]


@pytest.mark.parametrize("version,key,refused", BACKEND_KEYS)
def test_a_backend_key_is_one_where_the_release_has_it(version: str, key: str, refused: bool, tmp_path: Path,
                                                        monkeypatch, capsys) -> None:
    folder = release_folder(version)
    source = tmp_path / "backend.yaml"
    source.write_text(f"backend: {key}\ncpp_namespace: torch_probe\nsupported:\n- abs\n")
    oracle = _pytorch_shaped(folder, tmp_path / "oracle")
    (tmp_path / "ref").mkdir()
    done = _torchgen(oracle, "torchgen.gen_backend_stubs", ["-s", str(source), "-o", "out"], tmp_path / "ref", ["out"])
    assert (done.returncode != 0) == refused, done.stderr[-1500:]
    if refused:
        assert f"unknown dispatch key {key}" in done.stderr
    native = _aten(folder) / "native" / "native_functions.yaml"
    monkeypatch.chdir(tmp_path)
    code = main(["check", str(source), "--native-functions", str(native)])
    out = capsys.readouterr().out
    assert (code == 1) == refused, out
    if refused:
        assert f"{source}:1:10: error: '{key}' is not a dispatch key of torch " in out and "[OPG502]" in out
