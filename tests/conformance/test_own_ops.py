"""A backend's own operator file (docs/backends.md, "A backend's own native_functions.yaml"): a native_functions.yaml
of the ops one PrivateUse1 backend implements, parsed by the backend's codegen with torchgen after patching it.

opgen recognises it by its content and checks it as that patched torchgen parses it, plus each op against the
pinned release's own schema (OPG590 drifted, OPG591 not declared) and, with --kernels, its kernels in the
backend's C++ sources. Mutations of a small file are each reported on their line (in-process); torchgen, patched
as such a backend documents it (own_ops_oracle.py, one cached run for all), agrees with opgen's verdict on every
mutation but the upstream comparisons, which torchgen does not make (and, where torchgen names an entry, opgen's
error is in that entry).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import reference
from own_ops_files import OWN, TAGS
from real_trees import BACKEND_TREES, NATIVE, backend_tree_or_skip

from opgen_lsp.analysis.check import check_paths, classify
from opgen_lsp.cli.main import main
from opgen_lsp.diagnostics import Diagnostic
from opgen_lsp.index.own_ops import OWN_FILE_MAX_ENTRIES, own_backend_keys, upstream_ops

from .test_release_matrix import release_folder

ORACLE = Path(__file__).resolve().parent / "own_ops_oracle.py"
VERSION = "2.13"  # the schemas below are torch 2.13's (the installed reference's)
UPSTREAM_CODES = frozenset({"OPG590", "OPG591"})  # opgen's comparisons with the release: torchgen makes none

# (id, text replaced, its replacement, the code opgen reports on the replacement's first line)
MUTATIONS = [
    ("drifted-default", "Scalar alpha=1, Tensor(a!) out", "Scalar alpha=2, Tensor(a!) out", "OPG590"),
    ("drifted-argument-name", "- func: relu(Tensor self)", "- func: relu(Tensor input)", "OPG590"),
    ("drifted-argument-name-function", "gt.Scalar_out(Tensor self,", "gt.Scalar_out(Tensor input,", "OPG590"),
    ("drifted-argument-type", "gt.Scalar_out(Tensor self, Scalar other", "gt.Scalar_out(Tensor self, Tensor other",
     "OPG590"),
    ("drifted-added-default", "Tensor mask, Scalar value)", "Tensor mask, Scalar value=0)", "OPG590"),
    ("drifted-return", "- func: relu(Tensor self) -> Tensor", "- func: relu(Tensor self) -> (Tensor, Tensor)", "OPG590"),
    ("unknown-op", "- func: relu(", "- func: reluu(", "OPG591"),
    ("unknown-overload", "- func: add.out(", "- func: add.outt(", "OPG591"),
    ("own-op-without-namespace", "- func: mine::fused_gelu(", "- func: fused_gelu(", "OPG591"),
    ("unknown-dispatch-key", "    PrivateUse1: relu_mine", "    PrivateUse: relu_mine", "OPG104"),
    ("unknown-tag", "    PrivateUse1: add_out_mine\n  tags: pointwise", "    PrivateUse1: add_out_mine\n  tags: pointwize",
     "OPG107"),
    ("schema-syntax", "add.out(Tensor self, Tensor other,", "add.out(Tensor self Tensor other,", "OPG203"),
    ("unknown-entry-key", "  variants: function, method", "  variant: function, method", "OPG102"),
    ("bad-variant", "  variants: function, method", "  variants: function, methods", "OPG103"),
    ("structured-not-a-bool", "  structured: True\n  structured_inherits: TensorIteratorBase\n  device_check",
     "  structured: maybe\n  structured_inherits: TensorIteratorBase\n  device_check", "OPG101"),
    ("bad-device-check", "  device_check: NoCheck   # TensorIterator\n  variants: method",
     "  device_check: Nocheck\n  variants: method", "OPG106"),
    ("no-kernel-name", "    PrivateUse1: relu_mine", "    PrivateUse1:", "OPG101"),
    ("inplace-view-tag", "  tags: [core, pointwise]", "  tags: [core, inplace_view]", "OPG303"),
    ("func-key-typo", "- func: mine::fused_gelu", "- funk: mine::fused_gelu", "OPG100"),
    ("out-without-alias", "gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
     "gt.Scalar_out(Tensor self, Scalar other, *, Tensor out) -> Tensor", "OPG590"),
    ("declared-twice", "- func: mine::fused_gelu", "- func: relu(Tensor self) -> Tensor\n  dispatch:\n"
     "    PrivateUse1: relu_again\n\n- func: mine::fused_gelu", "OPG300"),
    ("delegate-and-dispatch", "  variants: function, method\n", "  variants: function, method\n"
     "  structured_delegate: relu.out\n", "OPG301"),
    ("device-guard-not-a-bool", "  variants: method\n", "  variants: method\n  device_guard: sometimes\n", "OPG101"),
    ("delegate-not-declared", "  dispatch:\n    PrivateUse1: relu_mine\n", "  structured_delegate: relu.out\n", "OPG301"),
]

# Edits the patched parse accepts (gen.py would refuse some of them, after the parse: it never runs on the file).
ACCEPTED = [
    ("no-autogen", "  autogen: masked_fill.Scalar_out\n", ""),
    ("autogen-misnamed", "autogen: masked_fill.Scalar_out", "autogen: masked_fill.Scalar_outt"),
    ("symint-kernel-name", "PrivateUse1: relu_mine", "PrivateUse1: relu_mine_symint"),
    ("lone-in-place-op", "- func: relu(Tensor self) -> Tensor\n  variants: function, method",
     "- func: relu_(Tensor(a!) self) -> Tensor(a!)\n  variants: function, method"),
]


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tags.yaml").write_text(TAGS, encoding="utf-8")
    path = folder / "native_functions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _mutated(old: str, new: str) -> tuple[str, int]:
    """OWN with old replaced by new, and the 1-based line of its first changed line."""
    assert OWN.count(old) == 1, old
    start = OWN.index(old)
    text = OWN[:start] + new + OWN[start + len(old):]
    changed = next(i for i, (a, b) in enumerate(zip(OWN.splitlines(), text.splitlines())) if a != b)
    return text, changed + 1


def _errors(path: Path, version: str = VERSION) -> list[Diagnostic]:
    result = check_paths([str(path)], torch_version=version)
    assert not result.usage_error, result.notes
    return [i.diagnostic for i in result.items if i.diagnostic.is_error]


@pytest.fixture(scope="module")
def upstream_at_hand() -> None:
    if upstream_ops(VERSION + ".0") is None:
        pytest.skip(f"torch {VERSION}'s native_functions.yaml is not at hand (python3 tools/torchgen_release.py "
                    f"{VERSION}.0, or install torch {VERSION})")


def test_recognised_by_its_content_not_its_name() -> None:
    assert own_backend_keys(OWN) == {"PrivateUse1"}
    assert classify("aten/src/ATen/native/native_functions.yaml", OWN) == "native_functions"
    assert own_backend_keys(OWN.replace("PrivateUse1", "CPU")) == frozenset()  # a small upstream-like file
    many = OWN + "".join(f"\n- func: op{i}(Tensor self) -> Tensor\n" for i in range(OWN_FILE_MAX_ENTRIES))
    assert own_backend_keys(many) == frozenset()  # upstream's own file: a PrivateUse1 key in it stays OPG105
    vendor_list = "- func: tril\n- func: tril_\n- func: tril.out\n  dispatch:\n    PrivateUse1: MusaTril\n"
    assert own_backend_keys(vendor_list) == frozenset()  # bare op names: torch_musa's format, not a native yaml


def test_the_file_checks_clean(tmp_path: Path, upstream_at_hand: None) -> None:
    assert _errors(_write(tmp_path, OWN)) == []


def test_the_same_key_in_upstreams_own_file_stays_an_error(tmp_path: Path) -> None:
    many = OWN + "".join(f"\n- func: op{i}(Tensor self) -> Tensor\n" for i in range(OWN_FILE_MAX_ENTRIES))
    codes = {d.code for d in _errors(_write(tmp_path, many))}
    assert {"OPG105", "OPG307"} <= codes and not codes & UPSTREAM_CODES


@pytest.mark.parametrize(("old", "new", "code"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_each_mutation_is_reported_on_its_line(old: str, new: str, code: str, tmp_path: Path,
                                               upstream_at_hand: None) -> None:
    text, line = _mutated(old, new)
    errors = _errors(_write(tmp_path, text))
    assert (code, line) in {(d.code, d.span.start_line + 1) for d in errors}, [(d.code, d.span.start_line + 1, d.message)
                                                                               for d in errors]


@pytest.mark.parametrize(("old", "new"), [m[1:] for m in ACCEPTED], ids=[m[0] for m in ACCEPTED])
def test_what_the_patched_parse_accepts_is_no_error(old: str, new: str, tmp_path: Path, upstream_at_hand: None) -> None:
    assert _errors(_write(tmp_path, _mutated(old, new)[0])) == []


def test_a_drift_shows_upstreams_schema(tmp_path: Path, upstream_at_hand: None) -> None:
    text, line = _mutated(*MUTATIONS[0][1:3])
    [drift] = _errors(_write(tmp_path, text))
    assert drift.code == "OPG590" and drift.span.start_line + 1 == line
    assert drift.message.endswith("schema: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) "
                                  "-> Tensor(a!)")


def test_a_missing_kernel_is_reported_on_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  upstream_at_hand: None) -> None:
    """--kernels: each PrivateUse1 kernel the backend's sources do not define, at its dispatch entry (a warning,
    as for upstream's file); no meta function is asked for (upstream's are in PyTorch)."""
    path = _write(tmp_path / "yaml", OWN)
    sources = tmp_path / "csrc"
    sources.mkdir()
    (sources / "kernels.cpp").write_text(
        "#include <ATen/ATen.h>\n\nnamespace at::native {\n\nat::Tensor relu_mine(const at::Tensor & self) {\n"
        "  return self;\n}\n\n}  // namespace at::native\n", encoding="utf-8")
    assert main(["check", "--format", "json", "--torch-version", VERSION, "--kernels", str(sources), str(path)]) == 0
    found = {(d["code"], d["range"]["start"]["line"] + 1, d["message"].split(" of ")[0].split("::")[-1])
             for d in json.loads(capsys.readouterr().out)}
    wanted = {("OPG600", i + 1, line.split(": ")[1]) for i, line in enumerate(OWN.splitlines())
              if line.startswith("    PrivateUse1: ") and "relu_mine" not in line}
    assert found == wanted and len(wanted) == 4


@pytest.mark.conformance
def test_torchgen_patched_as_the_backend_agrees_on_every_mutation(tmp_path: Path, upstream_at_hand: None) -> None:
    files = [_write(tmp_path / "original", OWN)]
    for name, old, new in [m[:3] for m in MUTATIONS] + ACCEPTED:
        files.append(_write(tmp_path / name, _mutated(old, new)[0]))
    done = reference.run([str(ORACLE), str(tmp_path / "original" / "tags.yaml"), *map(str, files)], cwd=ORACLE.parent,
                         check=True)
    theirs = json.loads(done.stdout)
    disagree = []
    for path, said in zip(files, theirs):
        ours = [d for d in _errors(path) if d.code not in UPSTREAM_CODES]
        named = re.search(r"native_functions\.yaml:(\d+)", said or "")  # the entry torchgen names, when it does
        entries = {_entry_line(path.read_text(encoding="utf-8"), d.span.start_line + 1) for d in ours}
        if (said is None) != (not ours) or named is not None and int(named[1]) not in entries:
            disagree.append((path.parent.name, said, [(d.code, d.span.start_line + 1, d.message) for d in ours]))
    assert disagree == []


def _entry_line(text: str, line: int) -> int:
    """The 1-based line of the entry (`- func: ...`) that holds 1-based `line`."""
    lines = text.splitlines()
    return next(i + 1 for i in range(line - 1, -1, -1) if lines[i].startswith("- "))


@pytest.mark.parametrize("name", sorted(BACKEND_TREES))
def test_the_real_backend_file_checks_clean(name: str) -> None:
    """The real file, as the release it pins and as the installed reference: no error."""
    tree = backend_tree_or_skip(name)
    path = tree / NATIVE / "native_functions.yaml"
    assert own_backend_keys(path.read_text(encoding="utf-8")) == {"PrivateUse1"}
    pinned = BACKEND_TREES[name][1]
    for version in (pinned, VERSION):
        if upstream_ops(f"{version}.0") is None:
            pytest.skip(f"torch {version}'s native_functions.yaml is not at hand")
        assert [(d.code, d.span.start_line + 1, d.message) for d in _errors(path, version)] == []


# Edits of the real file (first occurrence), the code opgen reports on the edited line, whether torchgen refuses it.
REAL_MUTATIONS = [
    ("Scalar alpha=1, Tensor(a!) out", "Scalar alpha=2, Tensor(a!) out", "OPG590", False),
    ("- func: silu_backward(", "- func: silu_backwards(", "OPG591", False),
    ("  tags: use_custom_kernel_rbln", "  tags: use_custom_kernel_rbIn", "OPG107", True),
    ("    PrivateUse1: add_out_rbln", "    PrivateUse: add_out_rbln", "OPG104", True),
]


@pytest.mark.versions
@pytest.mark.parametrize("name", sorted(BACKEND_TREES))
def test_the_real_backend_file_and_its_mutations_against_its_pinned_torchgen_patched(name: str, tmp_path: Path
                                                                                      ) -> None:
    """The pinned release's torchgen, patched as the backend does, accepts the real file and refuses exactly the
    mutations opgen reports an error of torchgen's for; each is reported on its line."""
    tree = backend_tree_or_skip(name)
    native = tree / NATIVE
    version = BACKEND_TREES[name][1]
    folder = release_folder(f"{version}.0")
    original = (native / "native_functions.yaml").read_text(encoding="utf-8")
    files, expected = [native / "native_functions.yaml"], []
    for i, (old, new, code, refused) in enumerate(REAL_MUTATIONS):
        start = original.index(old)
        path = tmp_path / str(i) / "native_functions.yaml"
        path.parent.mkdir()
        (path.parent / "tags.yaml").write_bytes((native / "tags.yaml").read_bytes())
        path.write_text(original[:start] + new + original[start + len(old):], encoding="utf-8")
        files.append(path)
        expected.append((code, original[:start].count("\n") + 1, refused))
    done = reference.run([str(ORACLE), str(native / "tags.yaml"), *map(str, files)], cwd=ORACLE.parent,
                         pythonpath=[folder], check=True)
    theirs = json.loads(done.stdout)
    assert theirs[0] is None
    for path, said, (code, line, refused) in zip(files[1:], theirs[1:], expected):
        errors = _errors(path, version)
        assert (code, line) in {(d.code, d.span.start_line + 1) for d in errors}, (code, line, errors)
        assert (said is not None) == refused == any(d.code not in UPSTREAM_CODES for d in errors), (code, said)


# Last: it empties the cache of releases read (the tests above share it).
def test_a_release_whose_file_is_not_at_hand_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    upstream_ops.cache_clear()  # the releases read before came from the real cache
    try:
        [missing] = _errors(_write(tmp_path, OWN), "2.8")
    finally:
        upstream_ops.cache_clear()
    assert (missing.code, missing.span.start_line) == ("OPG900", 0)
    assert "torch 2.8.0's native_functions.yaml is not at hand" in missing.message
