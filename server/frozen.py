"""Speed for the frozen model: records (frozen, slotted dataclasses) made and built fast, enums hashed by identity,
and NamedTuples built in C (``new_tuple``).

``@record`` makes the class ``@dataclass(frozen=True, slots=True)`` would: the same fields (``dataclasses.fields``,
``replace`` and ``asdict`` work), ``__init__`` with the same signature and ``__post_init__``, ``__repr__``,
``__eq__``, ``__hash__``, frozen assignment, pickling and ``__match_args__``, and a method the class defines itself is
kept, as dataclasses keeps it. Two things make it faster:

- Making the class: dataclasses compiles each of its six methods with its own exec and builds the class twice, and
  the 76 records a check imports spent about 30 ms there; one exec and one class build take a third of that.
- Building objects: the ``__init__`` stores each field through its slot's own setter, where the one dataclasses
  writes calls ``object.__setattr__(self, "name", value)``, which looks the name up on every call: about 40%
  faster, 20 ms of a cold parse of the real native_functions.yaml.

What records do not use is refused when the class is made: keyword-only fields and InitVar.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from enum import Enum
from typing import Any, ClassVar, TypeVar, dataclass_transform, get_origin

C = TypeVar("C", bound=type)

# dataclasses' own marks: the sentinel of the fields `fields()` and `replace()` see, and the options a dataclass
# subclass checks its bases against (the test of records holds both to what dataclasses makes).
_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]
_PARAMS = dataclasses._DataclassParams(init=True, repr=True, eq=True, order=False, unsafe_hash=False,  # type: ignore[attr-defined]
                                       frozen=True)


class _Factory:
    """The default of a field with a default factory in the signature, shown as dataclasses shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _is_class_var(annotation: object) -> bool:
    if isinstance(annotation, str):  # (from __future__ import annotations)
        head = annotation.partition("[")[0].strip()
        return head in ("ClassVar", "typing.ClassVar")
    return annotation is ClassVar or get_origin(annotation) is ClassVar


def _own_fields(cls: type) -> list[dataclasses.Field[Any]]:
    out = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        if isinstance(annotation, str) and annotation.partition("[")[0].strip() in ("InitVar", "dataclasses.InitVar",
                                                                                    "KW_ONLY", "dataclasses.KW_ONLY"):
            raise TypeError(f"record does not handle InitVar or KW_ONLY ({cls.__name__}.{name})")
        value = cls.__dict__.get(name, dataclasses.MISSING)
        f = value if isinstance(value, dataclasses.Field) else dataclasses.field(default=value)
        if f.kw_only is True:
            raise TypeError(f"record does not handle keyword-only fields ({cls.__name__}.{name})")
        if f.default is not dataclasses.MISSING and type(f.default).__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        f.name, f.type, f.kw_only = name, annotation, False
        f._field_type = _FIELD  # type: ignore[union-attr]
        out.append(f)
    return out


def _inherited_slots(cls: type) -> set[str]:
    out: set[str] = set()
    for base in cls.__mro__[1:-1]:
        slots = base.__dict__.get("__slots__", ())
        out.update((slots,) if isinstance(slots, str) else slots)
    return out


def _tuple_of(who: str, names: list[str]) -> str:
    return "(" + "".join(f"{who}.{n}," for n in names) + ")"


def _methods_source(fields: list[dataclasses.Field[Any]], has_post_init: bool) -> str:
    """The source of the methods dataclasses writes for a frozen class that are hot (building, comparing and hashing
    objects), all in one; a field's setter is _set<i>, its default _d<i>, its default factory _f<i>. The others are
    made without compiling anything (_cold_methods): compiling them took two thirds of making a record."""
    arguments, body = [], []
    for i, f in enumerate(fields):
        factory = f.default_factory is not dataclasses.MISSING
        value = f"_f{i}()" if factory else f"_d{i}" if f.default is not dataclasses.MISSING else None
        if f.init:
            arguments.append(f.name if value is None else f"{f.name}=_FACTORY" if factory else f"{f.name}=_d{i}")
            body.append(f"    _set{i}(self, {value} if {f.name} is _FACTORY else {f.name})" if factory
                        else f"    _set{i}(self, {f.name})")
        elif value is not None:  # (a field with neither init nor default is left unset, as dataclasses leaves it)
            body.append(f"    _set{i}(self, {value})")
    if has_post_init:
        body.append("    self.__post_init__()")
    compared = [f.name for f in fields if f.compare]
    hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
    return "\n".join([
        f"def __init__(self, {', '.join(arguments)}):", *(body or ["    pass"]),
        "def __eq__(self, other):", "    if other.__class__ is self.__class__:",
        f"        return {_tuple_of('self', compared)} == {_tuple_of('other', compared)}", "    return NotImplemented",
        "def __hash__(self):", f"    return hash({_tuple_of('self', hashed)})",
    ])


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _cold_methods(fields: list[dataclasses.Field[Any]], setters: list[Any]) -> dict[str, types.FunctionType]:
    """__repr__, __getstate__ and __setstate__ as dataclasses writes them, as closures over the fields."""
    names = tuple(f.name for f in fields)
    shown = tuple(f.name for f in fields if f.repr)

    def __repr__(self: object) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

    def __getstate__(self: object) -> list[object]:
        return [getattr(self, n) for n in names]

    def __setstate__(self: object, state: list[object]) -> None:
        for setter, value in zip(setters, state):
            setter(self, value)

    return {"__repr__": __repr__, "__getstate__": __getstate__, "__setstate__": __setstate__,  # type: ignore[dict-item]
            "__setattr__": _frozen_setattr, "__delattr__": _frozen_delattr}  # type: ignore[dict-item]


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: C) -> C:
    """``@dataclass(frozen=True, slots=True)``, made and built faster (see the module's docstring)."""
    inherited: dict[str, dataclasses.Field[Any]] = {}
    for base in reversed(cls.__mro__[1:]):
        inherited.update(base.__dict__.get("__dataclass_fields__", {}))
    own = _own_fields(cls)
    by_name = inherited | {f.name: f for f in own}
    fields = list(by_name.values())
    defaulted = False
    for f in fields:
        if f.init and (f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING):
            defaulted = True
        elif f.init and defaulted:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    namespace = dict(cls.__dict__)
    for f in own:
        namespace.pop(f.name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    inherited_slots = _inherited_slots(cls)
    namespace["__slots__"] = tuple(f.name for f in fields if f.name not in inherited_slots)
    namespace["__dataclass_fields__"] = by_name
    namespace["__dataclass_params__"] = _PARAMS
    namespace["__match_args__"] = tuple(f.name for f in fields if f.init)
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__  # (a type's own attribute, not in its namespace)
    scope: dict[str, object] = {"_FACTORY": _FACTORY}
    setters = []
    for i, f in enumerate(fields):
        slot = getattr(made, f.name)  # the slot's member descriptor, in this class or a base
        if not isinstance(slot, types.MemberDescriptorType):
            raise TypeError(f"record needs every field in a slot; {cls.__name__}.{f.name} has none (a base that is "
                            "not a record?)")
        scope[f"_set{i}"] = slot.__set__
        setters.append(slot.__set__)
        scope[f"_d{i}"] = f.default
        scope[f"_f{i}"] = f.default_factory
    exec(_methods_source(fields, hasattr(made, "__post_init__")), scope)
    scope.update(_cold_methods(fields, setters))
    own_hash = cls.__dict__.get("__hash__")
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__getstate__",
                 "__setstate__"):
        if name in cls.__dict__ and not (name == "__hash__" and own_hash is None):  # kept, as dataclasses keeps it
            continue
        method = scope[name]
        assert isinstance(method, types.FunctionType)  # (defined by the exec above, or _cold_methods)
        if name in ("__setattr__", "__delattr__"):  # (shared by every record: named as they are)
            setattr(made, name, method)
            continue
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        if name == "__init__":  # (the signature shows the fields' types, as dataclasses' does)
            method.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
        setattr(made, name, method)
    return made


class IdentityHashEnum(Enum):
    """An Enum hashed by identity: members are singletons, so identity is a valid hash, and C-fast where Enum's
    own hashes the member's name in Python code (the model's enums are hashed in every memo key)."""

    __hash__ = object.__hash__


# new_tuple(Cls, (field, ...)) builds a NamedTuple without Cls.__new__, which is Python code: the hot paths of a parse
# (every scalar, argument, entry) build theirs this way, at about half the cost.
new_tuple = tuple.__new__


# Bounds of the module-level memos of pure functions of frozen values (functools.lru_cache). They are shared by
# every document, check and generation of the process, so they hold values, never a document's state, and a bound
# keeps a long session (many documents, fuzzed input) from growing them for ever.
# A memo with an entry per operator or group of a native_functions.yaml: the real file has about 2,600 functions
# (about 3,700 with the out= variants torchgen generates) and 1,700 groups; 8,192 holds two releases' worth, so a
# generation never evicts what it will ask again, and an edited op's stale entry ages out.
PER_OP_MEMO = 1 << 13
# A memo keyed by a piece of schema text (a type, an argument, an argument or return list, a func: string): the real
# file has about 2,600 func: strings and fewer distinct pieces; 16,384 holds several releases' worth.
PER_TEXT_MEMO = 1 << 14
# A memo with an entry per operator and dispatch key (or backend): a generation asks each op for the keys that have
# a kernel for it, about four on average over the real file's ops.
PER_OP_AND_KEY_MEMO = 1 << 15


def clear_memos(package: str = __name__.rpartition(".")[0]) -> int:
    """Empty every memo (``lru_cache``) at module level in ``package``'s modules loaded so far; the entries cleared.

    They are pure, so emptying them costs only a recomputation. A server calls it when its last document is closed:
    the memos' entries (parsed schemas, C++ strings, kernel readings of the first documents opened) would otherwise
    outlive every document, and pin the allocator's arenas they share with what the documents freed (issue 27).
    """
    cleared = 0
    prefix = package + "."
    for name, module in list(sys.modules.items()):  # (list(): another thread may import meanwhile)
        if module is None or not (name == package or name.startswith(prefix)):
            continue
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) == name and callable(getattr(value, "cache_clear", None)) \
                    and callable(getattr(value, "cache_info", None)):
                cleared += value.cache_info().currsize
                value.cache_clear()
    return cleared
