"""The enums and C++ template types declared member by member keep what the generated ones had."""

from __future__ import annotations

from opgen_lsp.model import dispatch as dk
from opgen_lsp.model.dispatch import DispatchKey
from opgen_lsp.model.native_function import ScalarType
from opgen_lsp.model.schema import BaseTy
from opgen_lsp.pieces.api.types import (
    ArrayRefCType,
    ConstRefCType,
    ListCType,
    OptionalCType,
    VectorCType,
    VectorizedCType,
    longT,
    tensorT,
)
from opgen_lsp.releases.profile import C10_OPTIONAL, STD_OPTIONAL


def test_per_backend_keys_are_each_functionality_times_each_backend_at_the_end() -> None:
    expected = [f + b for f in dk.FUNCTIONALITY_KEYS for b in dk.BACKEND_COMPONENTS]
    names = [k.name for k in DispatchKey]
    assert names[-len(expected):] == expected
    assert dk.ALL_KEY_NAMES == tuple(names)


def test_members_hash_by_identity_and_print_their_name() -> None:
    for enum in (DispatchKey, BaseTy, ScalarType):
        for member in enum:
            assert hash(member) == object.__hash__(member)
    assert str(DispatchKey.CompositeExplicitAutograd) == "CompositeExplicitAutograd"
    assert dk.K["CPU"] is DispatchKey.CPU


def test_template_types_print_their_template_and_differ_by_class() -> None:
    ref = ConstRefCType(tensorT)
    printed = {cls: cls(ref).cpp_type(STD_OPTIONAL) for cls in (OptionalCType, VectorCType, ListCType, ArrayRefCType,
                                                                 VectorizedCType)}
    assert printed == {
        OptionalCType: "::std::optional<const at::Tensor &>",
        VectorCType: "::std::vector<const at::Tensor &>",
        ListCType: "c10::List<const at::Tensor &>",
        ArrayRefCType: "at::ArrayRef<const at::Tensor &>",
        VectorizedCType: "at::vec::Vectorized<const at::Tensor &>",
    }
    # The optional is the release's: c10's before torch 2.4 (Release.cpp_spelling).
    assert OptionalCType(ref).cpp_type(C10_OPTIONAL) == "c10::optional<const at::Tensor &>"
    assert OptionalCType(longT) != VectorCType(longT)
    assert OptionalCType(longT) == OptionalCType(longT)
    assert hash(OptionalCType(longT)) == hash(OptionalCType(longT))
    stripped = OptionalCType(ref).remove_const_ref()
    assert type(stripped) is OptionalCType and stripped.elem == tensorT
    assert repr(ListCType(longT)) == "ListCType(elem=BaseCType(name='int64_t'))"
