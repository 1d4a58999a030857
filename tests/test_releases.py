"""Release profiles: detection, resolution, the per-release rules, migration notes (no torch needed).

The per-release behaviour is compared with each release's own torchgen in
tests/conformance/test_release_matrix.py; these tests pin down opgen's side on small inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.cli import main
from opgen_lsp.index.native import NativeParser
from opgen_lsp.lsp.config import parse_settings
from opgen_lsp.releases import (
    DEFAULT,
    NEWEST,
    OLDEST,
    RELEASES,
    Fit,
    detect,
    migration_note,
    parse_version,
    release_diagnostics,
    resolve,
    resolve_for,
    resolve_for_autograd,
    schema_change_note,
)
from opgen_lsp.releases.profile import AUTOGRAD_1_13, AUTOGRAD_2_0, AUTOGRAD_2_1, AUTOGRAD_2_2, AUTOGRAD_2_3, AUTOGRAD_2_5, AUTOGRAD_2_7
from opgen_lsp.releases.release_ops import CHANGES


def by_series(series: str):
    return next(r for r in RELEASES if r.series == series)


# ---------------------------------------------------------------- the profiles

def test_releases_are_known_oldest_first_one_per_series() -> None:
    keys = [parse_version(r.version) for r in RELEASES]
    assert keys == sorted(keys) and len({r.series for r in RELEASES}) == len(RELEASES)
    assert (OLDEST.series, NEWEST.series, DEFAULT.series) == ("1.13", "2.15", "2.13")


def test_the_migration_table_covers_every_release_after_the_first() -> None:
    assert sorted(CHANGES, key=parse_version) == [r.version for r in RELEASES[1:]]


@pytest.mark.parametrize("text,key", [("2.14.1", (2, 14)), ("2.16.0a0", (2, 16)), ("2.15.0+cu132", (2, 15)),
                                      (" 2.6\n", (2, 6)), ("two", None), ("2", None), ("", None)])
def test_parse_version(text: str, key) -> None:
    assert parse_version(text) == key


def test_resolve_known_newer_older() -> None:
    known = resolve("2.14.1", "test")
    assert (known.release.series, known.fit, known.note) == ("2.14", Fit.KNOWN, None)
    newer = resolve("2.16.0a0", "version.txt of /src")
    assert newer.release is NEWEST and newer.fit is Fit.NEWER
    assert "2.16.0a0" in newer.note and "newer" in newer.note and "1.13 to 2.15" in newer.note
    older = resolve("1.12.0", "test")
    assert older.fit is Fit.OLDER and "older" in older.note and "1.13 to 2.15" in older.note
    assert resolve("nonsense", "test") is None


def test_release_diagnostics_on_line_one() -> None:
    (newer,) = release_diagnostics(resolve("2.16.0a0", "x"))
    assert (newer.code, newer.severity.label, newer.span.start_line) == ("OPG950", "information", 0)
    (older,) = release_diagnostics(resolve("1.12.1", "x"))
    assert (older.code, older.is_error) == ("OPG951", True)
    assert release_diagnostics(resolve("2.15.0", "x")) == ()


# ---------------------------------------------------------------- detection

def _checkout(root: Path, version: str) -> Path:
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (root / "version.txt").write_text(version + "\n")
    (native / "native_functions.yaml").write_text("")
    return native / "native_functions.yaml"


def test_detect_a_checkout_by_its_version_txt(tmp_path: Path) -> None:
    path = _checkout(tmp_path / "pytorch", "2.16.0a0")
    assert detect(str(path)) == ("2.16.0a0", f"version.txt of {tmp_path / 'pytorch'}")
    assert resolve_for(str(path)).fit is Fit.NEWER


def test_detect_a_packaged_torchgen_by_the_torch_beside_it(tmp_path: Path) -> None:
    native = tmp_path / "site" / "torchgen" / "packaged" / "ATen" / "native"
    native.mkdir(parents=True)
    (tmp_path / "site" / "torch").mkdir()
    (tmp_path / "site" / "torch" / "version.py").write_text("__version__ = '2.14.1+cu130'\ndebug = False\n")
    found = resolve_for(str(native / "native_functions.yaml"))
    assert (found.release.series, found.found, found.fit) == ("2.14", "2.14.1+cu130", Fit.KNOWN)


def test_nothing_says_gives_the_default_and_the_override_wins(tmp_path: Path) -> None:
    (tmp_path / "native_functions.yaml").write_text("")
    assert resolve_for(str(tmp_path / "native_functions.yaml")).release is DEFAULT
    path = _checkout(tmp_path / "pytorch", "2.12.0")
    assert resolve_for(str(path)).release.series == "2.12"
    forced = resolve_for(str(path), "2.15")
    assert (forced.release.series, forced.source) == ("2.15", "--torch-version")


def test_an_autograd_yaml_has_the_release_of_its_tree_else_of_its_native_functions(tmp_path: Path) -> None:
    native = _checkout(tmp_path / "pytorch", "2.9.0")
    in_tree = tmp_path / "pytorch" / "tools" / "autograd" / "derivatives.yaml"
    assert resolve_for_autograd(str(in_tree), None).release.series == "2.9"
    loose = tmp_path / "mine" / "derivatives.yaml"
    assert resolve_for_autograd(str(loose), str(native)).release.series == "2.9"  # resolved against the 2.9 yaml
    assert resolve_for_autograd(str(loose), None).release is DEFAULT
    forced = resolve_for_autograd(str(in_tree), str(native), "2.14")
    assert (forced.release.series, forced.source) == ("2.14", "--torch-version")


def test_the_autograd_fields_per_release() -> None:
    """As test_release_autograd.py found them against each release (a merge of the profiles must keep them)."""
    # The autograd form of the oldest release, then each release that changed it (the rest keep the one before).
    firsts = [(r.series, r.autograd) for before, r in zip((None, *RELEASES), RELEASES)
              if before is None or r.autograd != before.autograd]
    assert firsts[0] == ("1.13", AUTOGRAD_1_13)
    assert firsts[1:] == [("2.0", AUTOGRAD_2_0), ("2.1", AUTOGRAD_2_1), ("2.2", AUTOGRAD_2_2), ("2.3", AUTOGRAD_2_3),
                          ("2.5", AUTOGRAD_2_5), ("2.7", AUTOGRAD_2_7)]
    hand_bound = {r.series: sorted(r.python_bindings_skip_hand_bound) for r in RELEASES}
    assert [s for s, names in hand_bound.items() if not names] == ["1.13", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8"]
    assert [s for s, names in hand_bound.items() if names == ["sym_is_contiguous"]] == ["2.9", "2.10", "2.11"]
    assert all(hand_bound[s] == ["dim", "get_device", "is_contiguous", "numel", "storage_offset", "sym_is_contiguous"]
               for s in ("2.12", "2.13", "2.14", "2.15"))


def test_a_version_txt_without_aten_is_not_a_checkout(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.14.0\n")
    (tmp_path / "native_functions.yaml").write_text("")
    assert detect(str(tmp_path / "native_functions.yaml")) is None


# ---------------------------------------------------------------- rules that differ per release

def _errors(text: str, series: str, tags=frozenset()) -> list[str]:
    """The error codes of a probe yaml, less OPG953 (a probe lacks the CUDA kernels 2.15's gen.py requires;
    that rule is tested on its own below)."""
    snapshot = NativeParser(release=by_series(series)).parse(text, frozenset(tags))
    return [d.code for d in snapshot.diagnostics if d.is_error and d.code != "OPG953"]


NAMED = ("- func: sum_names(Tensor self, Dimname[1] dim, bool keepdim=False) -> Tensor\n"
         "  variants: function\n  dispatch:\n    CPU: sum_names_cpu\n")


def test_named_tensor_types_end_with_2_12() -> None:
    assert _errors(NAMED, "2.12") == []
    assert _errors(NAMED, "2.6") == []
    assert _errors(NAMED, "2.13") == ["OPG203"]
    snapshot = NativeParser(release=by_series("2.14")).parse(NAMED, frozenset())
    (d,) = [d for d in snapshot.diagnostics if d.is_error]
    assert "Dimname" in d.message and "torch 2.14" in d.message
    assert NAMED.splitlines()[0][d.span.start_col:d.span.end_col] == "Dimname[1]"


CONST_REF_OUT = ("- func: probe.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                 "  use_const_ref_for_mutable_tensors: True\n  variants: function\n"
                 "  dispatch:\n    CPU: probe_out\n")


def test_const_ref_mutable_out_is_refused_from_2_7() -> None:
    assert "OPG120" not in _errors(CONST_REF_OUT, "2.6")
    assert "OPG120" in _errors(CONST_REF_OUT, "2.7")


KEYWORD_ARG = ("- func: probe_kw(Tensor self, int lambda) -> Tensor\n"
               "  variants: function\n  dispatch:\n    CPU: probe_kw\n")


def test_python_keyword_argument_names_are_refused_from_2_6() -> None:
    assert "OPG302" not in _errors(KEYWORD_ARG, "2.5")
    assert "OPG302" in _errors(KEYWORD_ARG, "2.6")


QUANTIZER = ("- func: probe_q(Tensor self, ConstQuantizerPtr q) -> Tensor\n"
             "  variants: function\n  dispatch:\n    CPU: probe_q\n")


def test_const_quantizer_ptr_is_a_type_until_2_5() -> None:
    """torchgen 2.5 parses it (and gen.py fails on it: no C++ type, OPG208, as a custom class); 2.6 knows no such
    type (OPG203)."""
    assert _errors(QUANTIZER, "2.5") == ["OPG208"]
    assert _errors(QUANTIZER, "2.6") == _errors(QUANTIZER, "2.13") == ["OPG203"]


# A core CompositeImplicitAutograd group: from 2.6 its out= variant is generated; 2.5 generates none for a group
# whose variants are all CompositeImplicitAutograd (torchgen of both accepts the file).
CORE_CIA = ("- func: probe_core_(Tensor(a!) self) -> Tensor(a!)\n  tags: core\n  autogen: probe_core.out\n"
            "- func: probe_core(Tensor self) -> Tensor\n  tags: core\n")


def _generated(text: str, series: str) -> list[str]:
    snapshot = NativeParser(release=by_series(series)).parse(text, frozenset({"core"}))
    assert [d.code for d in snapshot.diagnostics if d.is_error] == []
    return sorted(name for name, op in snapshot.ops_by_name.items() if op.generated)


def test_core_composite_groups_get_generated_variants_from_2_6() -> None:
    assert _generated(CORE_CIA, "2.6") == ["probe_core.out"]
    assert _generated(CORE_CIA, "2.5") == []


PHILOX = ("- func: _philox_randint_probe(Tensor key, int low, int high) -> Tensor\n"
          "  variants: function\n  dispatch:\n    CPU: philox_probe\n")


def test_philox_ops_need_no_seeded_tag_from_2_15() -> None:
    assert _errors(PHILOX, "2.14") == ["OPG122"]
    assert _errors(PHILOX, "2.15") == []


CUDNN_INPLACE = ("- func: _cudnn_attention_forward_no_dropout_inplace(Tensor(a!) out, Tensor query) -> Tensor lse\n"
                 "  variants: function\n  dispatch:\n    CUDA: cudnn_probe\n  tags: nondeterministic_seeded\n")
SEEDED = {"nondeterministic_seeded"}


def test_functionalization_skips_a_listed_op_from_2_15() -> None:
    assert _errors(CUDNN_INPLACE, "2.14", SEEDED) == ["OPG309"]
    assert _errors(CUDNN_INPLACE, "2.15", SEEDED) == []


def test_xpu_family_waits_for_the_flag_from_2_14() -> None:
    from opgen_lsp.codegen.options import CodegenOptions
    from opgen_lsp.model.dispatch import K

    assert K["SparseXPU"] not in CodegenOptions(release=by_series("2.13")).ignore_keys
    assert K["SparseXPU"] in CodegenOptions(release=by_series("2.14")).ignore_keys
    assert K["SparseXPU"] not in CodegenOptions(xpu=True, release=by_series("2.14")).ignore_keys


def test_keys_a_release_lacks_are_refused() -> None:
    probe = "- func: probe(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CPU, SparseCsrXPU: probe\n"
    assert _errors(probe, "2.6") == ["OPG105"]
    assert _errors(probe, "2.7") == []


def _op(name: str, kernel: str | None = None) -> str:
    dispatch = f"  dispatch:\n    CPU: {kernel}\n" if kernel else ""
    return f"- func: {name}(Tensor self) -> Tensor\n  variants: function\n{dispatch}\n"


def test_2_6_warns_where_a_change_of_op_namespace_drops_registrations() -> None:
    # a (aten, CPU), b (custom, CompositeImplicitAutograd: no dispatch), c (aten, CPU), d (custom, CPU in
    # custom::native): gen.py 2.6 starts over at b (dropping a's CPU registration) and at c (dropping b's); at d
    # nothing: c registers nothing under CompositeImplicitAutograd, and d's CPU kernel is in a block of its own.
    text = _op("a", "a_cpu") + _op("custom::b") + _op("c", "c_cpu") + _op("custom::d", "custom::d_cpu")
    warned = [d for d in NativeParser(release=by_series("2.6")).parse(text, frozenset()).diagnostics
              if d.code == "OPG954"]
    assert [(d.span.start_line, d.is_error) for d in warned] == [(5, False), (8, False)]
    assert "'custom' after ops of 'aten'" in warned[0].message and "of 1 under CPU op" in warned[0].message
    assert "'aten' after ops of 'custom'" in warned[1].message
    assert "of 1 under CompositeImplicitAutograd op" in warned[1].message
    later = NativeParser(release=by_series("2.7")).parse(text, frozenset()).diagnostics
    assert [d.code for d in later if d.code == "OPG954"] == []


# ---------------------------------------------------------------- migration notes

def test_migration_notes_name_the_release() -> None:
    assert migration_note("cholesky", by_series("2.14")) == \
        "'cholesky' was removed in torch 2.14 (torch 2.13 has it); this is torch 2.14"
    assert migration_note("cholesky", by_series("2.13")) is None  # 2.13 has it
    assert migration_note("linalg_polar", by_series("2.13")) == "'linalg_polar' was added in torch 2.14; this is torch 2.13"
    assert migration_note("abs", by_series("2.15")) is None
    assert migration_note("no_such_op_anywhere", by_series("2.15")) is None
    assert schema_change_note("_cdist_backward", by_series("2.14")) == \
        "the schema of '_cdist_backward' changed in torch 2.14 (from torch 2.13's)"
    assert schema_change_note("_cdist_backward", by_series("2.13")) is None


BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n- cholesky\n"


def test_a_backend_yaml_naming_a_removed_op_gets_the_migration_note(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "2.14.1")
    native.write_text("- func: abs(Tensor self) -> Tensor\n  variants: function, method\n"
                      "  dispatch:\n    CompositeExplicitAutograd: abs\n")
    (native.parent / "tags.yaml").write_text("- tag: core\n  desc: core\n")
    (tmp_path / "xla.yaml").write_text(BACKEND)
    code = main(["check", "--native-functions", str(native), str(tmp_path / "xla.yaml")])
    out = capsys.readouterr().out
    assert code == 1
    assert "xla.yaml:5:3: error: 'cholesky' was removed in torch 2.14 (torch 2.13 has it)" in out and "[OPG952]" in out


# ---------------------------------------------------------------- command line and settings

# Entries registering the CUDA kernels gen.py 2.15 requires (a probe yaml checked as 2.15 needs them).
TORCH_CPU_CUDA_2_15 = "".join(f"- func: torch_cpu_probe_{i}(Tensor self) -> Tensor\n  dispatch:\n    CUDA: {kernel}\n"
                              for i, kernel in enumerate(sorted(by_series("2.15").cuda_kernels_in_torch_cpu)))


def test_check_of_a_newer_tree_warns_once_and_checks(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "2.16.0a0")
    native.write_text("- func: abs(Tensor self) -> Tensor\n  variants: function\n"
                      "  dispatch:\n    CompositeExplicitAutograd: abs\n" + TORCH_CPU_CUDA_2_15)
    (native.parent / "tags.yaml").write_text("- tag: core\n  desc: core\n")
    assert main(["check", str(native)]) == 0
    out, err = capsys.readouterr()
    assert out.count("[OPG950]") == 1 and ":1:1: information: torch 2.16.0a0" in out
    assert len(err.splitlines()) == 1 and "checked and generated as torch 2.15" in err


def test_check_of_an_older_tree_says_the_range_and_nothing_else(tmp_path: Path, capsys) -> None:
    native = _checkout(tmp_path / "pytorch", "1.12.0")
    native.write_text("- func: not a schema\n")
    (native.parent / "tags.yaml").write_text("")
    assert main(["check", str(native)]) == 1
    out = capsys.readouterr().out
    report, summary = out.splitlines()
    assert report.count("error") == 1 and "[OPG951]" in report and "1.13 to 2.15" in report
    assert summary == "1 error, 0 warnings in 1 file"


@pytest.mark.parametrize("version,status,said", [
    ("1.12.0", 1, "older than the releases opgen knows (1.13 to 2.15)"),  # 1, as `opgen check` (OPG951)
])
def test_generate_says_in_one_line_what_it_cannot_generate(version: str, status: int, said: str, tmp_path: Path,
                                                          capsys) -> None:
    _checkout(tmp_path / "pytorch", version)
    aten = tmp_path / "pytorch" / "aten" / "src" / "ATen"
    assert main(["generate", "-s", str(aten), "-d", str(tmp_path / "out")]) == status
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_torch_version_must_be_a_version(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["check", "--torch-version", "latest", "x.yaml"])
    assert stopped.value.code == 2 and "'latest' is not a torch version" in capsys.readouterr().err


def test_version_lists_every_release(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    out = capsys.readouterr().out
    assert all(r.version in out for r in RELEASES)


def test_the_server_setting() -> None:
    warnings: list[str] = []
    assert parse_settings({"torchVersion": "2.14"}, warnings.append).torch_version == "2.14"
    assert parse_settings({"torchVersion": "soon"}, warnings.append).torch_version is None
    assert len(warnings) == 1 and "torchVersion" in warnings[0]


def test_2_15_refuses_a_yaml_without_its_torch_cpu_cuda_kernels() -> None:
    """gen.py 2.15 fails before generating when a CUDA kernel it lists as defined in torch_cpu has no
    CUDA-family registration; with no entry to blame, each is reported on the file's first line (the
    conformance with torchgen 2.15.0 is tests/conformance/test_release_kernel_list.py)."""
    text = "- func: probe(Tensor self) -> Tensor\n  dispatch:\n    CUDA: count_nonzero_cuda\n"
    snapshot = NativeParser(release=by_series("2.15")).parse(text, frozenset())
    (d,) = [d for d in snapshot.diagnostics if d.is_error]
    assert (d.code, d.span.start_line) == ("OPG953", 0)
    assert "'triton_multi_head_attention'" in d.message and "'count_nonzero_cuda'" not in d.message
    assert _errors(text, "2.14") == []
    assert [d for d in NativeParser(release=by_series("2.15")).parse(text + TORCH_CPU_CUDA_2_15, frozenset())
            .diagnostics if d.is_error] == []


def test_a_static_dispatch_backend_is_a_key_of_the_release(tmp_path: Path, capsys) -> None:
    """gen.py parses --static-dispatch-backend with its own DispatchKey: MTIA is one from 2.1 (gen.py 2.0: unknown
    dispatch key MTIA)."""
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "native_functions.yaml").write_text("- func: abs(Tensor self) -> Tensor\n")
    (tmp_path / "native" / "tags.yaml").write_text("")
    said = {}
    for series in ("2.0", "2.1"):
        main(["generate", "--torch-version", series, "-s", str(tmp_path), "-d", str(tmp_path / "out"),
              "--static-dispatch-backend", "MTIA", "--dry-run"])
        said[series] = "--static-dispatch-backend: unknown dispatch key MTIA" in capsys.readouterr().err
    assert said == {"2.0": True, "2.1": False}
