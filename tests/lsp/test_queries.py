"""The pure pieces under the server: queries of a snapshot, column conversion, settings, the workspace model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types

from opgen_lsp.analysis import completion, cursor, definition, folding, hover, symbols
from opgen_lsp.analysis.check import NATIVE as NATIVE_KIND
from opgen_lsp.analysis.check import TAGS as TAGS_KIND
from opgen_lsp.analysis.check import UNKNOWN
from opgen_lsp.diagnostics import Diagnostic, Severity
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.lsp import config, convert
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.model.lower import ENTRY_KEYS
from opgen_lsp.model.schema import BASE_TYPE_NAMES
from opgen_lsp.releases import DEFAULT, RELEASES
from opgen_lsp.text import Span

from .helpers import NATIVE, TAGS

TAGS_SNAPSHOT = TagsParser().parse(TAGS)
SNAPSHOT = NativeParser(release=DEFAULT).parse(NATIVE, TAGS_SNAPSHOT.names)
LINES = NATIVE.split("\n")


def at(marker: str, offset: int = 0, occurrence: int = 1) -> tuple[int, int]:
    index = -1
    for _ in range(occurrence):
        index = NATIVE.index(marker, index + 1)
    index += offset
    return NATIVE.count("\n", 0, index), index - (NATIVE.rfind("\n", 0, index) + 1)


def test_the_sample_is_clean():
    assert SNAPSHOT.diagnostics == ()


# ---------------------------------------------------------------- cursor

def test_hits():
    hit = cursor.hit_at(SNAPSHOT.document, *at("CPU, CUDA: relu", 6))
    assert (hit.kind, hit.text, hit.key) == (cursor.DISPATCH_KEY, "CUDA", "dispatch")
    assert hit.span == Span(*at("CUDA: relu"), *at("CUDA: relu", 4))
    hit = cursor.hit_at(SNAPSHOT.document, *at("_fused_thing.out", 2))
    assert (hit.kind, hit.text, hit.key) == (cursor.OP_REFERENCE, "_fused_thing.out", "autogen")
    hit = cursor.hit_at(SNAPSHOT.document, *at("tags: pointwise", 8))
    assert (hit.kind, hit.text) == (cursor.TAG, "pointwise")
    hit = cursor.hit_at(SNAPSHOT.document, *at("variants: function, method", 3))
    assert (hit.kind, hit.text) == (cursor.ENTRY_KEY, "variants")
    assert cursor.hit_at(SNAPSHOT.document, 0, 2) is None  # the comment before the first entry
    assert cursor.hit_at(SNAPSHOT.document, 6, 0) is None  # a blank line between entries


def test_entry_range_stops_at_the_last_content_line():
    text = "- func: a(Tensor self) -> Tensor\n  variants: function\n\n# about b\n- func: b(Tensor self) -> Tensor\n"
    snapshot = NativeParser(release=DEFAULT).parse(text, frozenset())
    first, second = snapshot.document.entries
    assert cursor.entry_range(first) == Span(0, 0, 1, 20)
    assert cursor.entry_range(second) == Span(4, 0, 4, 32)
    assert folding.entry_folds(snapshot.document) == [(0, 1)]


# ---------------------------------------------------------------- symbols

def test_symbols_group_consecutive_overloads_only():
    text = "".join(f"- func: {name}(Tensor self) -> Tensor\n" for name in ("a.x", "a_.x", "b", "a.y"))
    found = symbols.native_symbols(NativeParser(release=DEFAULT).parse(text, frozenset()))
    assert [(s.name, s.kind, [c.name for c in s.children]) for s in found] == [
        ("a", symbols.GROUP, ["a.x", "a_.x"]), ("b", symbols.OP, []), ("a.y", symbols.OP, [])]
    assert found[0].range == Span(0, 0, 1, 35)


def test_an_entry_whose_schema_does_not_parse_keeps_its_symbol():
    text = "- func: broken.overload(Tensor self -> Tensor\n- func: fine(Tensor self) -> Tensor\n"
    found = symbols.native_symbols(NativeParser(release=DEFAULT).parse(text, frozenset()))
    assert [s.name for s in found] == ["broken.overload", "fine"]


def test_tag_symbols():
    found = symbols.tag_symbols(TAGS_SNAPSHOT)
    assert [(s.name, s.kind, s.detail) for s in found][0] == ("core", symbols.TAG,
                                                            "Core ATen operators, part of the stable opset.")
    assert found[0].selection == Span(0, 7, 0, 11)


@pytest.mark.parametrize("query, name, better_than", [
    ("add.out", "add.out", "add.outer"),
    ("add", "add", "add.Tensor"),
    ("add", "add.Tensor", "addmm"),
    ("add", "addmm", "_add_relu"),
    ("mm", "addmm", "max_pool"),
])
def test_fuzzy_ranking(query, name, better_than):
    assert symbols.fuzzy_score(query, name) > (symbols.fuzzy_score(query, better_than) or -10**9)


def test_fuzzy_needs_the_characters_in_order():
    assert symbols.fuzzy_score("tuo", "add.out") is None
    assert symbols.fuzzy_score("ADDOUT", "add.out") is not None


def test_search_ops_limits_and_orders():
    found = symbols.search_ops([("uri", SNAPSHOT)], "add", 2)
    assert [(k, s.name) for k, s in found] == [("uri", "add.out"), ("uri", "add.Tensor")]
    assert len(symbols.search_ops([("uri", SNAPSHOT)], "", 100)) == 5


# ---------------------------------------------------------------- definition, references

def test_definition_and_references():
    assert definition.definition(SNAPSHOT, *at("delegate: add.out", 12)) == Span(*at("add.out(T"), *at("add.out(T", 7))
    assert definition.definition(SNAPSHOT, *at("delegate: add.out", 3)) is None  # on the key
    refs = definition.references(SNAPSHOT, *at("delegate: add.out", 12, 2), include_declaration=False)
    assert refs == [Span(*at("add.out", 0, 1), *at("add.out", 7, 1)), Span(*at("add.out", 0, 2), *at("add.out", 7, 2))]
    assert definition.references(SNAPSHOT, *at("relu(T", 1), include_declaration=True) == [
        Span(*at("relu(T"), *at("relu(T", 4))]
    assert definition.references(SNAPSHOT, *at("NoCheck"), include_declaration=True) == []


def test_a_delegate_to_a_missing_op_has_no_definition():
    text = "- func: f(Tensor self) -> Tensor\n  structured_delegate: nowhere.out\n"
    snapshot = NativeParser(release=DEFAULT).parse(text, frozenset())
    assert definition.definition(snapshot, 1, 25) is None


# ---------------------------------------------------------------- hover

def test_dispatch_key_summaries():
    assert hover.dispatch_key_summary("CPU").startswith("A backend key: kernels for dense tensors on CPU.")
    assert "structured kernels" in hover.dispatch_key_summary("CPU")
    assert hover.dispatch_key_summary("SparseCsrCUDA").startswith(
        "A per-backend functionality key: sparse compressed (CSR/CSC/BSR/BSC) tensors on CUDA.")
    assert "may not use it" in hover.dispatch_key_summary("AutogradCPU")
    assert hover.dispatch_key_summary("Python").startswith("A runtime dispatch key.")
    assert hover.dispatch_key_summary("Nonsense") is None


def test_hover_on_entry_keys_uses_their_descriptions():
    found = hover.hover(SNAPSHOT, TAGS_SNAPSHOT, *at("device_check", 2))
    assert found.markdown == f"**device_check**: {ENTRY_KEYS['device_check']}"
    assert found.span == Span(*at("device_check"), *at("device_check", 12))


def test_hover_on_an_unknown_tag_and_a_missing_op():
    text = "- func: f(Tensor self) -> Tensor\n  structured_delegate: g.out\n  tags: nope\n"
    snapshot = NativeParser(release=DEFAULT).parse(text, TAGS_SNAPSHOT.names)
    assert "no such operator" in hover.hover(snapshot, TAGS_SNAPSHOT, 1, 24).markdown
    assert "not defined in tags.yaml" in hover.hover(snapshot, TAGS_SNAPSHOT, 2, 9).markdown


def test_schema_summary_lists_every_argument():
    op = definition.find_op(SNAPSHOT, "add_.Tensor")
    text = hover.schema_summary(op.function.func)
    assert text.split("\n")[:5] == ["**aten::add_.Tensor**", "", "- name: `add_`", "- overload: `Tensor`",
                                    "- kind: in-place: mutates `self` and returns it"]
    assert "- `Tensor(a!) self`\n- `Tensor other`\n- `Scalar alpha=1` (keyword-only)" in text
    assert text.endswith("**Returns** `Tensor(a!)`")


# ---------------------------------------------------------------- completion (contexts from text)

def complete(text: str, marker: str, offset: int | None = None):
    index = text.index(marker) + (len(marker) if offset is None else offset)
    line = text.count("\n", 0, index)
    col = index - (text.rfind("\n", 0, index) + 1)
    snapshot = NativeParser(release=DEFAULT).parse(text, TAGS_SNAPSHOT.names)
    return {c.label: c for c in completion.complete(text.split("\n"), line, col, snapshot, TAGS_SNAPSHOT)}


def test_completing_a_key_on_the_first_line_of_an_entry():
    found = complete("- \n", "- ")
    assert list(found) == list(ENTRY_KEYS)
    assert found["func"].insert_text == "func: "


def test_completing_a_value_right_after_the_colon_adds_the_space():
    found = complete("- func: f(Tensor self) -> Tensor\n  tags:\n", "tags:")
    assert found["core"].insert_text == " core"
    found = complete("- func: f(Tensor self) -> Tensor\n  variants:function\n", "variants:function")
    assert found["function"].replace == Span(1, 11, 1, 19)


def test_no_completion_outside_entries_or_in_other_values():
    assert complete("# comment\n", "# comm") == {}
    assert complete("- func: f(Tensor self) -> Tensor\n  python_module: nn\n", "python_module: n") == {}
    assert complete("- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: ker\n", "CPU: ke") == {}


@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r.version)
def test_the_types_offered_are_those_the_release_takes(release):
    """Every type offered after `func: f(Tensor self, ` is one the release's check takes as a type; every type
    completion knows that it refuses (OPG203 unknown, OPG208 no C++ type) is not offered: Dimname only while the
    release has named tensors, ConstQuantizerPtr never."""
    text = "- func: probe(Tensor self, "
    snapshot = NativeParser(release=release).parse("- func: f(Tensor self) -> Tensor\n", frozenset())
    offered = {c.label for c in completion.complete([text], 0, len(text), snapshot, None)}
    for name in (*BASE_TYPE_NAMES, *completion.COMPOUND_TYPES, "bool[]"):
        entry = f"- func: probe(Tensor self, {name} x) -> Tensor\n  dispatch:\n    CPU: probe\n"
        refused = [d for d in NativeParser(release=release).parse(entry, frozenset()).diagnostics
                   if d.code == "OPG203" or d.code == "OPG208" and f"'{name}'" in d.message]
        assert (name in offered) == (not refused), (name, [d.message for d in refused])
    assert ("Dimname" in offered) == release.named_tensor_types and "ConstQuantizerPtr" not in offered


def test_dispatch_keys_after_a_comment_line_in_the_table():
    text = "- func: f(Tensor self) -> Tensor\n  dispatch:\n    # CUDA later\n    CP\n"
    assert "CPU" in complete(text, "    CP")


# ---------------------------------------------------------------- convert

@pytest.mark.parametrize("encoding, expected", [("utf-16", 3), ("utf-8", 5), ("utf-32", 2)])
def test_columns_in_code_units(encoding, expected):
    enc = convert.Encoding.of(encoding)
    line = "\U0001F600x"  # 4 bytes in UTF-8, 2 units in UTF-16, 1 code point
    assert enc.to_units(line, 2) == expected
    assert enc.from_units(line, expected) == 2
    assert enc.to_units(line, 5) == expected + 3  # past the end: plain characters
    assert enc.from_units(line, 99) == 2


def test_a_column_inside_a_character_rounds_down():
    assert convert.Encoding.of("utf-16").from_units("\U0001F600x", 1) == 0
    assert convert.Encoding.of("utf-8").from_units("é", 1) == 0


def test_unknown_encodings_mean_utf16():
    assert convert.Encoding.of("utf-7").name == "utf-16"
    assert convert.Encoding.of(types.PositionEncodingKind.Utf8).name == "utf-8"


def test_diagnostic_conversion():
    lines = convert.Lines("a\r\n\U0001F600 bad\n")
    d = Diagnostic(Span(1, 2, 1, 5), Severity.WARNING, "OPG402", "msg", (("replace", "good"),))
    out = convert.diagnostic(lines, d)
    assert out.range == types.Range(start=types.Position(line=1, character=3), end=types.Position(line=1, character=6))
    assert (out.severity, out.code, out.source, out.data) == (types.DiagnosticSeverity.Warning, "OPG402", "opgen",
                                                              [["replace", "good"]])
    assert lines[0] == "a"  # no '\r'
    assert convert.position(lines, 7, 3) == types.Position(line=7, character=3)  # beyond the text: unchanged


# ---------------------------------------------------------------- settings

def test_settings_defaults_and_values():
    warnings: list[str] = []
    assert config.parse_settings(None, warnings.append) == config.Settings()
    s = config.settings_from({"debounceMs": 5}, {"tagsPath": "t.yaml"}, warn=warnings.append)
    assert (s.debounce_ms, s.tags_path) == (5, "t.yaml")
    s = config.settings_from({"lazy": {"preset": "torchscript", "shapeInferenceHeader": "h.h"}}, warn=warnings.append)
    assert s.lazy == config.Lazy("torchscript", "h.h")
    s = config.settings_from({"pytorchFormatCheck": False, "compatibilityBase": "origin/main~2"}, warn=warnings.append)
    assert (s.pytorch_format_check, s.compatibility_base) == (False, "origin/main~2")
    assert (config.Settings().pytorch_format_check, config.Settings().compatibility_base) == (True, "HEAD")
    assert warnings == []


@pytest.mark.parametrize("raw, message", [
    ({"debounceMs": "fast"}, "'debounceMs' must be a whole number from 0 to 10000, not 'fast'; using the default 0"),
    ({"debounceMs": -1}, "'debounceMs' must be a whole number"),
    ({"debounceMs": True}, "'debounceMs' must be a whole number"),
    ({"maxWorkspaceSymbols": 0}, "'maxWorkspaceSymbols' must be a whole number from 1"),
    ({"tagsPath": 3}, "'tagsPath' must be a file path"),
    ({"testing": {"failHover": True}}, "setting 'testing' is ignored"),
    ({"tagsPath": "a\0b"}, "'tagsPath' must be a file path"),
    ({"lazy": {"preset": "ts"}}, "'lazy.preset' must be one of 'auto', 'default', 'torchscript'"),
    ({"lazy": {"shapeInferenceHeader": 3}}, "'lazy.shapeInferenceHeader' must be a file path"),
    ({"lazy": {"nodeBase": "X"}}, "unknown setting 'lazy.nodeBase'"),
    ({"lazy": []}, "'lazy' must be an object"),
    ({"tagPath": "x"}, "unknown setting 'tagPath'"),
    ("opgen", "settings must be an object"),
    ({"pytorchFormatCheck": "yes"}, "'pytorchFormatCheck' must be true or false"),
    ({"compatibilityBase": "--output=/tmp/x"}, "'compatibilityBase' must be a git revision"),  # never a git option
    ({"compatibilityBase": "HEAD; rm"}, "'compatibilityBase' must be a git revision"),
])
def test_bad_settings_warn_and_fall_back(raw, message):
    warnings: list[str] = []
    assert config.settings_from(raw, warn=warnings.append) == config.Settings()
    assert len(warnings) == 1 and message in warnings[0]


# ---------------------------------------------------------------- workspace model

def test_workspace_classifies_and_tracks_tags(tmp_path: Path):
    (tmp_path / "tags.yaml").write_text(TAGS)
    native_path = str(tmp_path / "native_functions.yaml")
    ws = Workspace()
    ws.open("file:///n", native_path, NATIVE, 1)
    assert ws.document("file:///n").kind == NATIVE_KIND
    first = ws.analyse("file:///n")
    assert first.diagnostics == () and first.tags is not None and ws.current("file:///n") is first
    assert ws.key("file:///n")[1][0] == "disk"

    # The tags file opened in the editor takes over; editing it makes the native analysis stale.
    ws.open("file:///t", str(tmp_path / "tags.yaml"), TAGS, 1)
    assert ws.document("file:///t").kind == TAGS_KIND
    assert ws.stale(NATIVE_KIND) == ["file:///n"]
    ws.change("file:///t", TAGS.replace("core", "kernel"), 2)
    codes = [d.code for d in ws.analyse("file:///n").diagnostics]
    assert codes == ["OPG107", "OPG107"]
    ws.close("file:///t")
    assert ws.analyse("file:///n").diagnostics == ()

    # Edits re-classify: a document that stops looking like operator yaml has no diagnostics.
    ws.change("file:///x", "hello: world\n", 1)
    assert ws.document("file:///x").kind == UNKNOWN and ws.analyse("file:///x").diagnostics == ()


def test_tags_path_setting_is_relative_to_the_root(tmp_path: Path):
    ws = Workspace(root=str(tmp_path), settings=config.Settings(tags_path="sub/tags.yaml"))
    document = ws.open("file:///n", str(tmp_path / "a" / "native_functions.yaml"), NATIVE, 1)
    assert ws.tags_location(document) == os.path.join(str(tmp_path), "sub/tags.yaml")
    analysis = ws.analyse("file:///n")
    assert analysis.diagnostics[0].code == "OPG900" and "sub/tags.yaml" in analysis.diagnostics[0].message


def test_a_document_that_is_not_a_file_uses_the_one_open_tags_document():
    ws = Workspace()
    ws.open("untitled:1", None, NATIVE, 1)
    assert ws.analyse("untitled:1").diagnostics[0].code == "OPG900"
    ws.open("untitled:2", None, TAGS, 1)
    assert ws.analyse("untitled:1").diagnostics == ()
