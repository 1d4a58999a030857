"""Translate the arguments of one calling convention into the arguments of another.

Given the bindings in scope (say a C++ API signature) and the goals (say the
dispatcher's parameters), find a C++ expression for every goal, by the same
rules as torchgen.api.translate: exact matches first, then reference
adjustments, then the conversions between TensorOptions, SymInt and int
arrays, optional references, and so on.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NoReturn

from ...frozen import PER_TEXT_MEMO
from ...releases.profile import CppSpelling
from .types import (
    ArrayRefCType,
    Binding,
    ConstRefCType,
    Expr,
    ListCType,
    MutRefCType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    SymIntT,
    VectorCType,
    boolT,
    deviceT,
    intArrayRefT,
    iOptTensorListRefT,
    layoutT,
    longT,
    memoryFormatT,
    opmath_t,
    optionalIntArrayRefT,
    optionalScalarRefT,
    optionalSymIntArrayRefT,
    optionalTensorRefT,
    scalar_t,
    scalarT,
    scalarTypeT,
    symIntArrayRefT,
    tensorOptionsT,
    tensorT,
)

OPTIONS = NamedCType("options", ConstRefCType(tensorOptionsT))
OUT_TENSOR = NamedCType("out", ConstRefCType(tensorT))


class UnsatError(RuntimeError):
    """No expression for a goal can be built from the bindings in scope."""


_OPTIONAL_TENSOR_REF = ConstRefCType(OptionalCType(tensorT))
_SCALAR_REF = ConstRefCType(scalarT)
_OPTIONAL_SCALAR_REF = ConstRefCType(OptionalCType(scalarT))
_OPTIONAL_TENSOR_LIST_REF = ConstRefCType(ListCType(OptionalCType(tensorT)))


def _context(bindings: Sequence[Expr], method: bool) -> dict[NamedCType, str]:
    ctx: dict[NamedCType, str] = {}
    for b in bindings:
        ctx[b.type] = b.expr
        t = b.type.type
        name = b.type.name
        if t == _OPTIONAL_TENSOR_REF:
            ctx[NamedCType(name, ConstRefCType(tensorT))] = f"({b.expr}.has_value() ? *{b.expr} : at::Tensor())"
            ctx[NamedCType(name, optionalTensorRefT)] = (
                f"(({b.expr}.has_value() && (*{b.expr}).defined()) ? at::OptionalTensorRef(*{b.expr}) : "
                "at::OptionalTensorRef())")
        elif t == _SCALAR_REF:
            ctx[NamedCType(name, opmath_t)] = f"({b.expr}).to<opmath_t>()"
        elif t == _OPTIONAL_SCALAR_REF:
            ctx[NamedCType(name, optionalScalarRefT)] = (
                f"({b.expr}.has_value() ? at::OptionalScalarRef(&({b.expr}.value())) : at::OptionalScalarRef())")
        elif t == scalar_t:
            ctx[NamedCType(name, opmath_t)] = f"static_cast<opmath_t>({b.expr})"
        elif t == _OPTIONAL_TENSOR_LIST_REF:
            ctx[NamedCType(name, iOptTensorListRefT)] = f"at::IOptTensorListRef({b.expr})"
    if method:
        ctx[NamedCType("self", MutRefCType(tensorT))] = "const_cast<Tensor&>(*this)"
        ctx[NamedCType("self", ConstRefCType(tensorT))] = "const_cast<Tensor&>(*this)"
    return ctx


def translate(bindings: Sequence[Expr | Binding], goals: Sequence[NamedCType | Binding], *, spelling: CppSpelling,
              method: bool = False, allow_expensive_conversions: bool = False) -> list[Expr]:
    """An expression for each goal (raises UnsatError), its conversions spelled as the release does. Memoized:
    the same pairs of conventions recur for an op under every dispatch key and file family."""
    return list(_translate(tuple(bindings), tuple(goals), spelling, method, allow_expensive_conversions))


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per pair of signatures: frozen.PER_TEXT_MEMO says why the bound fits
def _translate(bindings: tuple[Expr | Binding, ...], goals: tuple[NamedCType | Binding, ...], spelling: CppSpelling,
               method: bool, allow_expensive_conversions: bool) -> tuple[Expr, ...]:
    return tuple(_solve_all(bindings, goals, spelling, method=method,
                            allow_expensive_conversions=allow_expensive_conversions))


def _solve_all(bindings: Sequence[Expr | Binding], goals: Sequence[NamedCType | Binding], spelling: CppSpelling, *,
               method: bool, allow_expensive_conversions: bool) -> list[Expr]:
    exprs = [Expr(b.name, b.nctype) if isinstance(b, Binding) else b for b in bindings]
    goal_types = [g.nctype if isinstance(g, Binding) else g for g in goals]
    solver = _Solver(_context(exprs, method), goal_types, spelling, allow_expensive_conversions)
    return [Expr(solver.solve(g, direct=False), g) for g in goal_types]


class _Solver:
    """Builds an expression for a goal from the context, trying torchgen's rules in its order."""

    def __init__(self, ctx: dict[NamedCType, str], goals: list[NamedCType], spelling: CppSpelling,
                 allow_expensive_conversions: bool) -> None:
        self.ctx = ctx
        self.goals = goals
        self.spelling = spelling
        self._make, self._nullopt = spelling.make_optional(), spelling.nullopt()
        self.allow_expensive_conversions = allow_expensive_conversions

    def solve(self, goal: NamedCType, *, direct: bool) -> str:
        found = self.ctx.get(goal)
        if found is not None:
            return found
        t = goal.type
        if isinstance(t, ConstRefCType):
            r = self.attempt(NamedCType(goal.name, MutRefCType(t.elem)), direct=direct)
            if r is not None:
                return r
        if isinstance(t, MutRefCType):
            r = self.attempt(NamedCType(goal.name, t.elem), direct=direct)
            if r is not None:
                return r
        if t == ArrayRefCType(longT):
            return self.solve(NamedCType(goal.name, intArrayRefT), direct=direct)
        if direct:
            _unsat(goal, self.spelling)
        return self.indirect(goal)

    def attempt(self, goal: NamedCType, *, direct: bool) -> str | None:
        try:
            return self.solve(goal, direct=direct)
        except UnsatError:
            return None

    def direct(self, goal: NamedCType) -> str:
        return self.solve(goal, direct=True)

    def indirect(self, goal: NamedCType) -> str:
        """A conversion from other bindings: each family of rules answers None when the goal is none of its."""
        found = self.tensor_options(goal)
        if found is None:
            found = self.int_conversion(goal)
        if found is None and self.allow_expensive_conversions:
            found = self.expensive_conversion(goal)
        if found is not None:
            return found
        if goal.type == MutRefCType(tensorT):
            return f"const_cast<Tensor&>({self.direct(NamedCType(goal.name, ConstRefCType(tensorT)))})"
        _unsat(goal, self.spelling)

    def from_options_or_out(self, options_expr: str, out_expr: str) -> str:
        r = self.attempt(OPTIONS, direct=True)
        if r is not None:
            return options_expr.format(r)
        return out_expr.format(self.direct(OUT_TENSOR))

    def tensor_options(self, goal: NamedCType) -> str | None:
        """TensorOptions and its pieces (dtype, layout, device, pin_memory), and memory_format next to it."""
        direct = self.direct
        if goal == NamedCType("memory_format", OptionalCType(memoryFormatT)):
            memory_format = direct(NamedCType(SpecialArgName.possibly_redundant_memory_format, OptionalCType(memoryFormatT)))
            if OPTIONS in self.goals:
                return memory_format
            options = self.attempt(OPTIONS, direct=True)
            if options is None:
                return memory_format
            return f"c10::impl::check_tensor_options_and_extract_memory_format({options}, {memory_format})"
        if goal == NamedCType("options", tensorOptionsT):
            dtype = direct(NamedCType("dtype", OptionalCType(scalarTypeT)))
            pin_memory = direct(NamedCType("pin_memory", OptionalCType(boolT)))
            device = direct(NamedCType("device", OptionalCType(deviceT)))
            layout = direct(NamedCType("layout", OptionalCType(layoutT)))
            return f"TensorOptions().dtype({dtype}).layout({layout}).device({device}).pinned_memory({pin_memory})"
        if goal == NamedCType("dtype", OptionalCType(scalarTypeT)):
            return self.from_options_or_out(self.spelling.dtype_of_options + "({}.dtype_opt())", "{}.scalar_type()")
        if goal == NamedCType("layout", OptionalCType(layoutT)):
            return self.from_options_or_out("{}.layout_opt()", "{}.layout()")
        if goal == NamedCType("device", OptionalCType(deviceT)):
            return self.from_options_or_out("{}.device_opt()", "{}.device()")
        if goal == NamedCType("pin_memory", OptionalCType(boolT)):
            return self.from_options_or_out("{}.pinned_memory_opt()", self.spelling.nullopt())
        return None

    def int_conversion(self, goal: NamedCType) -> str | None:
        """Between int and SymInt (arrays, optionals), and to the optional reference types."""
        name, t, direct = goal.name, goal.type, self.direct
        if t == intArrayRefT:
            r = self.attempt(NamedCType(name, VectorCType(longT)), direct=True)
            if r is not None:
                return r
            return f"{self.spelling.int_array_of_symints}({direct(NamedCType(name, symIntArrayRefT))})"
        if t == symIntArrayRefT:
            r = self.attempt(NamedCType(name, intArrayRefT), direct=True)
            if r is not None:
                return f"{self.spelling.symints_of_int_array}({r})"
            return direct(NamedCType(name, VectorCType(SymIntT)))
        if t == SymIntT:
            return direct(NamedCType(name, longT))
        if t == OptionalCType(SymIntT):
            arg = direct(NamedCType(name, OptionalCType(longT)))
            return f"{arg}.has_value() ? {self._make}(c10::SymInt(*{arg})) : {self._nullopt}"
        if t == longT:
            return f"{direct(NamedCType(name, SymIntT))}.{self.spelling.int_of_symint}"
        if t == OptionalCType(longT):
            arg = direct(NamedCType(name, OptionalCType(SymIntT)))
            return f"{arg}.has_value() ? {self._make}({arg}->{self.spelling.int_of_symint}) : {self._nullopt}"
        if t == optionalIntArrayRefT:
            r = self.attempt(NamedCType(name, OptionalCType(VectorCType(longT))), direct=True)
            if r is not None:
                return r
            arg = direct(NamedCType(name, optionalSymIntArrayRefT))
            return f"{arg}.has_value() ? {self._make}({self.spelling.int_array_of_symints}(*{arg})) : {self._nullopt}"
        if t == optionalSymIntArrayRefT:
            arg = direct(NamedCType(name, optionalIntArrayRefT))
            return f"{arg}.has_value() ? {self._make}({self.spelling.symints_of_int_array}(*{arg})) : {self._nullopt}"
        if t == optionalScalarRefT:
            return direct(NamedCType(name, OptionalCType(scalarT)))
        if t == optionalTensorRefT:
            return direct(NamedCType(name, OptionalCType(tensorT)))
        return None

    def expensive_conversion(self, goal: NamedCType) -> str | None:
        """Copies into owning types (vectors, optionals), when the caller allows them."""
        name, t, direct = goal.name, goal.type, self.direct
        if t == VectorCType(longT):
            return f"{direct(NamedCType(name, intArrayRefT))}.vec()"
        if t == VectorCType(SymIntT):
            return f"{direct(NamedCType(name, symIntArrayRefT))}.vec()"
        # Owning types that hold tensors by value (torch 2.14 on) copy them from the references.
        if t == tensorT:
            return direct(NamedCType(name, ConstRefCType(tensorT)))
        if t == OptionalCType(tensorT) and NamedCType(name, ConstRefCType(t)) in self.ctx:
            return direct(NamedCType(name, ConstRefCType(t)))
        if t == OptionalCType(VectorCType(longT)):
            arg = direct(NamedCType(name, optionalIntArrayRefT))
            return f"{arg}.has_value() ? {self._make}({arg}->vec()) : {self._nullopt}"
        if t == OptionalCType(scalarT):
            arg = direct(NamedCType(name, optionalScalarRefT))
            return f"{arg}.has_value() ? {self._make}({arg}) : {self._nullopt}"
        if t == OptionalCType(tensorT):
            arg = direct(NamedCType(name, optionalTensorRefT))
            return f"{arg}.has_value() ? {self._make}({arg}) : {self._nullopt}"
        return None


def _unsat(goal: NamedCType, spelling: CppSpelling) -> NoReturn:
    raise UnsatError(f"cannot build '{goal.cpp_type(spelling)} {goal.name}' from the arguments in scope")
