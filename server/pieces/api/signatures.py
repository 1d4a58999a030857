"""Signatures of one operator in each calling convention, rendered as C++ declarations."""

from __future__ import annotations

import functools

from ...frozen import PER_TEXT_MEMO, record
from ...model.native_function import NativeFunction
from ...model.schema import Arguments, FunctionSchema
from ...releases.profile import CppSpelling
from . import cpp, dispatcher, native
from .types import ApiOptions, Binding, CType, Expr


# The bindings of each convention, computed once per schema and switches: every file family asks for
# them again (a wrapper per dispatch key, the C++ API, the redispatch API, ...). Callers get a fresh list.
@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per schema and flags: frozen.PER_TEXT_MEMO says why the bound fits
def _cpp_arguments(args: Arguments, faithful: bool, symint: bool, method: bool, cpp_no_default_args: frozenset[str],
                   options: ApiOptions) -> tuple[Binding, ...]:
    return tuple(cpp.arguments(args, faithful=faithful, symint=symint, method=method,
                               cpp_no_default_args=cpp_no_default_args, options=options))


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per schema and flags: frozen.PER_TEXT_MEMO says why the bound fits
def _dispatcher_arguments(func: FunctionSchema, options: ApiOptions, symint: bool) -> tuple[Binding, ...]:
    return tuple(dispatcher.arguments(func, options=options, symint=symint))


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per schema and flags: frozen.PER_TEXT_MEMO says why the bound fits
def _native_arguments(func: FunctionSchema, symint: bool, options: ApiOptions) -> tuple[Binding, ...]:
    return tuple(native.arguments(func, symint=symint, options=options))


@record
class CppSignature:
    """One overload in the public C++ API (at::op or Tensor::op)."""

    func: FunctionSchema
    method: bool
    # Faithful: schema order, TensorOptions unpacked, named *_outf for out= ops.
    faithful: bool
    symint: bool
    cpp_no_default_args: frozenset[str]
    options: ApiOptions
    # With manual_cpp_binding: the generated binding is offered as __dispatch_<name>.
    fallback_binding: bool = False

    def arguments(self) -> list[Binding]:
        return list(_cpp_arguments(self.func.arguments, self.faithful, self.symint, self.method,
                                   self.cpp_no_default_args, self.options))

    def name(self, *, suppress_symint_suffix: bool = False) -> str:
        n = cpp.name(self.func, faithful_name_for_out_overloads=self.faithful,
                     symint_overload=self.symint and not suppress_symint_suffix)
        return f"__dispatch_{n}" if self.fallback_binding else n

    def returns_type(self) -> CType:
        return cpp.returns_type(self.func.returns, options=self.options, symint=self.symint)

    def decl(self, *, name: str | None = None, prefix: str = "", is_redispatching_fn: bool = False,
             suppress_symint_suffix: bool = False, qualified_memory_format: bool = True) -> str:
        args = [a.decl(qualified_memory_format=qualified_memory_format) for a in self.arguments()]
        if is_redispatching_fn:
            args.insert(0, "c10::DispatchKeySet dispatchKeySet")
        name = name if name is not None else prefix + self.name(suppress_symint_suffix=suppress_symint_suffix)
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name}({', '.join(args)})"

    def defn(self, *, name: str | None = None, prefix: str = "", is_redispatching_fn: bool = False) -> str:
        args = [a.defn() for a in self.arguments()]
        if is_redispatching_fn:
            args.insert(0, "c10::DispatchKeySet dispatchKeySet")
        name = name if name is not None else prefix + self.name()
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name}({', '.join(args)})"

    def type(self) -> str:
        return f"{self.returns_type().cpp_type(self.options.spelling)} ({', '.join(a.type for a in self.arguments())})"


@record
class CppSignatureGroup:
    """All C++ API overloads of one schema: plain, faithful, and their SymInt twins."""

    func: FunctionSchema
    signature: CppSignature
    faithful_signature: CppSignature | None
    symint_signature: CppSignature | None
    symint_faithful_signature: CppSignature | None

    def signatures(self, *, symint: bool = True) -> list[CppSignature]:
        sigs = [self.signature, self.faithful_signature]
        if symint:
            sigs += [self.symint_signature, self.symint_faithful_signature]
        return [s for s in sigs if s is not None]

    def most_faithful_signature(self) -> CppSignature:
        return self.faithful_signature or self.signature

    @staticmethod
    def from_native_function(f: NativeFunction, *, method: bool, spelling: CppSpelling,
                             fallback_binding: bool = False) -> CppSignatureGroup:
        func = f.func
        options = ApiOptions.of(f, spelling)

        def make(faithful: bool, symint: bool) -> CppSignature:
            return CppSignature(func, method, faithful, symint, f.cpp_no_default_args, options, fallback_binding)

        needs_faithful = func.arguments.tensor_options is not None or bool(func.arguments.out)
        has_symint = func.has_symint(returns_too=spelling.symint_returns_follow_signature)
        return CppSignatureGroup(
            func,
            make(False, False),
            make(True, False) if needs_faithful else None,
            make(False, True) if has_symint else None,
            make(True, True) if has_symint and needs_faithful else None,
        )


@record
class DispatcherSignature:
    func: FunctionSchema
    options: ApiOptions
    prefix: str = ""
    symint: bool = True

    def arguments(self) -> list[Binding]:
        return list(_dispatcher_arguments(self.func, self.options, self.symint))

    def name(self) -> str:
        return self.prefix + dispatcher.name(self.func)

    def returns_type(self) -> CType:
        return dispatcher.returns_type(self.func.returns, options=self.options, symint=self.symint)

    def decl(self, name: str | None = None, *, qualified_memory_format: bool = True) -> str:
        args = ", ".join(a.decl(qualified_memory_format=qualified_memory_format) for a in self.arguments())
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name or self.name()}({args})"

    def defn(self, name: str | None = None, *, is_redispatching_fn: bool = False) -> str:
        args = [a.defn() for a in self.arguments()]
        if is_redispatching_fn:
            args.insert(0, "c10::DispatchKeySet dispatchKeySet")
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name or self.name()}({', '.join(args)})"

    def exprs(self) -> list[Expr]:
        return [Expr(a.name, a.nctype) for a in self.arguments()]

    def type(self) -> str:
        return f"{self.returns_type().cpp_type(self.options.spelling)} ({', '.join(a.type for a in self.arguments())})"

    def ptr_type(self) -> str:
        return f"{self.returns_type().cpp_type(self.options.spelling)} (*)({', '.join(a.type for a in self.arguments())})"


@record
class NativeSignature:
    """The signature of an in-tree kernel, at::native::<kernel>."""

    func: FunctionSchema
    symint: bool
    options: ApiOptions
    prefix: str = ""

    def name(self) -> str:
        return self.prefix + native.name(self.func)

    def arguments(self) -> list[Binding]:
        return list(_native_arguments(self.func, self.symint, self.options))

    def returns_type(self) -> CType:
        return native.returns_type(self.func.returns, options=self.options, symint=self.symint)

    def decl(self, name: str | None = None, *, qualified_memory_format: bool = True) -> str:
        args = ", ".join(a.decl(qualified_memory_format=qualified_memory_format) for a in self.arguments())
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name or self.name()}({args})"

    def defn(self, name: str | None = None) -> str:
        args = ", ".join(a.defn() for a in self.arguments())
        return f"{self.returns_type().cpp_type(self.options.spelling)} {name or self.name()}({args})"

    def ptr_type(self) -> str:
        return f"{self.returns_type().cpp_type(self.options.spelling)} (*)({', '.join(a.defn() for a in self.arguments())})"


def dispatcher_signature(f: NativeFunction, *, spelling: CppSpelling, prefix: str = "",
                         symint: bool = True) -> DispatcherSignature:
    return DispatcherSignature(f.func, ApiOptions.of(f, spelling), prefix, symint)
