"""The lists and types each release's torchgen reads native_functions.yaml with, against that torchgen itself.

Release.functional_ops_without_out_variant is the release's FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT;
skipped_by_functionalization with the grouping exceptions is its MUTABLE_OPS_NOT_USING_FUNCTIONALIZATION; DeviceIndex
and SymBool are types exactly where its BaseTy has them. Then the 2.0-side verdicts these fields decide, each on one
edited entry of the release's own file, with the release's torchgen (the matrix's oracle) saying the same.
Marked `versions`: each release's torchgen comes from the cache of tools/torchgen_release.py (skipped with the
command when it cannot be had).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main
from opgen_lsp.index.native import TagsParser
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
EDITS = [
    # An op with a `dropout` argument but no dropout in its name: random from 2.1 (needs nondeterministic_seeded).
    ("dropout-argument", None, _PROBE, {"2.1.2", "2.2.2"}),
    # DeviceIndex arrived as a type in 2.1.
    ("device-index", None, _PROBE.replace("float dropout_p", "DeviceIndex index"), {"2.0.1"}),
    # resize_as_ tagged inplace_view: exempt from the out-of-place view rule from 2.1.
    # (2.1's own entry has the tag already: there the file as it is is the case.)
    ("resize-as-inplace-view", "  autogen: resize_as, resize_as.out\n\n",
     "  autogen: resize_as, resize_as.out\n  tags: inplace_view\n\n", {"2.0.1"}),
    # A Float8 dtype in a ufunc inner loop: Float8_e5m2 is a ScalarType from 2.1, Float8_e5m2fnuz from 2.2.
    ("float8-dtype", "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)\n",
     "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf, Float8_e5m2)\n", {"2.0.1"}),
    ("float8-fnuz-dtype", "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)\n",
     "    Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf, Float8_e5m2fnuz)\n", {"2.0.1", "2.1.2"}),
]
EDIT_RELEASES = ("2.0.1", "2.1.2", "2.2.2")


def _edited(original: str, old: str | None, new: str) -> tuple[str, int]:
    """The file with the edit, and the 0-based line where the edited entry starts."""
    if old is None:  # appended
        return original.rstrip("\n") + "\n\n" + new, original.rstrip("\n").count("\n") + 2
    if old not in original and new in original:  # the release's own file has it so
        return original, original[:original.index(new)].count("\n")
    assert original.count(old) == 1, old
    return original.replace(old, new), original[:original.index(old)].count("\n")


@pytest.mark.parametrize("version", EDIT_RELEASES)
def test_the_2_0_verdicts_agree_with_each_release(version: str, tmp_path: Path) -> None:
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


def test_the_2_0_fields_change_in_2_1() -> None:
    old, new = release_at("2.0"), release_at("2.1")
    assert (old.seeded_tag_by_dropout_arguments, new.seeded_tag_by_dropout_arguments) == (False, True)
    assert (old.device_index_type, new.device_index_type) == (False, True)
    assert new.inplace_view_exempt_ops - old.inplace_view_exempt_ops == {"resize_as_"}
    assert new.skipped_by_functionalization - old.skipped_by_functionalization == {"resize_as_",
                                                                                   "_fill_mem_eff_dropout_mask_"}
    assert "_nested_tensor_offsets" in old.functional_ops_without_out_variant - new.functional_ops_without_out_variant


# A backend yaml naming a key by the name of `backend:` (and its Autograd key): (release, key, whether that
# release's gen_backend_stubs refuses it), around each release where keys arrived.
BACKEND_KEYS = [("2.0.1", "MTIA", True), ("2.1.2", "MTIA", False), ("2.2.2", "SparseCsrXLA", True),
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
