"""`record` makes the class `dataclass(frozen=True, slots=True)` makes, each class shape the code uses held to it
side by side; IdentityHashEnum members hash by identity."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from enum import auto
from typing import ClassVar, Generic, TypeVar

import pytest

import opgen_lsp
from opgen_lsp.frozen import IdentityHashEnum, record
from opgen_lsp.model.dispatch import DispatchKey
from opgen_lsp.model.native_function import DeviceCheckType, NativeFunction, ScalarType, UfuncKey, Variant, ViewSchemaKind
from opgen_lsp.model.schema import Argument, BaseTy, SchemaKind

T = TypeVar("T")
STANDARD = dataclasses.dataclass(frozen=True, slots=True)


def _plain(decorate):
    class Plain:
        a: int
        b: str = "b"
        c: tuple = dataclasses.field(default=(), compare=False)
        d: object = dataclasses.field(init=False, default=None)
        e: int = dataclasses.field(init=False)
        f: list = dataclasses.field(default_factory=list, repr=False, compare=False)
        g: int = dataclasses.field(default=0, hash=False)
        KIND: ClassVar[str] = "plain"

        def __post_init__(self) -> None:
            object.__setattr__(self, "e", self.a * 2)

    return decorate(Plain)


def _derived(decorate):
    class Base:
        """A base with a method and a field."""

        elem: int
        TEMPLATE: ClassVar[str]

        def show(self) -> str:
            return self.TEMPLATE.format(self.elem)

    class Derived(decorate(Base)):
        TEMPLATE = "<{}>"
        extra: str = "x"

    return decorate(Derived)


def _own_methods(decorate):
    class Own:
        a: int
        b: int = dataclasses.field(default=0, compare=False)

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    return decorate(Own)


def _own_eq(decorate):
    class OwnEq:  # (defining __eq__ sets __hash__ to None: dataclasses still writes one)
        a: int

        def __eq__(self, other: object) -> bool:
            return type(other) is type(self) and self.a % 10 == other.a % 10

    return decorate(OwnEq)


def _generic(decorate):
    class Box(Generic[T]):
        item: T
        count: int = 1

    return decorate(Box)


SHAPES = {
    _plain: [((1,), {}), ((1, "x"), {"c": (3,)}), ((), {"a": 4, "b": "y", "f": [1], "g": 5})],
    _derived: [((1,), {}), ((2, "y"), {})],
    _own_methods: [((1,), {}), ((1, 2), {})],
    _own_eq: [((1,), {})],
    _generic: [(("i",), {}), (("i", 3), {})],
}
CASES = [(shape, args, kwargs) for shape, calls in SHAPES.items() for args, kwargs in calls]


def _fields(cls: type) -> list[tuple]:
    return [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
            for f in dataclasses.fields(cls)]


def _slots(cls: type) -> list[str]:
    return [s for c in cls.__mro__ for s in c.__dict__.get("__slots__", ())]


def _state(obj: object) -> dict:
    return {f.name: getattr(obj, f.name, "<unset>") for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_class_is_the_one_dataclasses_makes(shape):
    ours, theirs = shape(record), shape(STANDARD)
    assert _fields(ours) == _fields(theirs) and _slots(ours) == _slots(theirs)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__match_args__ == theirs.__match_args__
    assert repr(ours.__dataclass_params__) == repr(theirs.__dataclass_params__) and dataclasses.is_dataclass(ours)
    assert not hasattr(ours(*SHAPES[shape][0][0]), "__dict__")


@pytest.mark.parametrize("shape, args, kwargs", CASES)
def test_objects_behave_as_dataclasses_objects(shape, args, kwargs):
    ours, theirs = shape(record), shape(STANDARD)
    mine, other = ours(*args, **kwargs), theirs(*args, **kwargs)
    assert _state(mine) == _state(other)
    assert repr(mine) == repr(other).replace(theirs.__qualname__, ours.__qualname__)
    assert hash(mine) == hash(other) and mine == ours(*args, **kwargs) and mine != other
    assert dataclasses.asdict(mine) == dataclasses.asdict(other)
    changed = dataclasses.replace(mine, a=9) if "a" in ours.__match_args__ else dataclasses.replace(mine)
    assert _state(changed) == _state(dataclasses.replace(other, a=9) if "a" in ours.__match_args__ else other)
    for name in ("a", "zz"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(mine, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(mine, name)


@pytest.mark.parametrize("shape, args, kwargs", CASES)
def test_pickled_and_copied(shape, args, kwargs):
    cls = shape(record)
    cls.__qualname__ = f"_pickled_{cls.__name__}"
    globals()[cls.__qualname__] = cls  # (pickle finds a class by its module and name)
    try:
        obj = cls(*args, **kwargs)
        assert _state(pickle.loads(pickle.dumps(obj))) == _state(obj)
    finally:
        del globals()[cls.__qualname__]


def test_equality_compares_the_compared_fields_of_the_same_class_only():
    plain = _plain(record)
    assert plain(1, c=(1,)) == plain(1, c=(2,)) and plain(1) != plain(2)
    assert _derived(record)(1) != _derived(STANDARD)(1)
    assert _own_methods(record)(1) != _own_methods(record)(2) and hash(_own_methods(record)(1)) == 7
    own_eq = _own_eq(record)
    assert own_eq(1) == own_eq(11) and hash(own_eq(1)) == hash((1,))


@pytest.mark.parametrize("args, kwargs", [((), {}), ((1, 2, 3, 4, 5, 6), {}), ((1,), {"d": 1}), ((1,), {"zz": 1})])
def test_bad_calls_fail_as_before(args, kwargs):
    for decorate in (record, STANDARD):
        with pytest.raises(TypeError):
            _plain(decorate)(*args, **kwargs)


def test_a_dataclass_may_derive_from_a_record():
    base = _plain(record)
    child = dataclasses.dataclass(frozen=True)(type("Child", (base,), {"__annotations__": {"z": int}, "z": 0}))
    assert [f.name for f in dataclasses.fields(child)][-1] == "z" and child(1).e == 2


def test_refuses_what_it_does_not_handle():
    with pytest.raises(TypeError, match="keyword-only"):
        record(type("K", (), {"__annotations__": {"a": int}, "a": dataclasses.field(kw_only=True)}))
    with pytest.raises(TypeError, match="InitVar"):
        record(type("I", (), {"__annotations__": {"a": "InitVar[int]"}}))
    with pytest.raises(TypeError, match="follows default"):
        record(type("O", (), {"__annotations__": {"a": int, "b": int}, "a": 0}))
    with pytest.raises(ValueError, match="mutable default"):
        record(type("M", (), {"__annotations__": {"a": list}, "a": []}))


def _records() -> list[type]:
    out = []
    for info in pkgutil.walk_packages(opgen_lsp.__path__, "opgen_lsp."):
        if info.name.endswith("__main__"):  # (runs the command line)
            continue
        module = importlib.import_module(info.name)
        out += [c for c in vars(module).values()
                if isinstance(c, type) and c.__module__ == info.name and "_set0" in getattr(c.__init__, "__globals__", {})]
    return out


def test_every_record_of_opgen_has_the_signature_dataclasses_gives_its_fields():
    records = _records()
    assert len(records) >= 150 and NativeFunction in records and Argument in records
    for cls in records:
        fields = dataclasses.fields(cls)
        twin = dataclasses.make_dataclass(cls.__name__, [
            (f.name, f.type, dataclasses.field(default=f.default, default_factory=f.default_factory, init=f.init,
                                               repr=f.repr, hash=f.hash, compare=f.compare)) for f in fields],
            frozen=True, slots=True)
        assert str(inspect.signature(cls)) == str(inspect.signature(twin)), cls
        assert cls.__match_args__ == twin.__match_args__ and set(_slots(cls)) >= set(_slots(twin)), cls


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
