"""Dispatch keys a release's gen.py does not have yet (Release.dispatch_keys_unknown): its torchgen refuses a
dispatch table naming one ("not a supported dispatch key"), and opgen says OPG105 on that key. Each release's own
yaml with one key added to abs.out's table, against that release's torchgen, in one test; torch 2.9 (which has
them all) accepts the same edits. (2.3 lacks what 2.4 lacks; 2.0, 2.1 and 2.2 also SparseCsrMeta.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser

from .test_release_matrix import _aten, release, release_folder, verdicts

pytestmark = [pytest.mark.versions, pytest.mark.slow]

_ANCHOR = "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  device_check: NoCheck   # TensorIterator\n" \
          "  dispatch:\n"
_KEYS = ("XPU", "SparseXPU", "NestedTensorXPU", "SparseCsrXPU", "NestedTensorHPU", "MTIA", "SparseMPS", "SparseCsrMPS",
         "SparseCsrMeta")


@pytest.mark.parametrize("version", ["2.0.1", "2.1.2", "2.2.2", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1"])
def test_keys_the_release_lacks_are_refused_as_its_torchgen_refuses_them(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    native = _aten(folder) / "native"
    original = (native / "native_functions.yaml").read_text()
    assert original.count(_ANCHOR) == 1, f"{version}'s abs.out changed"
    line = original[:original.index(_ANCHOR)].count("\n") + 4  # 1-based: the line added after `dispatch:`
    r = release(version)
    # Every key the release lacks, and for 2.9 (which has them) those abs.out does not name already.
    keys = sorted(r.dispatch_keys_unknown) or ["SparseCsrXPU", "NestedTensorHPU"]
    assert set(keys) <= set(_KEYS)
    texts, files = [], []
    for key in keys:
        texts.append(original.replace(_ANCHOR, f"{_ANCHOR}    {key}: abs_{key.lower()}_out\n"))
        files.append(tmp_path / key / "native_functions.yaml")
        files[-1].parent.mkdir()
        files[-1].write_text(texts[-1])
    theirs = verdicts(folder, native / "tags.yaml", files)
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    parser = NativeParser(release=r)
    for key, text, said in zip(keys, texts, theirs):
        ours = [(d.code, d.span.start_line + 1) for d in parser.parse(text, tags).diagnostics if d.is_error]
        if r.dispatch_keys_unknown:
            # (a key that is no DispatchKey of the release at all, as SparseCsrMeta before 2.3, is "unknown")
            assert said is not None and ("is not a supported dispatch key" in said or "unknown dispatch key" in said), \
                f"{key}: torchgen {said or 'accepts'}"
            assert ours == [("OPG105", line)], key
        else:
            assert said is None and ours == [], f"{key}: torchgen {said}; opgen {ours}"
