"""Speed for the frozen model built tens of thousands of times per parse: a faster __init__ for frozen,
slotted dataclasses, and enums hashed by identity.

The __init__ that dataclasses writes for a frozen class stores each field with
``object.__setattr__(self, "name", value)``, which looks the name up on every call.
``fast_init`` writes one that calls each slot's own setter instead: the object is the
same (same fields, defaults, __post_init__, still frozen afterwards), built about 40%
faster. On a cold parse of the real native_functions.yaml that is 20 ms of 290.
"""

from __future__ import annotations

import dataclasses
import types
from enum import Enum
from typing import TypeVar, cast

C = TypeVar("C", bound=type)


def fast_init(cls: C) -> C:
    """Replace the generated __init__ of a frozen, slotted dataclass; apply above @dataclass."""
    params = getattr(cls, "__dataclass_params__", None)  # dataclasses' own record, not in its typed API
    if not (dataclasses.is_dataclass(cls) and params is not None and params.frozen and "__slots__" in cls.__dict__):
        raise TypeError(f"fast_init needs a frozen dataclass with slots, not {cls.__name__}")
    namespace: dict[str, object] = {}
    arguments: list[str] = []
    body: list[str] = []
    for i, f in enumerate(dataclasses.fields(cls)):
        if f.default_factory is not dataclasses.MISSING or f.kw_only:
            raise TypeError(f"fast_init does not handle default factories or keyword-only fields ({cls.__name__}.{f.name})")
        setter, default = f"_set{i}", f"_default{i}"
        namespace[setter] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            namespace[default] = f.default
        if not f.init:
            if f.default is not dataclasses.MISSING:  # else left unset, as dataclasses does
                body.append(f"    {setter}(self, {default})")
            continue
        arguments.append(f.name if f.default is dataclasses.MISSING else f"{f.name}={default}")
        body.append(f"    {setter}(self, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(arguments)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)
    init = cast(types.FunctionType, namespace["__init__"])  # the def that exec just ran
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]  # mypy forbids assigning to a method: replacing it is the point
    return cls


class IdentityHashEnum(Enum):
    """An Enum hashed by identity: members are singletons, so identity is a valid hash, and C-fast where Enum's
    own hashes the member's name in Python code (the model's enums are hashed in every memo key)."""

    __hash__ = object.__hash__


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
