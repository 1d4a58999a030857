"""Declarations.yaml: one legacy description per operator (names, C++ types, defaults, returns, flags).

Each entry is an ordered mapping (its keys keep this order); the argument and
return mappings inside are plain dicts, which the YAML dump sorts by key, as
gen.py's does. The text is what PyYAML's C dumper writes with gen.py's settings: block_yaml writes it
directly, and PyYAML dumps what block_yaml does not cover.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterable

from ...frozen import PER_OP_MEMO
from ...model.native_function import NativeFunction, Variant
from ...model.schema import Argument, OptionalType, TensorOptionsArguments, Type
from ...releases.profile import CppSpelling
from ..api import cpp
from ..api.signatures import CppSignatureGroup
from ..api.types import ApiOptions, Binding, spelled_default
from .block_yaml import Unsupported, block_yaml


def pythonify_default(s: str) -> object:
    """Defaults that read as YAML booleans or numbers are written as such."""
    if s in ("true", "false"):
        return s == "true"
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def dynamic_type(t: Type, options: ApiOptions) -> str:
    if isinstance(t, OptionalType):
        return dynamic_type(t.elem, options)
    if str(t) == "Tensor":
        return "at::Tensor"
    return cpp.argumenttype_type(t, mutable=False, binds="__placeholder__", options=options, symint=False).cpp_type(
        options.spelling)


def method_of(f: NativeFunction) -> list[str]:
    return ["Type"] + (["Tensor"] if Variant.method in f.variants else []) + \
        (["namespace"] if Variant.function in f.variants else [])


def returns_yaml(f: NativeFunction, options: ApiOptions) -> tuple[list[dict], dict[str, str]]:
    field_names: dict[str, str] = {}
    out = []
    for i, (r, name) in enumerate(zip(f.func.returns, cpp.return_names(f.func))):
        ret = {"dynamic_type": dynamic_type(r.type, options), "name": name,
               "type": cpp.return_type(r, options=options, symint=False).cpp_type(options.spelling)}
        if r.name:
            ret["field_name"] = r.name
            if f.func.is_out_fn():
                field_names[f.func.arguments.out[i].name] = r.name
        out.append(ret)
    return out, field_names


def argument_yaml(a: Argument, options: ApiOptions, kwarg_only: set[str], outs: set[str],
                  field_names: dict[str, str], qualified_memory_format: bool) -> dict:
    arg: dict[str, object] = {
        "annotation": str(a.annotation) if a.annotation else None,
        "dynamic_type": dynamic_type(a.type, options),
        "is_nullable": a.type.is_nullable(),
        "name": a.name,
        "type": cpp.argument_type(a, binds="__placeholder__", options=options, symint=False).cpp_type(options.spelling),
    }
    if a.default is not None:
        arg["default"] = pythonify_default(spelled_default(cpp.default_expr(a.default, a.type, symint=False,
                                                                           spelling=options.spelling),
                                                          qualified_memory_format))
    if a.name in kwarg_only:
        arg["kwarg_only"] = True
    if a.name in outs:
        arg["output"] = True
        arg["allocate"] = True
        if a.name in field_names:
            arg["field_name"] = field_names[a.name]
    lst = a.type.is_list_like()
    if lst is not None and lst.size is not None and str(lst.elem) != "bool":
        arg["size"] = lst.size
    return arg


def _cpp_argument_yaml(b: Binding, options: ApiOptions, kwarg_only: set[str], outs: set[str],
                       field_names: dict[str, str], qualified_memory_format: bool) -> dict:
    if isinstance(b.argument, TensorOptionsArguments):
        arg: dict[str, object] = {"annotation": None, "dynamic_type": "at::TensorOptions", "is_nullable": False,
                                  "name": b.name, "type": b.type, "kwarg_only": True}
        if b.default is not None:
            arg["default"] = b.default
        return arg
    if not isinstance(b.argument, Argument):
        raise ValueError(f"unexpected C++ argument {b.name}")
    return argument_yaml(b.argument, options, kwarg_only, outs, field_names, qualified_memory_format)


def compute_declaration_yaml(f: NativeFunction, qualified_memory_format: bool, spelling: CppSpelling
                             ) -> OrderedDict:  # not cached: its text is
    options = ApiOptions.of(f, spelling)
    returns, field_names = returns_yaml(f, options)
    kwarg_only = {a.name for a in f.func.arguments.flat_kwarg_only}
    outs = {a.name for a in f.func.arguments.out}
    cpp_args = CppSignatureGroup.from_native_function(f, method=False, spelling=spelling).signature.arguments()
    jit_args = list(f.func.schema_order_arguments())
    schema_types = [b.type for a in jit_args for b in cpp.argument(
        a, cpp_no_default_args=frozenset(), method=False, faithful=False, symint=False, has_tensor_options=False,
        options=options)]
    cpp_returns = cpp.returns_type(f.func.returns, options=options, symint=False).cpp_type(spelling)  # SymInt from 2.1
    is_factory = any(isinstance(b.argument, TensorOptionsArguments) for b in cpp_args) \
        and Variant.method not in f.variants
    return OrderedDict([
        ("name", cpp.name(f.func)),
        ("operator_name", str(f.func.name.name)),
        ("overload_name", str(f.func.name.overload_name)),
        ("manual_kernel_registration", f.manual_kernel_registration),
        ("category_override", f.category_override if f.category_override is not None else ""),
        ("schema_string", f"aten::{f.func}"),
        ("arguments", [_cpp_argument_yaml(b, options, kwarg_only, outs, field_names, qualified_memory_format)
                       for b in cpp_args]),
        ("schema_order_cpp_signature", f"{cpp_returns} ({', '.join(schema_types)})"),
        ("schema_order_arguments", [argument_yaml(a, options, kwarg_only, outs, field_names, qualified_memory_format)
                                    for a in jit_args]),
        ("method_of", method_of(f)),
        ("mode", "native"),
        ("python_module", "" if f.python_module is None else f.python_module),
        ("returns", returns),
        ("inplace", f.func.name.name.inplace),
        ("is_factory_method", is_factory),
        ("abstract", f.is_abstract),
        ("device_guard", f.device_guard),
        ("with_gil", False),
        ("deprecated", False),
        ("has_math_kernel", f.has_composite_implicit_autograd_kernel),
    ])


@functools.lru_cache(maxsize=1)  # (one value: made once, on first use)
def _dumper() -> type:
    """gen.py's dumper: no anchors/aliases, ordered mappings kept in order; libyaml's when PyYAML was built with it.
    Made on first use: PyYAML loads only for a run that writes Declarations.yaml (not one an edit leaves as it was)."""
    import yaml  # noqa: PLC0415

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[valid-type,misc]
        def ignore_aliases(self, data: object) -> bool:
            return True

    Dumper.add_representer(OrderedDict, lambda dumper, data: dumper.represent_dict(data.items()))
    return Dumper


def format_yaml(data: object) -> str:
    import yaml  # noqa: PLC0415

    return yaml.dump(data, default_flow_style=False, Dumper=_dumper(), width=1e9)


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_declaration_yaml_text(f: NativeFunction, qualified_memory_format: bool, spelling: CppSpelling) -> str:
    """One op's item of the top-level YAML list; the file is these items in order (no aliases, so they
    concatenate to exactly the dump of the whole list). Defaults as types.spelled_default says."""
    entry = [compute_declaration_yaml(f, qualified_memory_format, spelling)]
    try:
        return block_yaml(entry, format_yaml)
    except Unsupported:
        return format_yaml(entry)


def declarations_yaml_text(items: Iterable[str]) -> str:
    """The file of the ops' items (compute_declaration_yaml_text's), in order."""
    return "".join(items) or format_yaml([])
