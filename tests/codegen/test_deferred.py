"""The per-item errors that RegisterBackendSelect.cpp's and the functionalization files' families defer
(codegen/files/deferred.py): kept as plain values in the contributions memo, raised as PlanError when the file is
built, the first in the file's order, with the message the generator failed with; the same from a warm memo."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from opgen_lsp.cache.store import Cache
from opgen_lsp.codegen.files import backend_select, functionalization
from opgen_lsp.codegen.files.context import GenContext, GenerateOptions
from opgen_lsp.codegen.files.deferred import computed, failed, values
from opgen_lsp.codegen.generate import Memo, load_context
from opgen_lsp.codegen.plan import PlanError
from opgen_lsp.pieces.dest.backend_select import BackendSelectError
from opgen_lsp.pieces.dest.functionalization import FunctionalizationError
from opgen_lsp.releases import DEFAULT

ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"


def test_values_in_order_and_the_first_failure_raised() -> None:
    assert values([computed(["a"]), computed(None), computed(("b", "c"))]) == [["a"], None, ("b", "c")]
    with pytest.raises(PlanError) as raised:
        values([computed(1), failed(ValueError("first")), failed(ValueError("second"))])
    assert str(raised.value) == "first"


def test_the_encoding_survives_marshal() -> None:
    found = [computed(None), computed(("#include <x>", "kernel", "registration")), computed(["line"]),
             failed(FunctionalizationError("no inverse"))]
    again = marshal.loads(marshal.dumps(found))
    assert again == found
    assert values(again[:3]) == values(found[:3])
    with pytest.raises(PlanError, match="^no inverse$"):
        values(again)


def _context(cache: Path) -> GenContext:
    ctx = load_context(GenerateOptions(source_path=str(ATEN), release=DEFAULT),
                       Memo(Cache(str(cache)), "the constants of this test", lambda: True))
    assert ctx.contributions is not None
    return ctx


def test_a_backend_select_error_is_raised_by_the_file_and_kept_by_the_memo(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def refuse(f, spelling):  # the samples' BackendSelect ops: make_ramp, rand_ramp
        calls.append(f.root_name)
        raise BackendSelectError(f"refused {f.root_name}")
    monkeypatch.setattr(backend_select, "compute_backend_select_definition", refuse)
    ctx = _context(tmp_path)
    key = ctx.values_key("RegisterBackendSelect.cpp", backend_select.backend_select_part(ctx))
    assert key is not None and key()  # keying the file computes the pieces and raises nothing
    with pytest.raises(PlanError, match="^refused make_ramp$"):
        backend_select.register_backend_select_cpp(ctx)
    assert ctx.contributions is not None
    ctx.contributions.save()
    computed_once = list(calls)
    with pytest.raises(PlanError, match="^refused make_ramp$"):  # read back from the memo, not computed again
        backend_select.register_backend_select_cpp(_context(tmp_path))
    assert calls == computed_once == ["make_ramp", "rand_ramp"]


def test_a_view_group_error_is_raised_by_the_file_and_kept_by_the_memo(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def refuse(g, release):  # the samples' view groups: fold_view, split_even
        calls.append(g.root_name)
        raise FunctionalizationError(f"no inverse of {g.root_name}")
    monkeypatch.setattr(functionalization, "compute_view_inverse_declaration", refuse)
    ctx = _context(tmp_path)
    key = ctx.values_key("FunctionalInverses.h", functionalization.functional_inverses_part(ctx))
    assert key is not None and key()
    with pytest.raises(PlanError, match="^no inverse of fold_view$"):
        functionalization.functional_inverses_h(ctx)
    assert ctx.contributions is not None
    ctx.contributions.save()
    computed_once = list(calls)
    with pytest.raises(PlanError, match="^no inverse of fold_view$"):
        functionalization.functional_inverses_h(_context(tmp_path))
    assert calls == computed_once == ["fold_view", "split_even"]
