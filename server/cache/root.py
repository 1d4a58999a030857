"""The one folder of opgen's caches: $XDG_CACHE_HOME/opgen, else ~/.cache/opgen. Each cache is a name inside it:
generate's run records and per-item pieces (opgen-cache-v1, store.py), the kernel index (kernels-<roots>.json, index/kernels.py), and
the torchgen of each release that tools/torchgen_release.py fetches (torchgen/<version>, read by index/base_text.py;
the tool is a script run without opgen installed, so it spells the same folder itself)."""

from __future__ import annotations

import os
import re

# The kernel index's cache files (index/kernels.py), in the root: kernels-<16 hex digits of its roots>.json.
KERNEL_INDEX_PREFIX = "kernels-"
KERNEL_INDEX_NAME = re.compile(r"kernels-[0-9a-f]{16}\.json")
# One file per set of roots indexed: the most recently written are kept, so that every tree ever indexed (each
# temporary checkout, each worktree) does not stay on disk for good.
KERNEL_INDEXES_KEPT = 32


def user_cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "opgen")


def _kernel_index_files(root: str) -> list[os.DirEntry[str]]:
    """The kernel index's cache files in root (names of its own only); none when root cannot be listed."""
    try:
        with os.scandir(root) as entries:
            return [entry for entry in entries if KERNEL_INDEX_NAME.fullmatch(entry.name)]
    except OSError:
        return []


def prune_kernel_indexes(root: str, keep: int = KERNEL_INDEXES_KEPT) -> int:
    """Remove all but the `keep` most recently written kernel index files in root (never through a link); the
    number removed. A file another process removes meanwhile is no error."""
    found: list[tuple[int, str]] = []
    for entry in _kernel_index_files(root):
        try:
            found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
        except OSError:
            pass
    removed = 0
    for _, path in sorted(found, reverse=True)[keep:]:
        try:
            os.unlink(path)
            removed += 1
        except OSError:  # gone already, or not ours to remove: only space is at stake
            pass
    return removed


def clear_kernel_index(root: str) -> tuple[int, list[str]]:
    """Remove the kernel index's cache files in root (only names of its own; a symbolic link is removed, never
    followed): (the number removed, why others could not be)."""
    removed, failed = 0, []
    for entry in _kernel_index_files(root):
        try:
            os.unlink(entry.path)
            removed += 1
        except FileNotFoundError:
            pass
        except OSError as exc:
            failed.append(f"cannot remove {entry.path} ({exc.strerror or exc})")
    return removed, failed
