"""The kernel index's on-disk cache holds what cpp_scan found; results of another scanner must not be
reused. The version was 3 through five later scanner changes (dunder kernels, template/device markers,
variadic macros, CRLF continuations, '# if 0'), so a cache written before them was trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from opgen_lsp.index import kernels
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.syntax import cpp_scan


def test_the_cache_version_follows_the_scanner_source() -> None:
    fingerprint = kernels.scanner_fingerprint(Path(cpp_scan.__file__).read_bytes())
    assert fingerprint in str(kernels.CACHE_VERSION)
    assert kernels.scanner_fingerprint(b"another scanner") != fingerprint


def test_a_cache_from_an_older_scanner_is_not_reused(tmp_path: Path) -> None:
    source = tmp_path / "src" / "K.cpp"
    source.parent.mkdir()
    source.write_text("namespace at::native {\nTensor real_kernel(const Tensor& x) { return x; }\n}\n")
    stat = os.stat(source)
    cache = tmp_path / "cache.json"
    stale = [["stale_kernel", cpp_scan.DEFINITION, "at::native", 1, 7]]
    for old_version in (3, "3"):
        cache.write_text(json.dumps({"version": old_version,
                                     "files": {str(source): [stat.st_size, stat.st_mtime_ns, stale]}}))
        index = KernelIndex.build([str(tmp_path / "src")], cache=cache, workers=1)
        assert index.find("real_kernel", (cpp_scan.DEFINITION,))
        assert not index.find("stale_kernel", (cpp_scan.DEFINITION,))
    # and the cache it writes is reused
    index = KernelIndex.build([str(tmp_path / "src")], cache=cache, workers=1)
    assert index.find("real_kernel", (cpp_scan.DEFINITION,))
