"""`opgen check`'s persistent memo: the verdicts on a native_functions.yaml and a tags.yaml, kept in opgen's cache
(cache/store.py) so that a run whose inputs did not change answers without parsing them.

A verdict is a pure function of what its key holds, and of nothing else:
- a tags.yaml's (its tag names and diagnostics): its text and the memory budget;
- a native_functions.yaml's (the parse's diagnostics, then the AOTI shim check's): its text, the valid tags, the
  release (its whole profile), the memory budget (a file over it is read in part), and the fallback_ops.py the
  shim check reads (its path and the sha256 of its bytes: the first of shims' candidates that is a file).
opgen's own source digest is part of every key (`namespaced`), so an entry of another opgen is never read. The
rest of a check (which release, the tree's and the release's diagnostics, which tags.yaml) is worked out afresh
on every run, as without the memo: a hit replaces only the parse, and the output is the same byte for byte.
An entry that does not decode exactly as this module writes it is a miss, and the verdict is computed again.

A verdict not found is computed by check.py, which also keeps per native_functions.yaml path (RecordSlot: the same
constants as the verdict's key, the path in place of the text) the record the next check of an edited text starts
from (check_edit.py: only the entries whose text is new are lowered).

Not memoized (each computed in full, as without a cache): a backend's own operator file (its upstream ops are
read from the release), a release that reads the tree's native-AOT declarations (torch 2.15 on), and a run with
--kernels (the C++ sources); backend yamls, derivatives.yaml, deprecated.yaml and selection yamls.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..cache.stable_text import stable_text
from ..diagnostics import Diagnostic, Severity
from ..frozen import record
from ..text import Span
from .fallback_ops_files import fallback_ops_candidates

if TYPE_CHECKING:
    from ..cache.store import Cache
    from ..releases import Release

# The entries are marshal's bytes (lists, strings and ints only: no json, whose import a clean check avoids); its
# format is Python's own, so the interpreter's version is keyed too.
_FORMAT = f"1 marshal {marshal.version} {sys.version_info[:2]}"
# index.documents.MEMORY_BUDGET_VARIABLE (not imported: that module loads the parser); its raw value is keyed.
_BUDGET_VARIABLE = "OPGEN_MEMORY_BUDGET_MB"


@record
class TagsVerdict:
    names: frozenset[str]
    diagnostics: tuple[Diagnostic, ...]


@record
class NativeVerdict:
    diagnostics: tuple[Diagnostic, ...]  # the parse's (NativeSnapshot.diagnostics), in its order
    extra: tuple[Diagnostic, ...]  # then the shim check's



def fallback_ops_state(native_path: str) -> str:
    """The fallback_ops.py the shim check of native_path would read (shims.load_fallback_ops: the first candidate
    that is a file), with the sha256 of its bytes; "none" when there is none."""
    source = os.path.dirname(os.path.dirname(os.path.abspath(native_path)))
    for path in fallback_ops_candidates(source):
        if os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    return f"{path}\0{hashlib.file_digest(f, 'sha256').hexdigest()}"
            except OSError as exc:
                return f"{path}\0unreadable {exc.errno}"
    return "none"


def encode_diagnostics(found: Sequence[Diagnostic]) -> list[list[object]]:
    return [[list(d.span), int(d.severity), d.code, d.message, [list(pair) for pair in d.data]] for d in found]


def decode_diagnostics(data: object) -> tuple[Diagnostic, ...]:
    """The diagnostics encode_diagnostics wrote; ValueError for anything else."""
    if not isinstance(data, list):
        raise ValueError("not a list")
    out = []
    for item in data:
        span, severity, code, message, extras = item
        if not (isinstance(span, list) and len(span) == 4 and all(type(n) is int for n in span)
                and type(severity) is int and isinstance(code, str) and isinstance(message, str)
                and isinstance(extras, list)
                and all(isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in extras)):
            raise ValueError("not a diagnostic")
        out.append(Diagnostic(Span(*span), Severity(severity), code, message, tuple((a, b) for a, b in extras)))
    return tuple(out)


class CheckMemo:
    """The verdicts of one `opgen check` run, looked up in (and added to) a persistent cache."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def _get(self, key: str) -> dict[str, object] | None:
        payload = self.cache.get(key)
        if payload is None:
            return None
        try:
            data = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return None
        return data if isinstance(data, dict) else None

    def _put(self, key: str, data: dict[str, object]) -> None:
        self.cache.put(key, marshal.dumps(data))

    def tags(self, text: str, compute: Callable[[], TagsVerdict]) -> TagsVerdict:
        from ..cache.store import namespaced

        key = namespaced("check-tags", _FORMAT, text, os.environ.get(_BUDGET_VARIABLE, ""))
        data = self._get(key)
        if data is not None:
            try:
                names = data["names"]
                if isinstance(names, list) and all(isinstance(n, str) for n in names):
                    return TagsVerdict(frozenset(names), decode_diagnostics(data["diagnostics"]))
            except (KeyError, TypeError, ValueError):
                pass
        verdict = compute()
        self._put(key, {"names": sorted(verdict.names), "diagnostics": encode_diagnostics(verdict.diagnostics)})
        return verdict

    def native(self, path: str, text: str, valid_tags: frozenset[str], release: Release,
               compute: Callable[[RecordSlot], NativeVerdict]) -> NativeVerdict:
        """The verdict kept for text, else compute's, given where the last run on this path kept what the edit path
        (check_edit.py) reads: keyed by the same constants as the verdict, and the path instead of the text."""
        from ..cache.store import namespaced

        constants = ("\n".join(sorted(valid_tags)), stable_text(release), os.environ.get(_BUDGET_VARIABLE, ""),
                     fallback_ops_state(path))
        key = namespaced("check-native", _FORMAT, text, *constants)
        data = self._get(key)
        if data is not None:
            try:
                return NativeVerdict(decode_diagnostics(data["diagnostics"]), decode_diagnostics(data["extra"]))
            except (KeyError, TypeError, ValueError):
                pass
        verdict = compute(RecordSlot(self, namespaced("check-edit", _FORMAT, os.path.abspath(path), *constants)))
        self._put(key, {"diagnostics": encode_diagnostics(verdict.diagnostics),
                        "extra": encode_diagnostics(verdict.extra)})
        return verdict


class RecordSlot:
    """Where the edit path's record of one native_functions.yaml is kept (check_edit.py): one per path and set of
    constants, replaced by every run that computes a verdict on it."""

    def __init__(self, memo: CheckMemo, key: str) -> None:
        self._memo, self._key = memo, key

    def get(self) -> dict[str, object] | None:
        return self._memo._get(self._key)

    def put(self, record: dict[str, object]) -> None:
        self._memo._put(self._key, record)
