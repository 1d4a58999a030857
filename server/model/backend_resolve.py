"""A backend yaml resolved against native_functions.yaml: dispatch keys, kernels, BackendIndex objects.

`resolve_backend` does what the second half of torchgen 2.13's
parse_backend_yaml does (and what gen_backend_stubs' code generation then
asserts), reporting every problem instead of stopping at the first:

- the backend key is parsed only when supported + full_codegen is not empty,
  and must not already have kernels in native_functions.yaml; the autograd key
  `Autograd<backend>` is parsed only when `autograd:` lists ops;
- every op must be declared in native_functions.yaml (generated variants
  included); its kernel is the dispatcher name (`add_out` for `add.out`) plus
  `_symint` when the op is written the same way under `symint:`; external
  kernels are never structured;
- all variants of one op go either to the backend key or to its autograd key;
- a `_symint` kernel needs a SymInt in the schema (checked while generating
  code, so only when supported + full_codegen is not empty);
- with use_out_as_primary false, a variant without a kernel whose functional
  variant has one gets a generated wrapper around the functional kernel;
  torchgen cannot write one for a mutable variant, an in-place variant with
  several returns, or a variant that returns nothing unless it has exactly
  one out argument (checked while generating code too);
- on Meta and CompositeExplicitAutogradNonFunctional the codegen writes the
  kernels of structured ops itself, and refuses one given for their out=
  variant (only reachable with a native_functions.yaml that has no kernels
  for these keys; torchgen's own has, so the key is a duplicate first).

Beyond torchgen it warns about ops listed twice, CompositeImplicitAutograd ops
registered to the backend key (they lose autograd), symint entries that change
nothing, keys that are not backends, and kernels that are never registered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity, diag
from ..releases import Release, migration_note
from ..suggest import did_you_mean
from ..text import Span
from . import dispatch as dk
from .backend import PROPOSAL, BackendYaml, ListedOp
from .native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup
from .native_yaml import NativeFunctions
from .schema import Argument, BaseOperatorName, OperatorName, SchemaKind

# Did-you-mean searches over every op per backend yaml (the rest of its unknown ops are named without one).
WHOLE_POOL_SEARCHES = 200

# torchgen's DispatchKey has one alias opgen's enum leaves out.
_KEY_ALIASES = {"CatchAll": "Undefined"}
# Dispatch keys that are backends (kernels for one kind of device or tensor), beyond the per-backend ones.
_OTHER_BACKEND_KEYS = frozenset(("FPGA", "MAIA", "Vulkan", "Metal", "MkldnnCPU", "OpenGL", "OpenCL", "IDEEP"))
_BACKEND_KEYS = frozenset(f + b for f in dk.FUNCTIONALITY_KEYS if f != "Autograd" for b in dk.BACKEND_COMPONENTS) \
    | _OTHER_BACKEND_KEYS


@dataclass(frozen=True)
class ResolvedBackend:
    """What gen_backend_stubs makes of a backend yaml (torchgen's ParsedExternalYaml), with positions."""

    yaml: BackendYaml
    backend_key: dk.DispatchKey | None
    autograd_key: dk.DispatchKey | None
    # class_name, or its default <backend>NativeFunctions once the key is known.
    class_name: str | None
    # As torchgen builds them: the backend index only when supported + full_codegen lists ops,
    # the autograd index only when autograd does; None also when the key is not a dispatch key.
    backend_index: BackendIndex | None
    autograd_index: BackendIndex | None
    # Kernels by op, for the ops found in native_functions.yaml (even when a key is invalid).
    forward_kernels: dict[OperatorName, BackendMetadata]
    autograd_kernels: dict[OperatorName, BackendMetadata]
    # Every place each known op is listed (supported, full_codegen, autograd, symint, ir_gen), in file order.
    listings: dict[OperatorName, tuple[ListedOp, ...]]


def parse_dispatch_key(value: object) -> dk.DispatchKey | None:
    """torchgen's DispatchKey.parse: an exact member name (aliases included), anything else fails."""
    if not isinstance(value, str):
        return None
    return dk.parse_dispatch_key(_KEY_ALIASES.get(value, value))


class _Resolver:
    def __init__(self, yaml: BackendYaml, native: NativeFunctions, release: Release) -> None:
        self.yaml = yaml
        self.native = native
        self.release = release
        self.diagnostics: list[Diagnostic] = []
        self.functions: dict[OperatorName, NativeFunction] = {op.function.func.name: op.function for op in native.ops}
        self._by_base: dict[str, list[str]] | None = None
        self._all_names: tuple[str, ...] = ()
        # Whole-file searches left: each compares the name with every op (milliseconds), so a yaml of thousands of
        # unknown ops gets suggestions for the first ones only and stays linear in its size.
        self._searches_left = WHOLE_POOL_SEARCHES

    def add(self, code: str, span: Span, message: str, *, warning: bool = False,
            data: tuple[tuple[str, str], ...] = ()) -> None:
        self.diagnostics.append(diag(code, span, message, severity=Severity.WARNING if warning else None, data=data))

    # ------------------------------------------------------------ names

    def suggest(self, name: OperatorName | None, text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Did-you-mean over `name.overload` of every native function (other overloads of the same name first)."""
        if self._by_base is None:
            by_base: dict[str, list[str]] = {}
            for op in self.functions:
                by_base.setdefault(str(op.name), []).append(str(op))
            self._by_base = by_base
        if name is not None and name.name.namespace:
            base = name.name
            bare = OperatorName(BaseOperatorName(base.base, base.inplace, base.dunder_method, base.functional_overload),
                                name.overload_name)
            if bare in self.functions:
                return f"; write it without the namespace: '{bare}'", (("replace", str(bare)),)
        if name is not None and str(name.name) in self._by_base:
            hint, data = did_you_mean(text, self._by_base[str(name.name)])
            if hint:
                return hint, data
            overloads = self._by_base[str(name.name)]
            shown = ", ".join(f"'{o}'" for o in overloads[:6]) + (", ..." if len(overloads) > 6 else "")
            return f"; its overloads are {shown}", ()
        if self._searches_left <= 0:
            return "", ()
        self._searches_left -= 1
        if not self._all_names:
            self._all_names = tuple(o for names in self._by_base.values() for o in names)
        return did_you_mean(text, self._all_names)

    def key(self, generates: bool) -> dk.DispatchKey | None:
        s = self.yaml.backend
        if not s.present or s.is_null:
            return None  # reported while lowering
        key = self.parse_key(s.value)
        where = s.where or self.yaml.anchor
        if key is None:
            shown = s.value if s.kind == "scalar" else f"a {s.kind}"
            data: tuple[tuple[str, str], ...] = ()
            if shown in self.release.dispatch_key_names_unknown:
                hint = f" of {self.release} (a key of later releases)"
            else:
                hint, data = did_you_mean(s.value, dk.ALL_KEY_NAMES) if isinstance(s.value, str) else ("", ())
            message = f"'{shown}' is not a dispatch key{hint} (torchgen: unknown dispatch key {shown})"
            if not generates:
                message += "; torchgen does not check it while no ops are listed under supported or full_codegen"
            self.add("OPG502", where, message, warning=not generates, data=data)
            return None
        if key in self.native.backend_indices:
            message = (f"native_functions.yaml already has kernels for '{key}', so an external backend cannot use "
                       f"this key (torchgen: Duplicate backend key: {key})")
            if key is dk.K.get("XPU"):
                message += ("; XPU is an in-tree backend in this torch: an out-of-tree XPU backend registers to "
                            "'PrivateUse1'")
            if not generates:
                message += "; torchgen does not check it while no ops are listed under supported or full_codegen"
            self.add("OPG510", where, message, warning=not generates)
        elif key.name not in _BACKEND_KEYS:
            self.add("OPG525", where, f"'{s.value}' is a dispatch key but not a backend key; torchgen accepts it, "
                                      "but gen_backend_stubs is meant for backend keys such as XLA, PrivateUse1 or "
                                      "SparsePrivateUse1")
        return key

    def autograd_key(self) -> dk.DispatchKey | None:
        s = self.yaml.backend
        if not self.yaml.autograd or not s.present or s.is_null:
            return None
        where = self.yaml.key_span("autograd") or self.yaml.anchor
        name = f"Autograd{s.value}" if s.kind == "scalar" else None
        key = self.parse_key(name)
        if key is None:
            shown = name or f"Autograd<{s.kind}>"
            self.add("OPG511", where, f"'autograd:' registers kernels to the key Autograd<backend>, and '{shown}' is "
                                      "not a dispatch key (torchgen: However \"" + shown + "\" is not a valid "
                                      "DispatchKey)")
            return None
        if key in self.native.backend_indices:
            self.add("OPG510", where, f"native_functions.yaml already has kernels for '{key}' (torchgen: Duplicate "
                                      f"autograd key: {key})")
        return key

    def parse_key(self, value: object) -> dk.DispatchKey | None:
        """A key by name as the release's torchgen parses it (its DispatchKey lacks some of the newest's)."""
        if isinstance(value, str) and value in self.release.dispatch_key_names_unknown:
            return None
        return parse_dispatch_key(value)

    # ------------------------------------------------------------ ops

    def kernels(self, listed: Iterable[ListedOp], symint_texts: frozenset[str], cpp_namespace: str
                ) -> dict[OperatorName, BackendMetadata]:
        out: dict[OperatorName, BackendMetadata] = {}
        for item in listed:
            if item.name is None:
                continue  # not a valid name: reported while lowering
            f = self.functions.get(item.name)
            if f is None and self.native.may_lie_past_the_cut(str(item.name)):
                continue  # native_functions.yaml was read only in part: it may declare the op past the cut
            if f is None:
                hint, data = self.suggest(item.name, item.text or "")
                moved = migration_note(str(item.name), self.release)
                if moved is not None:
                    self.add("OPG952", item.span, f"{moved}: its native_functions.yaml declares no such op{hint} "
                                                  f"(torchgen: Found an invalid operator name: {item.name})",
                             data=data)
                    continue
                self.add("OPG509", item.span, f"unknown operator '{item.text}': native_functions.yaml declares no op "
                                              f"with this name and overload{hint} (torchgen: Found an invalid "
                                              f"operator name: {item.name})", data=data)
                continue
            symint = item.text in symint_texts
            if not self.yaml.experimental:
                out[item.name] = BackendMetadata(external_kernel_name(f, symint), False, cpp_namespace)
                continue
            structured = item.structured and self.structured_ok(item, f)
            kernel = str(f.func.name).replace(".", "_") + ("_symint" if symint else "") if structured \
                else external_kernel_name(f, symint)
            guard = self.yaml.device_guard if item.device_guard is None else item.device_guard
            out[item.name] = BackendMetadata(kernel, structured, cpp_namespace, guard, item.define_meta and structured)
        return out

    def structured_ok(self, item: ListedOp, f: NativeFunction) -> bool:
        """`structured: true` on an op (--experimental): what the proposal's generator asserts, and what it would
        write nothing sensible for. An error (OPG516) when not; a warning when the option changes nothing."""
        problem = None
        backend = self.yaml.backend.value
        if not f.structured:
            problem = (f"'{item.text}' is marked 'structured: true', but native_functions.yaml does not declare it "
                       f"a structured operator (only the out= variant of a structured op is) ({PROPOSAL}: it is "
                       "not defined as a structured operator in native_functions.yaml)")
        elif item.section != "supported" or backend != "PrivateUse1":
            key = f"Autograd{backend}" if item.section == "autograd" else backend
            problem = (f"'{item.text}': structured kernels of an external backend are generated for PrivateUse1 "
                       f"under 'supported' only, not for {key} ({PROPOSAL}: Unexpected dispatch key {key} for "
                       "functional schema)")
        elif item.define_meta and f.precomputed is not None:
            problem = (f"'{item.text}' has precomputed meta values, so its meta() returns a struct that a "
                       "backend's own 'void meta(...)' cannot replace; the proposal has no output for "
                       "'ext_structured_meta' on such an op (opgen refuses it rather than guess)")
        if problem is not None:
            self.add("OPG516", item.span, problem)
            return False
        if not self.yaml.use_out_as_primary:
            self.add("OPG516", item.span, f"'structured: true' on '{item.text}' changes nothing while "
                                          "use_out_as_primary is false: the functional variant is then the group's "
                                          "kernel, and the out= kernel is registered unstructured", warning=True)
        return True

    def listed_twice(self, listed: Iterable[ListedOp], what: str) -> None:
        first: dict[object, ListedOp] = {}
        for item in listed:
            key = item.name if item.name is not None else item.text
            if key is None:
                continue
            if key in first:
                earlier = first[key]
                self.add("OPG520", item.span, f"'{item.text}' is already listed under '{earlier.section}' (line "
                                              f"{earlier.span.start_line + 1}); {what}")
            else:
                first[key] = item

    def split_groups(self, forward: dict[OperatorName, BackendMetadata],
                     backward: dict[OperatorName, BackendMetadata]) -> None:
        if not forward or not backward:
            return
        first_listing: dict[tuple[str, OperatorName], ListedOp] = {}
        for item in self.yaml.forward + self.yaml.autograd:
            if item.name is not None:
                side = "autograd" if item.section == "autograd" else "forward"
                first_listing.setdefault((side, item.name), item)
        for g in self.native.groups:
            fs = g.functions() if isinstance(g, NativeFunctionsGroup) else (g,)
            fwd = [f.func.name for f in fs if f.func.name in forward]
            bwd = [f.func.name for f in fs if f.func.name in backward]
            if not fwd or not bwd:
                continue
            other = first_listing[("forward", fwd[0])]
            variants = ", ".join(str(f.func.name) for f in fs)
            for name in bwd:
                item = first_listing[("autograd", name)]
                if name == fwd[0]:
                    what = (f"'{name}' is listed under 'autograd', but also under '{other.section}' (line "
                            f"{other.span.start_line + 1}); an op goes either to the backend key or to its "
                            "autograd key, not both")
                else:
                    what = (f"'{name}' is listed under 'autograd', but '{fwd[0]}', a variant of the same op, is "
                            f"listed under '{other.section}' (line {other.span.start_line + 1}); all variants of "
                            f"an op ({variants}) go either to the backend key or to its autograd key, not split "
                            "between them")
                self.add("OPG512", item.span, f"{what} (torchgen: {forward[fwd[0]].kernel} is listed under "
                                              f"\"supported\", but {backward[name].kernel} is listed under "
                                              "\"autograd\")")

    def symint(self, forward: dict[OperatorName, BackendMetadata], backward: dict[OperatorName, BackendMetadata],
               generates: bool) -> None:
        listed_texts = {item.text for item in self.yaml.forward + self.yaml.autograd if item.text is not None}
        key = self.yaml.backend.value
        for item in self.yaml.symint:
            if item.text is None or item.name is None:
                continue  # reported while lowering
            f = self.functions.get(item.name)
            if item.text not in listed_texts:
                unknown = ""
                data: tuple[tuple[str, str], ...] = ()
                if f is None:
                    hint, data = self.suggest(item.name, item.text)
                    unknown = f"; native_functions.yaml declares no op '{item.text}' either{hint}"
                self.add("OPG522", item.span, f"'{item.text}' under 'symint' is not listed under 'supported', "
                                              f"'full_codegen' or 'autograd' (written the same way), so it changes "
                                              f"no kernel{unknown}", data=data)
                continue
            if f is None or f.func.has_symint(returns_too=self.release.cpp_spelling.symint_returns_follow_signature):
                continue
            if not (item.name in forward and forward[item.name].supports_symint()
                    or item.name in backward and backward[item.name].supports_symint()):
                continue
            message = (f"'{item.text}' is listed under 'symint', but its schema has no SymInt argument, so there is "
                       f"no SymInt signature for its kernel (torchgen: attempted to define symint kernel for {key} "
                       "without SymInt in schema); remove it from 'symint'")
            if not generates:
                message += ". torchgen does not notice while no ops are listed under supported or full_codegen"
            self.add("OPG513", item.span, message, warning=not generates)

    def wrappers(self, kernels: dict[OperatorName, BackendMetadata], listed: tuple[ListedOp, ...],
                 generates: bool) -> None:
        """Variants torchgen wraps around the functional kernel (use_out_as_primary: false), where it cannot."""
        if self.yaml.use_out_as_primary or not kernels:
            return
        first: dict[OperatorName, ListedOp] = {}
        for item in listed:
            if item.name is not None:
                first.setdefault(item.name, item)
        for g in self.native.groups:
            if not isinstance(g, NativeFunctionsGroup) or g.functional.func.name not in kernels:
                continue
            for f in g.functions():
                if f is g.functional or f.func.name in kernels or f.manual_kernel_registration:
                    continue
                problem = wrapper_problem(f, self.release)
                if problem is None:
                    continue
                why, fact = problem
                item = first[g.functional.func.name]
                message = (f"'{item.text}' is listed without its variant '{f.func.name}': with use_out_as_primary "
                           f"false, torchgen generates a kernel for '{f.func.name}' that calls the functional one, "
                           f"but cannot for this variant, since {why}. List '{f.func.name}' too, or set "
                           f"use_out_as_primary: true (torchgen: {fact})")
                if not generates:
                    message += ". torchgen does not notice while no ops are listed under supported or full_codegen"
                self.add("OPG514", item.span, message, warning=not generates)

    def proposal_wrappers(self, key: dk.DispatchKey | None, kernels: dict[OperatorName, BackendMetadata]) -> None:
        """--experimental, PrivateUse1 with use_out_as_primary: the proposal derives a functional kernel from an
        unstructured out= one, and refuses an op of several outputs (their dtypes differ)."""
        if key is None or key.name != "PrivateUse1" or not self.yaml.use_out_as_primary:
            return
        first = {item.name: item for item in reversed(self.yaml.forward) if item.name is not None}
        for g in self.native.groups:
            if not isinstance(g, NativeFunctionsGroup) or g.out.func.name not in kernels:
                continue
            meta = kernels[g.out.func.name]
            f = g.functional
            if meta.structured or first[g.out.func.name].structured or f.func.name in kernels \
                    or f.manual_kernel_registration or len(f.func.returns) < 2 \
                    or any(a.type.is_list_like() for a in g.out.func.arguments.out):
                continue  # (a structured listing that is refused has its own OPG516)
            self.add("OPG516", first[g.out.func.name].span,
                     f"'{g.out.func.name}' is an op of {len(f.func.returns)} outputs listed by its out= variant alone: "
                     f"the proposal derives '{f.func.name}' from it with every output of the input's dtype, which "
                     "is wrong for mixed outputs (an index is Long); list the functional variant too, or mark the "
                     f"out= variant 'structured: true' ({PROPOSAL}: a multi-output op registered out-as-primary via "
                     "its '.out' only)")
        self.derived_dtypes(kernels, first)

    def derived_dtypes(self, kernels: dict[OperatorName, BackendMetadata], first: dict[OperatorName, ListedOp]
                       ) -> None:
        """A warning (OPG518) on each out= op whose functional kernel the proposal derives: it makes the output
        with an argument's options, so of that argument's dtype. native_functions.yaml states no op's result
        dtype (a meta function or TensorIterator computes it at run time), so no op can be shown safe."""
        for g in self.native.groups:
            if not isinstance(g, NativeFunctionsGroup) or g.out.func.name not in kernels:
                continue
            f = g.functional
            if kernels[g.out.func.name].structured or first[g.out.func.name].structured \
                    or f.func.name in kernels or f.manual_kernel_registration or len(f.func.returns) != 1 \
                    or any(a.type.is_list_like() for a in g.out.func.arguments.out):
                continue  # its own kernel, a structured class, or refused (OPG516)
            template = allocation_template(f)
            if template is None:
                continue  # a factory's own options carry its dtype
            remedy = " or mark the out= variant 'structured: true' (its meta() sets the dtype)" if g.structured \
                else ""
            self.add("OPG518", first[g.out.func.name].span,
                     f"'{g.out.func.name}' is listed without its functional variant '{f.func.name}': the proposal "
                     f"derives that kernel from the out= one with an output made by at::empty({{0}}) with "
                     f"{template.name}'s options, so of {template.name}'s dtype, while the op's result dtype is "
                     "computed at run time and native_functions.yaml does not say it is that one (a comparison "
                     "gives bool, argmax long, integer true division float, mixed inputs their promoted dtype); the "
                     "out= kernel then writes into, or rejects, an output of the wrong dtype. List "
                     f"'{f.func.name}' with a kernel of its own{remedy}", warning=True)

    def generated_keys(self, key: dk.DispatchKey | None, kernels: dict[OperatorName, BackendMetadata]) -> None:
        if key is None or key.name not in ("Meta", "CompositeExplicitAutogradNonFunctional"):
            return
        first: dict[OperatorName, ListedOp] = {}
        for item in self.yaml.forward:
            if item.name is not None:
                first.setdefault(item.name, item)
        for g in self.native.groups:
            if isinstance(g, NativeFunctionsGroup) and g.structured and g.out.func.name in kernels:
                item = first[g.out.func.name]
                named = "Meta" if key.name == "Meta" else "CompositeExplicitAutograd"
                self.add("OPG515", item.span, f"'{item.text}' is the out= variant of a structured op, whose {key} "
                                              "kernels the codegen generates itself; do not list it (torchgen: Do "
                                              f"not explicitly specify {named} dispatch key on structured functions)")

    def registration_warnings(self, forward: dict[OperatorName, BackendMetadata]) -> None:
        warned: set[OperatorName] = set()
        for item in self.yaml.forward:
            if item.name is None or item.name not in forward or item.name in warned:
                continue
            warned.add(item.name)
            f = self.functions[item.name]
            if f.has_composite_implicit_autograd_kernel:
                self.add("OPG521", item.span,
                         f"'{item.text}' is CompositeImplicitAutograd, so it has no backward of its own: a kernel "
                         f"under '{item.section}' replaces its decomposition on this backend, and autograd no longer "
                         "differentiates through it. List it under 'autograd' if the kernel handles autograd itself, "
                         "or drop it to keep the decomposition (torchgen accepts this silently)")
            if f.manual_kernel_registration:
                self.add("OPG526", item.span,
                         f"'{item.text}' has manual_kernel_registration in native_functions.yaml: torchgen declares "
                         "its kernel but never registers it, so this listing has no effect at runtime")

    def ir_gen(self) -> None:
        for item in self.yaml.ir_gen:
            if (item.name is not None and item.name not in self.functions
                    and not self.native.may_lie_past_the_cut(str(item.name))):
                hint, data = self.suggest(item.name, item.text or "")
                self.add("OPG528", item.span, f"unknown operator '{item.text}' under 'ir_gen'{hint}; gen_backend_stubs "
                                              "ignores ir_gen, but gen_lazy_tensor rejects it", data=data)

    def listings(self) -> dict[OperatorName, tuple[ListedOp, ...]]:
        out: dict[OperatorName, list[ListedOp]] = {}
        y = self.yaml
        for item in sorted(y.supported + y.full_codegen + y.autograd + y.symint + y.ir_gen, key=lambda i: i.span):
            if item.name is not None and item.name in self.functions:
                out.setdefault(item.name, []).append(item)
        return {name: tuple(items) for name, items in out.items()}


def external_kernel_name(f: NativeFunction, symint: bool) -> str:
    """The kernel gen_backend_stubs names for a listed op: its dispatcher name (`add_out` for `add.out`), plus
    `_symint` when the op is also listed under symint:."""
    return str(f.func.name.name) + ("_out" if f.func.is_out_fn() else "") + ("_symint" if symint else "")


def wrapper_problem(f: NativeFunction, release: Release) -> tuple[str, str] | None:
    """Why torchgen cannot generate the out=/in-place wrapper of `f` around its functional kernel (and its words)."""
    kind = f.func.kind()
    if kind is SchemaKind.mutable:
        return "it is a mutable variant", "gen_out_inplace_wrapper called on a functional op"
    if kind not in (SchemaKind.inplace, SchemaKind.out):
        return None
    returns, outs = len(f.func.returns), len(f.func.arguments.out)
    if f.func.name.name.inplace and returns > 1:
        return "it is in-place with several returns", "illegal inplace function with multiple returns"
    if returns == 0 and not release.out_wrappers_handle_no_returns:
        return "it returns nothing", f"torch {release.series}'s gen_out_inplace_wrapper fails: IndexError: list index out of range"
    if returns == 0 and outs != 1:
        return f"it returns nothing and has {outs} out arguments", f"Expected exactly 1 out argument, got {outs}"
    return None


def allocation_template(f: NativeFunction) -> Argument | None:
    """The tensor argument whose options pytorch#172539's derived functional kernel makes its outputs with: self,
    else the first tensor argument; None for a factory (its own TensorOptions) or an op of no tensor argument."""
    args = f.func.arguments
    if args.tensor_options is not None:
        return None
    self_arg = args.self_arg.argument if args.self_arg is not None else None
    if self_arg is not None and self_arg.type.is_tensor_like():
        return self_arg
    return next((a for a in args.flat_non_out if a.type.is_tensor_like()), None)


def resolve_backend(yaml: BackendYaml, native: NativeFunctions, release: Release
                    ) -> tuple[ResolvedBackend, tuple[Diagnostic, ...]]:
    """The backend's indices as torchgen builds them (for `release`), and every problem found on the way."""
    r = _Resolver(yaml, native, release)
    generates = yaml.generates
    backend_key = r.key(generates)
    autograd_key = r.autograd_key()
    symint_texts = frozenset(item.text for item in yaml.symint if item.text is not None)
    ns = yaml.cpp_namespace.value
    cpp_namespace = ns if isinstance(ns, str) else "" if ns is None else str(ns)
    forward = r.kernels(yaml.forward, symint_texts, cpp_namespace)
    backward = r.kernels(yaml.autograd, symint_texts, cpp_namespace)
    r.listed_twice(yaml.forward, "torchgen keeps one kernel for it")
    r.listed_twice(yaml.autograd, "torchgen keeps one kernel for it")
    r.listed_twice(yaml.symint, "the second entry changes nothing")
    r.split_groups(forward, backward)
    r.symint(forward, backward, generates)
    r.wrappers(forward, yaml.forward, generates)
    r.wrappers(backward, yaml.autograd, generates)
    if generates:
        r.generated_keys(backend_key, forward)
        if yaml.experimental:
            r.proposal_wrappers(backend_key, forward)
    r.registration_warnings(forward)
    r.ir_gen()

    def index(key: dk.DispatchKey | None, kernels: dict[OperatorName, BackendMetadata]) -> BackendIndex | None:
        if key is None:
            return None
        return BackendIndex(key, use_out_as_primary=yaml.use_out_as_primary, device_guard=yaml.device_guard,
                            external=True, index=kernels)

    backend_index = index(backend_key, forward) if generates else None
    autograd_index = index(autograd_key, backward) if yaml.autograd else None
    class_name = yaml.class_name.value
    if class_name is None:
        class_name = f"{backend_key}NativeFunctions" if backend_key is not None and generates else None
    elif not isinstance(class_name, str):
        class_name = str(class_name)
    resolved = ResolvedBackend(yaml, backend_key if generates else None, autograd_key, class_name, backend_index,
                               autograd_index, forward, backward, r.listings())
    return resolved, tuple(r.diagnostics)
