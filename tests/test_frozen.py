"""fast_init builds the same objects as the __init__ dataclasses writes; IdentityHashEnum members hash by identity."""

from __future__ import annotations

import dataclasses
import pickle
from enum import auto

import pytest

from opgen_lsp.frozen import IdentityHashEnum, fast_init
from opgen_lsp.model.dispatch import DispatchKey
from opgen_lsp.model.native_function import DeviceCheckType, NativeFunction, ScalarType, UfuncKey, Variant, ViewSchemaKind
from opgen_lsp.model.schema import Argument, BaseTy, SchemaKind


def _record(decorate):
    """The same frozen record twice: with the __init__ dataclasses writes, and with fast_init's."""
    @dataclasses.dataclass(frozen=True, slots=True)
    class Record:
        a: int
        b: str = "b"
        c: tuple = dataclasses.field(default=(), compare=False)
        d: object = dataclasses.field(init=False, default=None)
        e: int = dataclasses.field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "e", self.a * 2)

    return decorate(Record)


Plain = _record(lambda cls: cls)
Quick = _record(fast_init)


def _values(obj: object) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, "x"), {}), ((1,), {"c": (3,)}), ((), {"a": 4, "b": "y"})])
def test_same_fields_defaults_and_post_init(args, kwargs):
    assert _values(Quick(*args, **kwargs)) == _values(Plain(*args, **kwargs))


def test_still_frozen_hashable_and_replaceable():
    q = Quick(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.a = 2  # type: ignore[misc]
    assert hash(q) == hash(Quick(1)) and q == Quick(1, c=(9,))
    assert _values(dataclasses.replace(q, b="z")) == _values(Plain(1, "z"))


@pytest.mark.parametrize("args, kwargs", [((), {}), ((1, 2, 3, 4), {}), ((1,), {"d": 1}), ((1,), {"zz": 1})])
def test_bad_calls_fail_as_before(args, kwargs):
    with pytest.raises(TypeError):
        Plain(*args, **kwargs)
    with pytest.raises(TypeError):
        Quick(*args, **kwargs)


def test_refuses_what_it_does_not_handle():
    with pytest.raises(TypeError):
        fast_init(dataclasses.dataclass(frozen=True)(type("NoSlots", (), {"__annotations__": {"a": int}})))
    with pytest.raises(TypeError):
        fast_init(dataclasses.make_dataclass("Factory", [("a", list, dataclasses.field(default_factory=list))],
                                             frozen=True, slots=True))


@pytest.mark.parametrize("cls", [NativeFunction, Argument])
def test_model_classes_use_it(cls):
    assert "_set0" in cls.__init__.__globals__


class Colour(IdentityHashEnum):
    red = auto()
    green = auto()


def test_identity_hash_keeps_enum_behaviour():
    assert hash(Colour.red) == object.__hash__(Colour.red) != hash(Colour.green)
    assert list(Colour) == [Colour.red, Colour.green] and Colour["green"] is Colour(2) is Colour.green
    assert {Colour.red: 1}[Colour.red] == 1 and pickle.loads(pickle.dumps(Colour.green)) is Colour.green


@pytest.mark.parametrize("cls", [DispatchKey, BaseTy, SchemaKind, Variant, DeviceCheckType, UfuncKey, ScalarType,
                                 ViewSchemaKind])
def test_model_enums_hash_by_identity(cls):
    member = next(iter(cls))
    assert issubclass(cls, IdentityHashEnum) and hash(member) == object.__hash__(member)
