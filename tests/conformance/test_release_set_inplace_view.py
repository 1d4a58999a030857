"""set_ tagged inplace_view (Release.set_passes_inplace_view_rules): torch 2.3's own yaml tags every set_ overload
so, and its torchgen lets set_ through the inplace_view rules; 2.2's torchgen refuses the tag on set_ (there is no
out-of-place view op `set`), and opgen says OPG303 on that entry. Each release's own yaml with the tag on
set_.source_Storage (2.3's has it already), against that release's torchgen."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser

from .test_release_matrix import _aten, release, release_folder, verdicts

pytestmark = [pytest.mark.versions, pytest.mark.slow]

_ENTRY = "- func: set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)\n"
_TAG = "  tags: inplace_view\n"


@pytest.mark.parametrize("version", ["2.2.2", "2.3.1"])
def test_set_tagged_inplace_view_as_the_release_says(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    native = _aten(folder) / "native"
    original = (native / "native_functions.yaml").read_text()
    assert original.count(_ENTRY) == 1
    start = original.index(_ENTRY)
    entry = original[start:original.find("\n- func:", start)]
    text = original if _TAG in entry else original.replace(_ENTRY, _ENTRY + _TAG)
    line = text[:text.index(_ENTRY)].count("\n")  # 0-based, the entry's first line
    path = tmp_path / "native_functions.yaml"
    path.write_text(text)
    (said,) = verdicts(folder, native / "tags.yaml", [path])
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    r = release(version)
    errors = [d for d in NativeParser(release=r).parse(text, tags).diagnostics if d.is_error]
    if r.set_passes_inplace_view_rules:
        assert said is None and errors == [], f"torchgen {said or 'accepts'}; opgen {[d.code for d in errors]}"
    else:
        assert said is not None and "set_.source_Storage is marked with tag: inplace_view" in said, said
        # (opgen also says the variants it would generate are missing, OPG309; torchgen stops at the first)
        assert "OPG303" in [d.code for d in errors if d.span.start_line in (line, line + 1)], \
            [(d.code, d.span.start_line) for d in errors]
