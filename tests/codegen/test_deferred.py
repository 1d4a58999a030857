"""The per-item errors that RegisterBackendSelect.cpp's and the functionalization files' families defer
(codegen/files/deferred.py): kept as plain values in the contributions memo, raised as PlanError when the file is
built, the first in the file's order, with the message the generator failed with; the same from a warm memo."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any, NoReturn

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


# A file of each family: the module, the piece it computes per item (patched to fail), its error, the family's
# part, the file's environment, and the items (the samples' BackendSelect ops, view groups) in the file's order.
FAMILIES = {
    "RegisterBackendSelect.cpp": (backend_select, "compute_backend_select_definition", BackendSelectError,
                                  backend_select.backend_select_part, backend_select.register_backend_select_cpp,
                                  ["make_ramp", "rand_ramp"]),
    "FunctionalInverses.h": (functionalization, "compute_view_inverse_declaration", FunctionalizationError,
                             functionalization.functional_inverses_part, functionalization.functional_inverses_h,
                             ["fold_view", "split_even"]),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_an_items_error_is_raised_by_the_file_and_kept_by_the_memo(name: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    module, piece, error, part, environment, items = FAMILIES[name]
    calls: list[str] = []

    def refuse(item: Any, _: object) -> NoReturn:
        calls.append(item.root_name)
        raise error(f"refused {item.root_name}")
    monkeypatch.setattr(module, piece, refuse)
    ctx = _context(tmp_path)
    key = ctx.values_key(name, part(ctx))
    assert key is not None and key()  # keying the file computes every item's piece and raises nothing
    assert calls == items
    with pytest.raises(PlanError, match=f"^refused {items[0]}$"):  # building it raises the first item's error
        environment(ctx)
    assert ctx.contributions is not None
    ctx.contributions.save()
    with pytest.raises(PlanError, match=f"^refused {items[0]}$"):  # the same, read back from the memo
        environment(_context(tmp_path))
    assert calls == items  # (not computed again)
